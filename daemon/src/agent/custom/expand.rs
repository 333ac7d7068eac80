//! A custom command's body turned into the message the model receives: arguments put in
//! ([`super::command::substitute`]), `@path` references attached, and `` !`command` `` spans
//! replaced by what the command printed.
//!
//! `@path` names a file relative to the session's folder (or `~/…`, or absolute). Only a regular
//! file under the project or the user's home is attached, never one under `$SYNAPSE_HOME` (the
//! daemon's settings hold keys); a small text file goes in whole (in a `<file path="…">` block
//! after the text, as the REPL attaches mentions), a large or binary one as a hint to `read` it.
//! A word that names no such file stays as written.
//!
//! A `` !`command` `` runs only when the command's `allowed-tools` lets it, as in Claude Code: a
//! `Bash` entry, or `Bash(pattern)` entries that every simple command of the line matches.
//! Otherwise the whole command is refused with an error naming the line and the frontmatter to
//! change. An allowed line then runs like one of the agent's own commands ([`LineRunner`]): through
//! the session's permission gate (which may ask, or refuse) and inside its sandbox.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use super::command::CustomCommand;
use super::tools::{BashGrant, ToolGrant, bash_allows};

/// Files up to this size are attached whole.
pub const ATTACH_WHOLE_MAX_BYTES: u64 = 32 * 1024;
/// Bytes attached whole per command at most; later files come as hints.
pub const ATTACH_TOTAL_MAX_BYTES: u64 = 128 * 1024;

/// Runs a `!` line for a command: its output (with the exit code when not zero, as the agent's
/// tool results show it).
pub trait LineRunner: Send + Sync {
    fn run<'a>(&'a self, line: &'a str) -> BoxFuture<'a, String>;
}

/// Where `@path` may point.
#[derive(Debug, Clone)]
pub struct FileScope {
    /// The session's folder: relative paths start here.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    /// Folders whose files may be attached (the project root, the home).
    pub roots: Vec<PathBuf>,
    /// Folders whose files never are (`$SYNAPSE_HOME`).
    pub denied: Vec<PathBuf>,
}

/// The message for `/<name> args`.
pub async fn expand(
    command: &CustomCommand,
    args: &str,
    scope: &FileScope,
    runner: &dyn LineRunner,
) -> Result<String, String> {
    let body = command.with_arguments(args);
    let spans = bang_spans(&body);
    for (_, line) in &spans {
        permitted(command, line)?;
    }
    let attachments = attach_files(&body, scope);
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for (range, line) in &spans {
        out.push_str(&body[at..range.start]);
        out.push_str(runner.run(line).await.trim_end());
        at = range.end;
    }
    out.push_str(&body[at..]);
    let head = if args.trim().is_empty() {
        format!("/{}", command.name)
    } else {
        format!("/{} {}", command.name, args.trim())
    };
    Ok(format!("{head}\n\n{out}{attachments}"))
}

/// The `` !`…` `` spans of `body`: their byte ranges and the command lines inside.
pub fn bang_spans(body: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = body[from..].find("!`") {
        let start = from + i;
        let inner_start = start + 2;
        let Some(len) = body[inner_start..].find('`') else {
            break;
        };
        let line = body[inner_start..inner_start + len].trim();
        let end = inner_start + len + 1;
        if !line.is_empty() {
            out.push((start..end, line.to_string()));
        }
        from = end;
    }
    out
}

/// Whether `allowed-tools` lets `line` run; the error names the line and what to add.
fn permitted(command: &CustomCommand, line: &str) -> Result<(), String> {
    let grant = ToolGrant::parse(&command.allowed_tools);
    let parsed = synapse_permissions::parse(line);
    let (why, subject) = match &grant.bash {
        BashGrant::All => return Ok(()),
        BashGrant::None => (
            "its `allowed-tools` has no Bash entry".to_string(),
            parsed.all_commands().next(),
        ),
        BashGrant::Patterns(patterns) => {
            let unmatched = parsed
                .all_commands()
                .find(|cmd| !bash_allows(patterns, cmd));
            match (unmatched, parsed.opaque.is_empty()) {
                (None, true) => return Ok(()),
                (Some(cmd), _) => (
                    format!(
                        "`{}` matches none of its `allowed-tools` Bash patterns ({})",
                        cmd.words.join(" "),
                        patterns.join(", ")
                    ),
                    Some(cmd),
                ),
                (None, false) => (
                    format!("the line hides what it runs ({})", parsed.opaque.join("; ")),
                    None,
                ),
            }
        }
    };
    let suggestion = subject
        .and_then(|cmd| cmd.words.first())
        .map(|program| format!("Bash({program}:*)"))
        .unwrap_or_else(|| "Bash(<command>:*)".into());
    Err(format!(
        "/{}: the line !`{line}` may not run: {why}. To let it run, add `{suggestion}` to \
         `allowed-tools` in the frontmatter of {}",
        command.name,
        command.path.display()
    ))
}

/// The `<file>` blocks for the `@path` words of `text` that name files in `scope`.
fn attach_files(text: &str, scope: &FileScope) -> String {
    let mut blocks = String::new();
    let mut seen: Vec<String> = Vec::new();
    let mut whole_bytes = 0u64;
    for word in text.split_whitespace() {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        let shown = raw.trim_end_matches([',', '.', ';', ':', ')', '?', '!', '`', '"', '\'']);
        if shown.is_empty() || seen.iter().any(|s| s == shown) {
            continue;
        }
        let Some(path) = scope.resolve(shown) else {
            continue;
        };
        seen.push(shown.to_string());
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let whole = (bytes <= ATTACH_WHOLE_MAX_BYTES
            && whole_bytes + bytes <= ATTACH_TOTAL_MAX_BYTES)
            .then(|| synapse_shared::bounded::read_text(&path, None, ATTACH_WHOLE_MAX_BYTES).ok())
            .flatten()
            .filter(|s| !s.contains('\0'));
        match whole {
            Some(content) => {
                whole_bytes += bytes;
                blocks.push_str(&format!("\n\n<file path=\"{shown}\">\n{content}"));
                if !content.ends_with('\n') {
                    blocks.push('\n');
                }
                blocks.push_str("</file>");
            }
            None => blocks.push_str(&format!(
                "\n\n(The command refers to the file {shown} ({bytes} bytes); it is too large or \
                 not text to include. Use `read {shown} --offset N --limit N` or `search` to look \
                 at the parts you need.)"
            )),
        }
    }
    blocks
}

impl FileScope {
    /// The file `shown` names, when it is a regular file inside the scope.
    fn resolve(&self, shown: &str) -> Option<PathBuf> {
        let path = match (shown.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if Path::new(shown).is_absolute() => PathBuf::from(shown),
            _ => self.cwd.join(shown),
        };
        let real = std::fs::canonicalize(&path).ok()?;
        if !std::fs::metadata(&real).ok()?.is_file() {
            return None;
        }
        let canon = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let inside = self.roots.iter().any(|r| real.starts_with(canon(r)));
        let denied = self.denied.iter().any(|d| real.starts_with(canon(d)));
        (inside && !denied).then_some(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::custom::files::Scope;
    use parking_lot::Mutex;

    struct Echo(Mutex<Vec<String>>);

    impl LineRunner for Echo {
        fn run<'a>(&'a self, line: &'a str) -> BoxFuture<'a, String> {
            self.0.lock().push(line.to_string());
            Box::pin(async move { format!("ran[{line}]\n") })
        }
    }

    fn command(body: &str, allowed: &[&str]) -> CustomCommand {
        CustomCommand {
            name: "c".into(),
            description: String::new(),
            argument_hint: None,
            allowed_tools: allowed.iter().map(|s| s.to_string()).collect(),
            model: None,
            body: body.into(),
            path: PathBuf::from("/p/.claude/commands/c.md"),
            scope: Scope::Project,
        }
    }

    fn scope(dir: &Path) -> FileScope {
        FileScope {
            cwd: dir.join("proj"),
            home: Some(dir.join("home")),
            roots: vec![dir.join("proj"), dir.join("home")],
            denied: vec![dir.join("home/.synapse")],
        }
    }

    #[tokio::test]
    async fn bang_lines_run_only_when_allowed_tools_permit_them() {
        let dir = tempfile::tempdir().unwrap();
        let runner = Echo(Mutex::new(Vec::new()));
        let ok = command(
            "Status: !`git status --short` done",
            &["Bash(git status:*)"],
        );
        let text = expand(&ok, "", &scope(dir.path()), &runner).await.unwrap();
        assert_eq!(text, "/c\n\nStatus: ran[git status --short] done");

        let refused = command("!`git status; rm -rf x`", &["Bash(git status:*)"]);
        let err = expand(&refused, "", &scope(dir.path()), &runner)
            .await
            .unwrap_err();
        assert!(err.contains("`rm -rf x` matches none"), "{err}");
        assert!(err.contains("Bash(rm:*)"), "{err}");
        let none = command("!`date`", &[]);
        let err = expand(&none, "", &scope(dir.path()), &runner)
            .await
            .unwrap_err();
        assert!(err.contains("has no Bash entry"), "{err}");
        assert!(err.contains("`Bash(date:*)`"), "{err}");
        assert!(err.contains("/p/.claude/commands/c.md"), "{err}");
        assert_eq!(
            runner.0.lock().len(),
            1,
            "nothing of a refused command runs"
        );
    }

    #[tokio::test]
    async fn files_inside_the_scope_are_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proj/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.synapse")).unwrap();
        std::fs::write(dir.path().join("proj/src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(dir.path().join("home/.synapse/settings.json"), "{}").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "no").unwrap();
        let c = command(
            "Review @$1, not @~/.synapse/settings.json or @../outside.txt or @nobody.",
            &[],
        );
        let runner = Echo(Mutex::new(Vec::new()));
        let text = expand(&c, "src/a.rs", &scope(dir.path()), &runner)
            .await
            .unwrap();
        assert!(
            text.ends_with("or @nobody.\n\n<file path=\"src/a.rs\">\nfn a() {}\n</file>"),
            "{text}"
        );
    }
}
