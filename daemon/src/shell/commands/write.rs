//! `write <path> <content>` and `write <path> <<'EOF' … EOF`: create or replace a file
//! atomically, creating parent folders. With an editor attached that offered its files, a file
//! inside the session's folder is written through it (the editor records the change; the diff
//! is against its buffer); an editor that is gone leaves the write to the disk.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use synapse_command::file_change::{DIFF_INPUT_MAX_BYTES, FileChange};

use futures::future::BoxFuture;
use synapse_command::editor_files::{EditorError, EditorFiles, disk_fallback_notice};

use crate::shell::commands::read::io_reason;
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

pub static SPEC: CommandSpec = CommandSpec {
    name: "write",
    usage: "write <path> <content>  |  write <path> <<'EOF' … EOF",
    summary: "Create or overwrite a file with the given content (parent folders are created).",
    help: "\
Arguments:
  <path>        file to write; relative paths start from the shell's current directory
  <content>     the whole new content, as ONE shell word (quote it)

<content> is written as the shell gives it ('\\n' stays literal; $'a\\nb' is two lines). Nothing
is added: no final newline unless you write one. Without <content>, stdin is written.

For code or any text with backslashes or quotes, use the heredoc form; its body is written
exactly as given (no escapes, no $variables), with a newline after each line:
  write src/app.py <<'EOF'
  print(\"hello\\n\")
  EOF

The file is replaced atomically; an existing file keeps its permissions. Everything after
<path> is content: `write f \"--help\"` writes the text --help.",
};

pub struct WriteCommand;

impl AgentCommand for WriteCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Edit
    }

    fn effect(
        &self,
        args: &[String],
        at: &crate::shell::PathResolver<'_>,
    ) -> synapse_command::gate::Effect {
        synapse_command::gate::writes_to(path_word(args).map(String::as_str), at)
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let Some((path, rest)) = split_path(&args) else {
                return SPEC.usage_error("missing <path>");
            };
            let path = path.clone();
            let content = match (rest, ctx.stdin()) {
                ([], Some(body)) => body.to_owned(),
                ([one], None) => one.clone(),
                ([], None) => return SPEC.usage_error("missing <content>"),
                (_, Some(_)) => {
                    return SPEC.usage_error(
                        "give the content either as an argument or as a heredoc, not both",
                    );
                }
                (many, None) => {
                    return SPEC.usage_error(format!(
                        "expected one <content> word after the path, got {}; quote the content",
                        many.len()
                    ));
                }
            };
            let abs = ctx.resolve(&path);
            if let Some(editor) = ctx.editor_for(&abs).filter(|_| !abs.is_dir()) {
                return write_through(editor, abs, path, content).await;
            }
            SPEC.off_thread(move || write_file(&abs, &path, content.as_bytes()))
                .await
        })
    }
}

/// The path word (the first word, or the one after a leading `--`: a path may start with `-`)
/// and the words after it.
fn split_path(args: &[String]) -> Option<(&String, &[String])> {
    match args {
        [dashes, path, rest @ ..] if dashes == "--" => Some((path, rest)),
        [dashes] if dashes == "--" => None,
        [path, rest @ ..] => Some((path, rest)),
        [] => None,
    }
}

/// The file `write` with these words changes.
pub(super) fn path_word(args: &[String]) -> Option<&String> {
    split_path(args).map(|(path, _)| path)
}

/// `write`'s words (and heredoc) as Claude Code's `Write` tool input (for hooks).
pub(super) fn claude_input(
    args: &[String],
    stdin: Option<&str>,
    abs: &dyn Fn(&str) -> String,
) -> Option<serde_json::Value> {
    let (path, rest) = split_path(args)?;
    let content = match (rest, stdin) {
        ([], Some(body)) => body.to_owned(),
        ([one], None) => one.clone(),
        _ => return None,
    };
    Some(serde_json::json!({ "file_path": abs(path), "content": content }))
}

/// Writes `content` to the editor's file `abs`: what the editor holds now is the diff's before
/// (a file it cannot read is a new one); the parent folders are made on disk first. An editor
/// that is gone leaves it to [`write_file`], with a notice.
pub async fn write_through(
    editor: &dyn EditorFiles,
    abs: PathBuf,
    shown: String,
    content: String,
) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("write: {msg}"), 1);
    let (before, gone) = match editor.read(&abs).await {
        Ok(text) => (Some(text), None),
        // A file the editor has no buffer of: what the disk holds is the before.
        Err(EditorError::Refused(_)) => (text_on_disk(&abs), None),
        Err(EditorError::Gone(why)) => (None, Some(why)),
    };
    let gone = match gone {
        Some(why) => Some(why),
        None => {
            if let Some(parent) = abs.parent().map(Path::to_path_buf) {
                let made = tokio::task::spawn_blocking({
                    let parent = parent.clone();
                    move || std::fs::create_dir_all(parent)
                })
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)));
                if let Err(e) = made {
                    return fail(format!(
                        "cannot create folder {}: {}",
                        parent.display(),
                        io_reason(&e)
                    ));
                }
            }
            match editor.write(&abs, &content).await {
                Ok(()) => {
                    let existed = before.is_some() || abs.exists();
                    let change = FileChange::between(
                        &shown,
                        before.as_deref().unwrap_or_default(),
                        &content,
                    );
                    return CommandOutput::success(report(existed, &shown, content.as_bytes()))
                        .with_change(change);
                }
                Err(EditorError::Refused(why)) => {
                    return fail(format!("{shown}: the editor could not write it: {why}"));
                }
                Err(EditorError::Gone(why)) => Some(why),
            }
        }
    };
    let notice = disk_fallback_notice("wrote", gone.as_deref().unwrap_or_default());
    let mut out = SPEC
        .off_thread(move || write_file(&abs, &shown, content.as_bytes()))
        .await;
    out.text.push('\n');
    out.text.push_str(&notice);
    out
}

/// The text of the regular file `abs` when it is small enough to diff.
fn text_on_disk(abs: &Path) -> Option<String> {
    let meta = std::fs::metadata(abs).ok()?;
    if !meta.is_file() || meta.len() as usize > DIFF_INPUT_MAX_BYTES {
        return None;
    }
    synapse_shared::bounded::read_bytes(abs, None, DIFF_INPUT_MAX_BYTES as u64)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

/// `Created a.txt (3 lines, 8 bytes)` / `Overwrote …`.
fn report(existed: bool, shown: &str, content: &[u8]) -> String {
    let lines = if content.is_empty() {
        0
    } else {
        content.iter().filter(|&&b| b == b'\n').count() + usize::from(!content.ends_with(b"\n"))
    };
    let verb = if existed { "Overwrote" } else { "Created" };
    format!(
        "{verb} {shown} ({lines} line{}, {} bytes)",
        if lines == 1 { "" } else { "s" },
        content.len()
    )
}

/// Writes `content` to `abs` (through a symlink to its target), creating parents.
pub fn write_file(abs: &Path, shown: &str, content: &[u8]) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("write: {msg}"), 1);
    let target: PathBuf = match std::fs::canonicalize(abs) {
        Ok(real) => real,
        Err(_) => abs.to_path_buf(),
    };
    let existing = std::fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return fail(format!("{shown} is a directory"));
    }
    if let Some(parent) = target.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return fail(format!(
            "cannot create folder {}: {}",
            parent.display(),
            io_reason(&e)
        ));
    }
    let mode = existing
        .as_ref()
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o644);
    // What the file held, for the user's diff: a regular text file small enough to diff (a
    // FIFO or a device is never opened: the write replaces it without reading it, as before).
    let before = match &existing {
        None => Some(String::new()),
        Some(m) if m.is_file() && (m.len() as usize) <= DIFF_INPUT_MAX_BYTES => {
            synapse_shared::bounded::read_bytes(&target, None, DIFF_INPUT_MAX_BYTES as u64)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        }
        Some(_) => None,
    };
    if let Err(e) = synapse_shared::atomic::write_atomic_mode(&target, content, mode) {
        return fail(format!("{shown}: {}", io_reason(&e)));
    }
    let change = before
        .zip(std::str::from_utf8(content).ok())
        .and_then(|(before, after)| FileChange::between(shown, &before, after));
    CommandOutput::success(report(existing.is_some(), shown, content)).with_change(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_word_is_the_one_run_writes() {
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(path_word(&words(&["a", "b"])).unwrap(), "a");
        assert_eq!(path_word(&words(&["-../../x", "b"])).unwrap(), "-../../x");
        assert_eq!(path_word(&words(&["--", "--", "b"])).unwrap(), "--");
        assert_eq!(path_word(&words(&["--"])), None);
    }

    #[test]
    fn creates_parents_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d/e/a.txt");
        let out = write_file(&p, "d/e/a.txt", b"L1\nL2\nL2");
        assert_eq!(out.text, "Created d/e/a.txt (3 lines, 8 bytes)");
        assert_eq!(std::fs::read(&p).unwrap(), b"L1\nL2\nL2");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = write_file(&p, "a", b"x\n");
        assert_eq!(out.text, "Overwrote a (1 line, 2 bytes)");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let out = write_file(dir.path(), "dir", b"x");
        assert_eq!(
            (out.exit_code, out.text.as_str()),
            (1, "write: dir is a directory")
        );
    }

    #[test]
    fn a_write_over_a_fifo_replaces_it_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || tx.send(write_file(&path, "pipe", b"x\n")));
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("write must not open the FIFO to read it");
        assert_eq!(out.exit_code, 0, "{}", out.text);
        assert_eq!(std::fs::read_to_string(&fifo).unwrap(), "x\n");
    }
}

#[cfg(test)]
#[path = "editor_files_tests.rs"]
mod editor_files_tests;
