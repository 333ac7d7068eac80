//! `edit <path> <old> <new> [--all]`: literal search and replace, all or nothing. With an
//! editor attached that offered its files, a file inside the session's folder is read and
//! written through it (the edit applies to its unsaved buffer); an editor that is gone leaves
//! the edit to the disk.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use futures::future::BoxFuture;
use synapse_command::editor_files::{EditorError, EditorFiles, disk_fallback_notice};

use crate::shell::commands::read::io_reason;
use synapse_command::args::{self, OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Line numbers listed in a report before "…".
const LINES_LISTED_MAX: usize = 10;

pub static SPEC: CommandSpec = CommandSpec {
    name: "edit",
    usage: "edit <path> <old> <new> [--all]",
    summary: "Replace exact text in a file; fails without changing anything if <old> is absent or not unique.",
    help: "\
Arguments:
  <path>        file to change; relative paths start from the shell's current directory
  <old>         the exact text to replace (whitespace and indentation included)
  <new>         the replacement
  --all         replace every occurrence instead of requiring exactly one

The match is literal, not a regex. If <old> occurs nowhere, or more than once without --all,
the file is left untouched and the error says where it occurs; add surrounding lines to <old>
to make it unique. The result says how many replacements were made and on which lines.

<old> and <new> are taken as the shell gives them ('\\n' stays literal; $'a\\nb' has a
newline). In a CRLF file a newline in <old> also matches \\r\\n. Put -- before <old> if it
starts with a dash.

Examples:
  edit src/lib.rs 'fn old_name(' 'fn new_name('
  edit notes.md \"- [ ] ship\" \"- [x] ship\" --all",
};

pub struct EditCommand;

impl AgentCommand for EditCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Edit
    }

    fn effect(
        &self,
        args: &[String],
        at: &crate::shell::PathResolver<'_>,
    ) -> synapse_command::gate::Effect {
        synapse_command::gate::writes_to(path_word(args).as_deref(), at)
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
            let parsed = match parse_args(args) {
                Ok(p) => p,
                Err(e) => return SPEC.usage_error(e),
            };
            let [path, old, new] = parsed.positionals.as_slice() else {
                let missing = ["<path>", "<old>", "<new>"];
                let n = parsed.positionals.len();
                return SPEC.usage_error(if n < 3 {
                    format!("missing {}", missing[n..].join(" "))
                } else {
                    format!("expected <path> <old> <new>, got {n} words; quote each text")
                });
            };
            let abs = ctx.resolve(path);
            let (shown, old, new, all) =
                (path.clone(), old.clone(), new.clone(), parsed.flag("--all"));
            let edit = Edit {
                shown,
                old,
                new,
                all,
            };
            if let Some(editor) = ctx.editor_for(&abs).filter(|_| !abs.is_dir()) {
                return edit_through(editor, abs, edit).await;
            }
            SPEC.off_thread(move || edit_file(&abs, &edit.shown, &edit.old, &edit.new, edit.all))
                .await
        })
    }
}

fn parse_args(args: Vec<String>) -> Result<args::Parsed, String> {
    args::parse(args, &[OptSpec::flag("--all")], UnknownOpts::Positional)
}

/// `edit`'s words as Claude Code's `Edit` tool input (for hooks).
pub(super) fn claude_input(
    args: &[String],
    abs: &dyn Fn(&str) -> String,
) -> Option<serde_json::Value> {
    let parsed = parse_args(args.to_vec()).ok()?;
    let [path, old, new] = parsed.positionals.as_slice() else {
        return None;
    };
    Some(serde_json::json!({
        "file_path": abs(path),
        "old_string": old,
        "new_string": new,
        "replace_all": parsed.flag("--all"),
    }))
}

/// The file `edit` with these words changes: its first positional word.
pub(super) fn path_word(args: &[String]) -> Option<String> {
    parse_args(args.to_vec())
        .ok()?
        .positionals
        .into_iter()
        .next()
}

/// The largest file `edit` changes (it is read whole, a regular file only: a FIFO or device at
/// the path is refused by name, never waited on).
const EDIT_INPUT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// One edit as the model wrote it: the file as shown, `old`/`new` as given.
struct Edit {
    shown: String,
    old: String,
    new: String,
    all: bool,
}

/// Applies the edit to the editor's buffer of `abs` and writes the result through the editor;
/// an editor that is gone leaves the edit (or, once the buffer was read, its result) to the
/// disk, with a notice.
async fn edit_through(editor: &dyn EditorFiles, abs: std::path::PathBuf, e: Edit) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("edit: {msg}"), 1);
    let shown = e.shown.clone();
    let text = match editor.read(&abs).await {
        Ok(text) => text,
        Err(EditorError::Refused(why)) => {
            return fail(format!("{shown}: the editor could not read it: {why}"));
        }
        Err(EditorError::Gone(why)) => {
            let mut out = SPEC
                .off_thread(move || edit_file(&abs, &e.shown, &e.old, &e.new, e.all))
                .await;
            out.text.push('\n');
            out.text.push_str(&disk_fallback_notice("edited", &why));
            return out;
        }
    };
    let (updated, report) = match apply(&text, &shown, &e.old, &e.new, e.all) {
        Ok(done) => done,
        Err(out) => return out,
    };
    let change = synapse_command::file_change::FileChange::between(&shown, &text, &updated);
    match editor.write(&abs, &updated).await {
        Ok(()) => CommandOutput::success(report).with_change(change),
        Err(EditorError::Refused(why)) => fail(format!(
            "{shown}: the editor could not write it: {why}; nothing changed"
        )),
        Err(EditorError::Gone(why)) => {
            let stored = SPEC
                .off_thread(move || match store(&abs, &e.shown, updated.as_bytes()) {
                    Ok(()) => CommandOutput::success(report),
                    Err(out) => out,
                })
                .await;
            let mut out = stored.with_change(change);
            out.text.push('\n');
            out.text.push_str(&disk_fallback_notice("wrote", &why));
            out
        }
    }
}

/// Applies one edit; `old`/`new` are the words as given (escapes not yet interpreted).
pub fn edit_file(
    abs: &Path,
    shown: &str,
    old_raw: &str,
    new_raw: &str,
    all: bool,
) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("edit: {msg}"), 1);
    if old_raw.is_empty() {
        return fail("<old> is empty; give the exact text to replace".to_owned());
    }
    let bytes = match synapse_shared::bounded::read_bytes(abs, None, EDIT_INPUT_MAX_BYTES) {
        Ok(b) => b,
        Err(e) => return fail(format!("{shown}: {}", io_reason(&e))),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return fail(format!("{shown} is not UTF-8 text; nothing changed"));
    };
    let (updated, report) = match apply(&text, shown, old_raw, new_raw, all) {
        Ok(done) => done,
        Err(out) => return out,
    };
    if let Err(out) = store(abs, shown, updated.as_bytes()) {
        return out;
    }
    CommandOutput::success(report).with_change(synapse_command::file_change::FileChange::between(
        shown, &text, &updated,
    ))
}

/// Replaces the file `abs` atomically, keeping its permissions (through a link, its target).
fn store(abs: &Path, shown: &str, updated: &[u8]) -> Result<(), CommandOutput> {
    let mode = std::fs::metadata(abs)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o644);
    let target = std::fs::canonicalize(abs).unwrap_or_else(|_| abs.to_path_buf());
    synapse_shared::atomic::write_atomic_mode(&target, updated, mode)
        .map_err(|e| CommandOutput::failure(format!("edit: {shown}: {}", io_reason(&e)), 1))
}

/// The edit applied to `text`: the new text and the report, or the failure that leaves it as
/// it was.
fn apply(
    text: &str,
    shown: &str,
    old_raw: &str,
    new_raw: &str,
    all: bool,
) -> Result<(String, String), CommandOutput> {
    let fail = |msg: String| Err(CommandOutput::failure(format!("edit: {msg}"), 1));
    if old_raw.is_empty() {
        return fail("<old> is empty; give the exact text to replace".to_owned());
    }
    let (old, new) = if !text.contains(old_raw) && old_raw.contains('\n') && text.contains("\r\n") {
        (crlf(old_raw), crlf(new_raw))
    } else {
        (old_raw.to_owned(), new_raw.to_owned())
    };
    let starts: Vec<usize> = text.match_indices(&old).map(|(i, _)| i).collect();
    let lines = line_numbers(text, &starts);
    match (starts.len(), all) {
        (0, _) => {
            return fail(format!(
                "the text to replace was not found in {shown}; nothing changed. Check spaces and \
                 indentation with `read {shown}`"
            ));
        }
        (n, false) if n > 1 => {
            return fail(format!(
                "the text to replace occurs {n} times in {shown} (lines {lines}); nothing changed. \
                 Include surrounding lines to make it unique, or add --all to replace every one"
            ));
        }
        _ => {}
    }
    if old == new {
        return fail("<old> and <new> are the same; nothing to change".to_owned());
    }
    let updated = text.replace(&old, &new);
    let n = starts.len();
    let (noun, line_word) = if n == 1 {
        ("occurrence", "line")
    } else {
        ("occurrences", "lines")
    };
    Ok((
        updated,
        format!("Replaced {n} {noun} in {shown} ({line_word} {lines})"),
    ))
}

fn line_numbers(text: &str, starts: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let (mut line, mut pos) = (1usize, 0usize);
    for &s in starts.iter().take(LINES_LISTED_MAX) {
        line += text[pos..s].matches('\n').count();
        pos = s;
        out.push(line.to_string());
    }
    if starts.len() > LINES_LISTED_MAX {
        out.push("…".to_owned());
    }
    out.join(", ")
}

/// `s` with every lone `\n` as `\r\n`.
fn crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(content: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.rs");
        std::fs::write(&p, content).unwrap();
        (dir, p)
    }

    #[test]
    fn the_path_word_is_the_first_positional() {
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            path_word(&words(&["--all", "p", "a", "b"])).as_deref(),
            Some("p")
        );
        assert_eq!(
            path_word(&words(&["-../x", "a", "b"])).as_deref(),
            Some("-../x")
        );
        assert_eq!(
            path_word(&words(&["--", "--all", "a", "b"])).as_deref(),
            Some("--all")
        );
    }

    #[test]
    fn single_ambiguous_all_and_absent() {
        let (_d, p) = setup("a = 1\nb = 1\nc = 2\n");
        let out = edit_file(&p, "f.rs", "c = 2", "c = 3", false);
        assert_eq!(out.text, "Replaced 1 occurrence in f.rs (line 3)");
        let before = std::fs::read(&p).unwrap();
        let out = edit_file(&p, "f.rs", "= 1", "= 9", false);
        assert_eq!(out.exit_code, 1);
        assert!(
            out.text
                .contains("occurs 2 times in f.rs (lines 1, 2); nothing changed"),
            "{}",
            out.text
        );
        assert_eq!(std::fs::read(&p).unwrap(), before);
        let out = edit_file(&p, "f.rs", "zzz", "y", false);
        assert!(out.text.contains("was not found in f.rs; nothing changed"));
        assert_eq!(std::fs::read(&p).unwrap(), before);
        let out = edit_file(&p, "f.rs", "= 1", "= 9", true);
        assert_eq!(out.text, "Replaced 2 occurrences in f.rs (lines 1, 2)");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "a = 9\nb = 9\nc = 3\n"
        );
    }

    #[test]
    fn backslashes_are_literal_and_crlf_files_match_across_lines() {
        let (_d, p) = setup("x = 1\n");
        assert_eq!(
            edit_file(&p, "f", "x = 1", r#"x = "p\nq""#, false).exit_code,
            0
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x = \"p\\nq\"\n");
        let (_d, p) = setup("one\r\ntwo\r\nthree\r\n");
        assert_eq!(edit_file(&p, "f", "one\ntwo", "1\n2", false).exit_code, 0);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\r\n2\r\nthree\r\n");
    }

    #[test]
    fn a_fifo_is_refused_by_name_at_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(edit_file(&p, "pipe", "a", "b", false).text);
        });
        let text = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("edit blocked on a FIFO");
        assert_eq!(text, "edit: pipe: it is a FIFO, not a regular file");
    }
}
