//! `glob <pattern> [--path DIR]`: files matching a glob, gitignore-aware, newest first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use futures::future::BoxFuture;
use globset::GlobBuilder;

use crate::shell::commands::walk;
use synapse_command::args::{self, OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Paths listed before the result is cut.
pub const GLOB_MAX_RESULTS: usize = 200;

pub static SPEC: CommandSpec = CommandSpec {
    name: "glob",
    usage: "glob <pattern> [--path DIR]",
    summary: "List files matching a glob pattern, newest first (respects .gitignore).",
    help: "\
Arguments:
  <pattern>     a glob matched against paths relative to DIR: * and ? stay within one folder,
                ** crosses folders, {a,b} alternates, [ab] is a class. Quote it.
  --path DIR    folder to search (default: the shell's current directory); an absolute
                pattern searches from its fixed leading folders instead

Files ignored by .gitignore, .ignore and .git/info/exclude are skipped, and so is .git itself;
other hidden files are included. At most 200 paths are listed, newest first; the last line
says how many more matched.

Examples:
  glob '**/*.rs'
  glob 'src/**/{mod,lib}.rs'
  glob '*.md' --path docs",
};

pub struct GlobCommand;

fn options() -> [OptSpec; 1] {
    [OptSpec::value("--path")]
}

/// `glob`'s words as Claude Code's `Glob` tool input (for hooks).
pub(super) fn claude_input(
    args: &[String],
    abs: &dyn Fn(&str) -> String,
) -> Option<serde_json::Value> {
    let parsed = args::parse(args.to_vec(), &options(), UnknownOpts::Reject).ok()?;
    let [pattern] = parsed.positionals.as_slice() else {
        return None;
    };
    let mut input = serde_json::json!({ "pattern": pattern });
    if let Some(path) = parsed.value("--path") {
        input["path"] = abs(path).into();
    }
    Some(input)
}

impl AgentCommand for GlobCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Search
    }

    fn reads_only(&self) -> bool {
        true
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
            let parsed = match SPEC.parse(args, &options(), UnknownOpts::Reject) {
                Ok(p) => p,
                Err(usage) => return usage,
            };
            let [pattern] = parsed.positionals.as_slice() else {
                return SPEC.usage_error(if parsed.positionals.is_empty() {
                    "missing <pattern>".to_owned()
                } else {
                    "expected one <pattern>; quote it so the shell does not expand it".to_owned()
                });
            };
            let base = ctx.resolve(parsed.value("--path").unwrap_or("."));
            let cwd = ctx.cwd().to_path_buf();
            let pattern = pattern.clone();
            SPEC.off_thread(move || glob(&cwd, &base, &pattern)).await
        })
    }
}

/// Splits a pattern into its fixed leading folders (joined onto `base`; `..` included, so
/// `../x/*.rs` searches the sibling folder) and the glob below them.
fn split_fixed(base: &Path, pattern: &str) -> (PathBuf, String) {
    let mut base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let parts: Vec<&str> = pattern
        .trim_start_matches('/')
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let fixed = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .take_while(|p| !p.contains(['*', '?', '[', '{']))
        .count();
    base.extend(&parts[..fixed]);
    (base, parts[fixed..].join("/"))
}

pub fn glob(cwd: &Path, base: &Path, pattern: &str) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("glob: {msg}"), 1);
    let (base, pattern) = split_fixed(base, pattern);
    let matcher = match GlobBuilder::new(&pattern).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => return CommandOutput::failure(format!("glob: invalid pattern: {e}"), 2),
    };
    if !base.is_dir() {
        return fail(format!("{} is not a folder", base.display()));
    }
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in walk::walker(&base).build().flatten() {
        if !entry
            .file_type()
            .is_some_and(|t| t.is_file() || t.is_symlink())
        {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&base) else {
            continue;
        };
        if matcher.is_match(rel) {
            let mtime = entry.metadata().ok().and_then(|m| m.modified().ok());
            found.push((
                mtime.unwrap_or(SystemTime::UNIX_EPOCH),
                entry.path().to_path_buf(),
            ));
        }
    }
    if found.is_empty() {
        return fail(format!(
            "no files match {pattern:?} under {}",
            walk::display(cwd, &base)
        ));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: String = found
        .iter()
        .take(GLOB_MAX_RESULTS)
        .map(|(_, p)| format!("{}\n", walk::display(cwd, p)))
        .collect();
    if total > GLOB_MAX_RESULTS {
        out.push_str(&format!(
            "[{GLOB_MAX_RESULTS} of {total} matches shown, newest first; narrow the pattern or --path]\n"
        ));
    }
    CommandOutput::success(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn matches_respect_gitignore_and_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src/sub")).unwrap();
        fs::create_dir_all(root.join("target")).unwrap();
        fs::write(root.join(".gitignore"), "target/\n").unwrap();
        fs::write(root.join("target/x.rs"), "").unwrap();
        fs::write(root.join("src/a.rs"), "").unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(100);
        fs::File::options()
            .write(true)
            .open(root.join("src/a.rs"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        fs::write(root.join("src/sub/b.rs"), "").unwrap();
        fs::write(root.join("top.rs"), "").unwrap();
        let out = glob(root, root, "**/*.rs");
        assert_eq!(
            out.text.lines().collect::<Vec<_>>()[2],
            "src/a.rs",
            "{}",
            out.text
        );
        assert!(!out.text.contains("target"));
        assert_eq!(glob(root, root, "*.rs").text, "top.rs\n");
        let abs = format!("{}/src/*.rs", root.display());
        assert_eq!(glob(root, Path::new("/"), &abs).text, "src/a.rs\n");
        let none = glob(root, root, "*.py");
        assert_eq!(none.exit_code, 1);
        assert!(none.text.contains("no files match"));
    }
}
