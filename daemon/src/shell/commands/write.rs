//! `write <path> <content>` and `write <path> <<'EOF' … EOF`: create or replace a file
//! atomically, creating parent folders.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use crate::shell::args::unescape;
use crate::shell::command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};
use crate::shell::commands::read::io_reason;

pub static SPEC: CommandSpec = CommandSpec {
    name: "write",
    usage: "write <path> <content>  |  write <path> <<'EOF' … EOF",
    summary: "Create or overwrite a file with the given content (parent folders are created).",
    help: "\
Arguments:
  <path>        file to write; relative paths start from the shell's current directory
  <content>     the whole new content, as ONE shell word (quote it)

In <content>, after shell quoting, \\n is a newline, \\t a tab and \\\\ a backslash; other
backslashes are kept. So write notes.txt \"a\\nb\" writes two lines. Nothing is added: no final
newline unless you write one.

For code or any text with backslashes or quotes, use the heredoc form; its body is written
exactly as given (no escapes, no $variables), with a newline after each line:
  write src/app.py <<'EOF'
  print(\"hello\\n\")
  EOF

The file is replaced atomically (a reader never sees half a file); an existing file keeps its
permissions. Everything after <path> is content: write f \"--help\" writes the text --help.",
};

pub struct WriteCommand;

impl AgentCommand for WriteCommand {
    fn effect(&self, args: &[String], cwd: &std::path::Path) -> crate::shell::gate::Effect {
        crate::shell::gate::writes_first_path(args, cwd)
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        mut args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            if args.first().is_some_and(|a| a == "--") {
                args.remove(0);
            }
            let mut words = args.into_iter();
            let Some(path) = words.next() else {
                return SPEC.usage_error("missing <path>");
            };
            let rest: Vec<String> = words.collect();
            let content = match (rest.as_slice(), ctx.stdin()) {
                ([], Some(body)) => body.to_owned(),
                ([one], None) => unescape(one),
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
            tokio::task::spawn_blocking(move || write_file(&abs, &path, content.as_bytes()))
                .await
                .unwrap_or_else(|e| CommandOutput::failure(format!("write: {e}"), 1))
        })
    }
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
    if let Err(e) = synapse_shared::atomic::write_atomic_mode(&target, content, mode) {
        return fail(format!("{shown}: {}", io_reason(&e)));
    }
    let lines = if content.is_empty() {
        0
    } else {
        content.iter().filter(|&&b| b == b'\n').count() + usize::from(!content.ends_with(b"\n"))
    };
    let verb = if existing.is_some() {
        "Overwrote"
    } else {
        "Created"
    };
    CommandOutput::success(format!(
        "{verb} {shown} ({lines} line{}, {} bytes)",
        if lines == 1 { "" } else { "s" },
        content.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
