//! Where a command line's writes land, judged by what bash would make of the words rather than
//! by the words themselves: `$SYNAPSE_HOME`, `$HOME`, `~`, the folder the shell is in (and
//! every `cd`/`pushd`/`env -C` in the line), and variables the line or the session set
//! ([`Vars`], kept in the session's [`ShellState`]) are expanded before a target is compared
//! with a file.
//!
//! [`landings`] reads a line once: each simple command (and what an alias of the session
//! really runs) gives its write targets with how far each reaches ([`Reach`]: the file, a file
//! put into a folder, or a whole tree — `rm -r`, `cp -r`, `tar -x`, and the source of `ln`,
//! which makes the tree reachable under another name); each target is expanded to every value
//! it may have and resolved from every folder the line may be in. What cannot be resolved
//! without running it — a target only known at run time, a program whose writes this check
//! cannot see (an interpreter, `make`, `xargs`, a session function) — is listed in
//! [`Landings::unresolved_targets`] and [`Landings::unseen`]; the caller decides how much that matters (the gate asks when the
//! line also names a rules file). Purely lexical: symlinks are the caller's business.

mod expand;
mod targets;
mod vars;

#[cfg(test)]
mod tests;

pub use vars::Vars;

use std::path::{Path, PathBuf};

use super::context::{Context, normalize};
use super::parse::{Parsed, SimpleCommand, parse};
use super::resolve::{ShellState, resolve};
use expand::Scope;
use targets::{cd_target, program_targets, sees_all_writes};

/// How many folders a line is followed into before its folder counts as unknown.
const MAX_DIRS: usize = 16;
/// How many times a line with loops or functions is re-read for `cd`s that repeat.
const MAX_DIR_ROUNDS: usize = 8;

/// How much of the file system a write target reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The path itself (`> f`, `tee f`, `touch f`).
    File,
    /// The path, or an entry put directly into it when it is a folder (`cp a dir`, `mv a dir`).
    FileOrChild,
    /// Anything below the path (`rm -r`, `cp -r`, `tar -x -C`, `chmod -R`, `ln`'s source).
    Tree,
}

/// One place a write may land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    /// The command that writes, for messages.
    pub command: String,
    /// Absolute and lexically normalised; a glob pattern when [`Landing::pattern`].
    pub path: PathBuf,
    /// How much around `path` the write may change: the file, an entry in it, or the tree.
    pub reach: Reach,
    /// `path` holds `*`, `?` or `[`: bash picks the files that match.
    pub pattern: bool,
}

impl Landing {
    /// Whether this write may change `file` (absolute, normalised).
    pub fn lands_on(&self, file: &Path) -> bool {
        if self.pattern {
            let Some(glob) = glob(&self.path) else {
                return true;
            };
            return match self.reach {
                Reach::File => glob.is_match(file),
                Reach::FileOrChild => {
                    glob.is_match(file) || file.parent().is_some_and(|p| glob.is_match(p))
                }
                Reach::Tree => file.ancestors().any(|a| glob.is_match(a)),
            };
        }
        match self.reach {
            Reach::File => file == self.path,
            Reach::FileOrChild => file == self.path || file.parent() == Some(&self.path),
            Reach::Tree => file.starts_with(&self.path),
        }
    }
}

/// What [`landings`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Landings {
    /// Every write whose target is known, one per target path (a command may have several).
    pub writes: Vec<Landing>,
    /// Write targets only known at run time (`> $(…)`, a variable set by `read`), each with why.
    pub unresolved_targets: Vec<String>,
    /// Commands whose writes cannot be seen (interpreters, `eval` of run-time text, session
    /// functions, `xargs`) and parts of the line the parser could not read.
    pub unseen: Vec<String>,
    /// Every folder the line may run a command in.
    pub dirs: Vec<PathBuf>,
    /// The line's text, its words after quote removal, and what the variables it reads may
    /// hold, in lower case.
    referenced: String,
}

impl Landings {
    /// Whether anything in the line is unresolved.
    pub fn has_unresolved(&self) -> bool {
        !self.unresolved_targets.is_empty() || !self.unseen.is_empty()
    }

    /// Whether the line mentions `word` — in its text, its words after quote removal or a
    /// variable it reads — ignoring case (`settings.json`, `SYNAPSE_HOME`, `.synapse`).
    pub fn names(&self, word: &str) -> bool {
        !word.is_empty() && self.referenced.contains(&word.to_ascii_lowercase())
    }

    /// Whether the line mentions folder `dir` itself or a path into it on the way to one of
    /// `entries` (paths relative to `dir`, such as `settings.json`): `dir`, `dir/`, `dir/sett…`
    /// and `dir/$x` count; `dir/run/x.sock` and `dir2` do not. Ignores case.
    pub fn names_folder(&self, dir: &Path, entries: &[&str]) -> bool {
        let dir = dir.to_string_lossy().to_ascii_lowercase();
        let dir = dir.trim_end_matches('/');
        if dir.is_empty() {
            return false;
        }
        let name_char = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        self.referenced.match_indices(dir).any(|(at, _)| {
            let rest = &self.referenced[at + dir.len()..];
            let Some(inside) = rest.strip_prefix('/') else {
                return !rest.starts_with(name_char);
            };
            let next: String = inside
                .chars()
                .take_while(|c| name_char(*c) || *c == '/')
                .collect();
            next.is_empty()
                || entries.iter().any(|e| {
                    let e = e.to_ascii_lowercase();
                    e.starts_with(&next) || next.starts_with(&e)
                })
        })
    }
}

/// Where the writes of `line`, run from `ctx.cwd` in a shell in state `shell`, may land.
/// `env` gives variables whose value in the session shell is known (`SYNAPSE_HOME`); `HOME`
/// is `ctx.home`.
pub fn landings(line: &str, ctx: &Context, shell: &ShellState, env: &[(&str, &str)]) -> Landings {
    let mut parsed = parse(line);
    let resolution = resolve(&parsed, line, shell, ctx.agent_commands);
    parsed.pipelines.extend(resolution.extra);
    let line_vars = Vars::of_line(&parsed, line);
    let mut out = Landings {
        unseen: parsed.opaque.clone(),
        ..Landings::default()
    };
    out.unseen.extend(resolution.opaque);
    out.unseen.extend(resolution.refused);
    let mut scope = Scope {
        ctx,
        env,
        session: shell.vars(),
        line: &line_vars,
        unknown_state: shell.unknown_since(),
        dirs: &[],
    };
    let (dirs, dir_unknown) = folders(&parsed, line, &scope, ctx);
    scope.dirs = &dirs;
    for cmd in parsed.all_commands() {
        if !sees_all_writes(cmd, ctx.agent_commands) {
            out.unseen.push(format!(
                "`{}` may write files this check cannot see",
                cmd.text
            ));
        }
        for (target, reach) in program_targets(cmd) {
            land(
                &scope,
                cmd,
                &target,
                reach,
                dir_unknown.as_deref(),
                &mut out,
            );
        }
    }
    out.referenced = referenced(&parsed, line, &scope);
    out.dirs = dirs;
    out
}

/// Expands and resolves one write target of `cmd`.
fn land(
    scope: &Scope,
    cmd: &SimpleCommand,
    target: &str,
    reach: Reach,
    dir_unknown: Option<&str>,
    out: &mut Landings,
) {
    if target == "-" || target.starts_with("<(") || target.starts_with(">(") {
        return;
    }
    if target.contains("{}") {
        out.unresolved_targets.push(format!(
            "`{}` writes to `{target}`, filled in at run time",
            cmd.text
        ));
        return;
    }
    let expansion = scope.expand(target);
    if !expansion.unknown.is_empty() {
        out.unresolved_targets.push(format!(
            "`{}` writes to `{target}`: {}",
            cmd.text,
            expansion.unknown.join("; ")
        ));
    }
    for value in expansion.values {
        let relative = !value.starts_with('/');
        if relative && let Some(cd) = dir_unknown {
            out.unresolved_targets.push(format!(
                "`{}` writes to `{target}` after `{cd}` went to a folder only known at run time",
                cmd.text
            ));
        }
        let bases: Vec<&Path> = if relative {
            scope.dirs.iter().map(PathBuf::as_path).collect()
        } else {
            vec![Path::new("/")]
        };
        for base in bases {
            let path = normalize(&base.join(&value));
            if path.starts_with("/proc") {
                out.unresolved_targets.push(format!(
                    "`{}` writes through `{}`, which names another file",
                    cmd.text,
                    path.display()
                ));
                continue;
            }
            let pattern = value.contains(['*', '?', '[']);
            let landing = Landing {
                command: cmd.text.clone(),
                path,
                reach,
                pattern,
            };
            if !out.writes.contains(&landing) {
                out.writes.push(landing);
            }
        }
    }
}

/// Every folder the line may be in, and the `cd` that went somewhere unknown (if one did).
/// Subshells, branches and loops are flattened, so every `cd` counts from every folder seen so
/// far; a line with loops or functions is read again until nothing new turns up.
fn folders(
    parsed: &Parsed,
    line: &str,
    scope: &Scope,
    ctx: &Context,
) -> (Vec<PathBuf>, Option<String>) {
    let mut dirs = vec![normalize(ctx.cwd)];
    let mut unknown = None;
    let repeats = !parsed.functions.is_empty()
        || line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "for" | "while" | "until" | "select"));
    let cdpath = scope.session.get("CDPATH").is_some() || scope.line.get("CDPATH").is_some();
    let rounds = if repeats { MAX_DIR_ROUNDS } else { 1 };
    for _ in 0..rounds {
        let before = dirs.len();
        for cmd in parsed.all_commands() {
            let Some(target) = cd_target(cmd) else {
                continue;
            };
            let Some(target) = target else {
                unknown.get_or_insert_with(|| cmd.text.clone());
                continue;
            };
            let here = Scope {
                dirs: &dirs,
                ..*scope
            };
            let expansion = here.expand(&target);
            if !expansion.unknown.is_empty() {
                unknown.get_or_insert_with(|| cmd.text.clone());
            }
            let mut found = Vec::new();
            for value in expansion.values {
                // bash looks a name up in CDPATH unless it starts with `/`, `./` or `../`.
                let searched = !(value.starts_with('/')
                    || value == "."
                    || value == ".."
                    || value.starts_with("./")
                    || value.starts_with("../"));
                if cdpath && searched {
                    unknown.get_or_insert_with(|| cmd.text.clone());
                }
                for base in &dirs {
                    found.push(normalize(&base.join(&value)));
                }
            }
            for dir in found {
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            if dirs.len() > MAX_DIRS {
                dirs.truncate(MAX_DIRS);
                unknown.get_or_insert_with(|| cmd.text.clone());
            }
        }
        if dirs.len() == before {
            return (dirs, unknown);
        }
    }
    if repeats {
        unknown.get_or_insert_with(|| "a `cd` repeated in a loop".to_string());
    }
    (dirs, unknown)
}

/// The text a name check reads: the line, its words after quote removal (`"settings"'.json'`
/// reads `settings.json`), and what the variables it reads may hold.
fn referenced(parsed: &Parsed, line: &str, scope: &Scope) -> String {
    let mut text = line.to_string();
    for cmd in parsed.all_commands() {
        for w in cmd
            .words
            .iter()
            .chain(&cmd.assignments)
            .chain(cmd.redirects.iter().map(|r| &r.target))
        {
            text.push('\n');
            text.push_str(w);
        }
    }
    let mut vars = String::new();
    scope.referenced(&text, &mut vars, 0);
    text.push_str(&vars);
    text.make_ascii_lowercase();
    text
}

/// A matcher for a path pattern (`*` stays within one folder); `None` if it is not a pattern
/// globset reads.
fn glob(pattern: &Path) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(&pattern.to_string_lossy())
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}
