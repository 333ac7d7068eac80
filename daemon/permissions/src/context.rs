//! Where a command runs: the folders it may write ([`Context::is_writable`]) and how a path
//! word is turned into an absolute path ([`resolve`]) — purely lexically (`~`, `$HOME`, `..`),
//! never by asking the filesystem.

use std::fmt;
use std::path::{Path, PathBuf};

use super::agent_commands::AgentCommands;

/// The facts about the session a decision depends on.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The shell's current folder.
    pub cwd: &'a Path,
    /// The user's home folder: what `~` and `$HOME` stand for, and where dotfiles are looked for.
    pub home: &'a Path,
    /// `~/.synapse` (or `SYNAPSE_HOME`): writable, and exempt from the dotfile check.
    pub synapse_home: &'a Path,
    /// The system temp folder (`$TMPDIR`, usually `/tmp`): always writable.
    pub temp_dir: &'a Path,
    /// `additionalWritableDirs` from the settings.
    pub extra_writable: &'a [PathBuf],
    /// Commands run inside an OS sandbox that blocks writes outside the writable folders.
    pub sandboxed: bool,
    /// Whether a process id belongs to a process this session started.
    pub is_session_pid: &'a (dyn Fn(i32) -> bool + Sync),
    /// The agent commands the session shell defines (the daemon's registry names them).
    pub agent_commands: &'a AgentCommands,
}

impl Context<'_> {
    /// Whether `p` lies (lexically) inside the working folder, the Synapse home, the temp folder
    /// or an extra writable folder.
    pub fn is_writable(&self, p: &Path) -> bool {
        let p = normalize(p);
        self.writable_roots()
            .any(|root| p.starts_with(normalize(root)))
    }

    /// Whether `p` lies strictly inside a folder where recursive deletes are expected: the
    /// working folder, the temp folder or an extra writable folder (never the folder itself).
    pub(crate) fn is_strictly_inside_work_dirs(&self, p: &Path) -> bool {
        let p = normalize(p);
        self.work_dirs()
            .any(|root| p != root && p.starts_with(&root))
    }

    /// Whether `p` is one of those folders or inside one.
    pub(crate) fn is_within_work_dirs(&self, p: &Path) -> bool {
        let p = normalize(p);
        self.work_dirs().any(|root| p.starts_with(&root))
    }

    fn work_dirs(&self) -> impl Iterator<Item = PathBuf> {
        [self.cwd, self.temp_dir]
            .into_iter()
            .chain(self.extra_writable.iter().map(PathBuf::as_path))
            .map(normalize)
    }

    fn writable_roots(&self) -> impl Iterator<Item = &Path> {
        [self.cwd, self.synapse_home, self.temp_dir]
            .into_iter()
            .chain(self.extra_writable.iter().map(PathBuf::as_path))
    }

    /// `p` for messages: `~/x` under the home folder, relative under the working folder.
    pub(crate) fn show(&self, p: &Path) -> String {
        if let Ok(rest) = p.strip_prefix(self.cwd)
            && !rest.as_os_str().is_empty()
        {
            return rest.display().to_string();
        }
        match p.strip_prefix(self.home) {
            Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => p.display().to_string(),
        }
    }
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("cwd", &self.cwd)
            .field("home", &self.home)
            .field("synapse_home", &self.synapse_home)
            .field("temp_dir", &self.temp_dir)
            .field("extra_writable", &self.extra_writable)
            .field("sandboxed", &self.sandboxed)
            .finish_non_exhaustive()
    }
}

/// The absolute, lexically normalised path a path word names: `~`, `~/x`, `~user/x`, `$HOME/x`
/// and `${HOME}/x` are expanded, relative paths are taken from the working folder. Other
/// variables are kept as literal names (see `resolve_known`).
pub fn resolve(ctx: &Context, target: &str) -> PathBuf {
    let expanded = if target == "~" {
        ctx.home.to_path_buf()
    } else if let Some(rest) = target.strip_prefix("~/") {
        ctx.home.join(rest)
    } else if let Some(user) = target.strip_prefix('~') {
        let (name, rest) = user.split_once('/').unwrap_or((user, ""));
        ctx.home
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join(name)
            .join(rest)
    } else if let Some(rest) = strip_home_variable(target) {
        ctx.home.join(rest.trim_start_matches('/'))
    } else {
        ctx.cwd.join(target)
    };
    normalize(&expanded)
}

/// [`resolve`], or `None` when the path is only known at run time: it holds a variable other
/// than a leading `$HOME`, a command substitution, or `find`'s `{}`.
pub(crate) fn resolve_known(ctx: &Context, target: &str) -> Option<PathBuf> {
    let rest = strip_home_variable(target).unwrap_or(target);
    if rest.contains('$') || rest.contains('`') || rest.contains("{}") {
        return None;
    }
    Some(resolve(ctx, target))
}

/// The rest after a leading `$HOME` / `${HOME}` (followed by `/` or the end).
fn strip_home_variable(target: &str) -> Option<&str> {
    ["${HOME}", "$HOME"]
        .iter()
        .find_map(|v| target.strip_prefix(v))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

pub use synapse_shared::paths::normalize;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_expands_home_and_normalises() {
        let extra = [PathBuf::from("/data/x")];
        let ctx = Context {
            cwd: Path::new("/home/u/proj"),
            home: Path::new("/home/u"),
            synapse_home: Path::new("/home/u/.synapse"),
            temp_dir: Path::new("/tmp"),
            extra_writable: &extra,
            sandboxed: false,
            is_session_pid: &|_| false,
            agent_commands: &AgentCommands::default(),
        };
        let cases = [
            ("~", "/home/u"),
            ("~/.bashrc", "/home/u/.bashrc"),
            ("$HOME/a", "/home/u/a"),
            ("${HOME}", "/home/u"),
            ("~root/x", "/home/root/x"),
            ("../x", "/home/u/x"),
            ("./a/./b/../c", "/home/u/proj/a/c"),
            ("/../../etc", "/etc"),
            ("/", "/"),
            ("$HOMEX/a", "/home/u/proj/$HOMEX/a"),
        ];
        for (word, path) in cases {
            assert_eq!(resolve(&ctx, word), PathBuf::from(path), "{word}");
        }
        assert_eq!(resolve_known(&ctx, "$X/a"), None);
        assert_eq!(resolve_known(&ctx, "{}"), None);
        assert_eq!(
            resolve_known(&ctx, "$HOME/a"),
            Some(PathBuf::from("/home/u/a"))
        );
        assert!(ctx.is_writable(Path::new("/home/u/proj/../proj/x")));
        assert!(ctx.is_writable(Path::new("/data/x/y")));
        assert!(ctx.is_writable(Path::new("/home/u/.synapse/s")));
        assert!(!ctx.is_writable(Path::new("/home/u/proj/../other")));
        assert!(!ctx.is_writable(Path::new("/data/xy")));
        assert_eq!(ctx.show(Path::new("/home/u/.bashrc")), "~/.bashrc");
        assert_eq!(ctx.show(Path::new("/home/u/proj/a")), "a");
        assert_eq!(ctx.show(Path::new("/etc")), "/etc");
    }
}
