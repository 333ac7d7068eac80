//! Where Synapse keeps its state. Everything lives under `SYNAPSE_HOME` (default `~/.synapse`);
//! the socket defaults to `$SYNAPSE_HOME/run/synapsed.sock` and can be moved with `SYNAPSE_SOCKET`.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Environment variable naming the state folder.
pub const ENV_HOME: &str = "SYNAPSE_HOME";
/// Environment variable naming the daemon socket.
pub const ENV_SOCKET: &str = "SYNAPSE_SOCKET";

/// Why Synapse's locations could not be resolved, created or trusted.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    /// Neither `SYNAPSE_HOME` nor `HOME` is set and the OS names no home directory either.
    #[error("cannot find your home directory: set SYNAPSE_HOME or HOME")]
    NoHome,
    /// `SYNAPSE_HOME` or `SYNAPSE_SOCKET` holds a relative path.
    #[error("{var} must be an absolute path (got {value:?})")]
    NotAbsolute {
        /// The variable at fault ([`ENV_HOME`] or [`ENV_SOCKET`]).
        var: &'static str,
        /// The relative path it held.
        value: PathBuf,
    },
    /// A folder of the layout could not be created or made private.
    #[error("cannot create {path}: {source}")]
    Create {
        /// The folder that failed.
        path: PathBuf,
        /// What the OS answered.
        source: io::Error,
    },
    /// The home, `settings.json` or trust list could be changed by another user
    /// ([`loose_permissions`]), so it is not used.
    #[error("refusing to use {path}: {why}", path = .path.display())]
    Unsafe {
        /// The file or folder with loose ownership or permissions.
        path: PathBuf,
        /// What is loose and the command that fixes it.
        why: String,
    },
}

/// The file inside `SYNAPSE_HOME` that records which skills' `allowed-tools` the user approved
/// (written by the skills subsystem, guarded as a rules file by the permission gate).
pub const SKILL_APPROVALS_FILE: &str = "skill_approvals.json";

/// The resolved locations of one Synapse installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    home: PathBuf,
    socket: PathBuf,
}

impl Paths {
    /// Resolves paths from the process environment.
    pub fn from_env() -> Result<Self, PathsError> {
        Self::from_lookup(|k| std::env::var_os(k))
    }

    /// Resolves paths from an arbitrary variable lookup (testable without touching the process
    /// environment).
    pub fn from_lookup(get: impl Fn(&str) -> Option<OsString>) -> Result<Self, PathsError> {
        let home = match get(ENV_HOME).filter(|v| !v.is_empty()) {
            Some(v) => absolute(ENV_HOME, PathBuf::from(v))?,
            None => {
                let user_home = get("HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()))
                    .ok_or(PathsError::NoHome)?;
                user_home.join(".synapse")
            }
        };
        let socket = match get(ENV_SOCKET).filter(|v| !v.is_empty()) {
            Some(v) => absolute(ENV_SOCKET, PathBuf::from(v))?,
            None => home.join("run").join("synapsed.sock"),
        };
        Ok(Self { home, socket })
    }

    /// Paths rooted at an explicit home, with the default socket.
    pub fn with_home(home: impl Into<PathBuf>) -> Self {
        let home = home.into();
        let socket = home.join("run").join("synapsed.sock");
        Self { home, socket }
    }

    /// The state folder: `SYNAPSE_HOME`, else `~/.synapse`; always absolute.
    pub fn home(&self) -> &Path {
        &self.home
    }
    /// The daemon's gRPC Unix socket: `SYNAPSE_SOCKET`, else `<home>/run/synapsed.sock`.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
    /// The folder holding the socket (created 0700).
    pub fn socket_dir(&self) -> PathBuf {
        self.socket
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.run_dir())
    }
    /// `<home>/run` (created 0700): the default socket's folder and the daemon's other
    /// runtime sockets.
    pub fn run_dir(&self) -> PathBuf {
        self.home.join("run")
    }
    /// Held (flock) by the daemon serving `socket` for its whole life.
    pub fn daemon_lock(&self) -> PathBuf {
        let mut name = self.socket.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }
    /// Held by a client while it starts the daemon, so racing clients start one.
    pub fn start_lock(&self) -> PathBuf {
        let mut name = self.socket.as_os_str().to_owned();
        name.push(".start.lock");
        PathBuf::from(name)
    }
    /// `<home>/logs`: the daemon's log files.
    pub fn logs_dir(&self) -> PathBuf {
        self.home.join("logs")
    }
    /// Where the client sends a daemon's stderr while starting it (early failures land here).
    pub fn startup_log(&self) -> PathBuf {
        self.logs_dir().join("synapsed.startup.log")
    }
    /// `<home>/settings.json`: the user's settings ([`crate::settings`]).
    pub fn settings_file(&self) -> PathBuf {
        self.home.join("settings.json")
    }
    /// `<home>/skills`: the user's skills, one folder with a `SKILL.md` each, and the store's
    /// `index.json`.
    pub fn skills_dir(&self) -> PathBuf {
        self.home.join("skills")
    }
    /// `<home>/bin`: the generated command wrappers (skill scripts, MCP tools), first on every
    /// agent shell's `PATH`.
    pub fn bin_dir(&self) -> PathBuf {
        self.home.join("bin")
    }
    /// `<home>/sessions`: each session's saved state, such as its transcript `<id>.jsonl`
    /// and todo list.
    pub fn sessions_dir(&self) -> PathBuf {
        self.home.join("sessions")
    }
    /// `<home>/mcp`: MCP server configuration (the user's `mcp_servers.json`, per-project
    /// local files and approvals) and OAuth tokens.
    pub fn mcp_dir(&self) -> PathBuf {
        self.home.join("mcp")
    }
    /// OAuth tokens of remote MCP servers, one 0600 file per server (`<name>-<url hash>.json`).
    pub fn mcp_oauth_dir(&self) -> PathBuf {
        self.mcp_dir().join("oauth")
    }
    /// `<home>/history`: the REPL's input history.
    pub fn history_file(&self) -> PathBuf {
        self.home.join("history")
    }
    /// Folders whose `.synapse/settings.json` the daemon honours.
    pub fn trust_file(&self) -> PathBuf {
        self.home.join(crate::trust::TRUST_FILE)
    }

    /// Refuses a Synapse home, `settings.json` or trust list that another user could change
    /// (as ssh's StrictModes does): whoever can write them can set `defaultMode: yolo`.
    pub fn check_private(&self) -> Result<(), PathsError> {
        for path in [self.home.clone(), self.settings_file(), self.trust_file()] {
            if let Some(why) = loose_permissions(&path) {
                return Err(PathsError::Unsafe { path, why });
            }
        }
        Ok(())
    }

    /// Creates the folder layout (idempotent). Private folders are 0700. Refuses a home or
    /// rules file other users could change ([`check_private`](Self::check_private)).
    pub fn ensure_layout(&self) -> Result<(), PathsError> {
        mkdir(&self.home, 0o700)?;
        self.check_private()?;
        for dir in [self.run_dir(), self.socket_dir()] {
            mkdir(&dir, 0o700)?;
            // An existing folder may have looser permissions; the socket folder must not.
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(|source| {
                PathsError::Create {
                    path: dir.clone(),
                    source,
                }
            })?;
        }
        for dir in [
            self.logs_dir(),
            self.skills_dir(),
            self.bin_dir(),
            self.sessions_dir(),
            self.mcp_dir(),
        ] {
            mkdir(&dir, 0o700)?;
        }
        Ok(())
    }
}

/// Why `path` (followed through links) could be changed by another user — writable by its group
/// or by others, or owned by someone else — with the fix; `None` when it is private or missing.
pub fn loose_permissions(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    let own = nix::unistd::getuid().as_raw();
    if meta.uid() != own {
        return Some(format!(
            "it is owned by uid {}, not by you (uid {own}); fix: chown {own} {}",
            meta.uid(),
            path.display()
        ));
    }
    let mode = meta.mode() & 0o7777;
    let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (_, true) => "every user",
        (true, false) => "its group",
        (false, false) => return None,
    };
    Some(format!(
        "it is writable by {who} (mode {mode:o}), so another user could change your settings; \
         fix: chmod go-w {}",
        path.display()
    ))
}

fn absolute(var: &'static str, value: PathBuf) -> Result<PathBuf, PathsError> {
    if value.is_absolute() {
        Ok(value)
    } else {
        Err(PathsError::NotAbsolute { var, value })
    }
}

fn mkdir(path: &Path, mode: u32) -> Result<(), PathsError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)
        .map_err(|source| PathsError::Create {
            path: path.to_path_buf(),
            source,
        })
}

/// `.` removed and `..` applied without touching the filesystem (never above the root).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in p.components() {
        match component {
            Component::CurDir => {}
            // Decide on the last component kept: `PathBuf::pop` would also "pop" the root (it
            // cannot, and returns false) or a leading `..` (it can, wrongly).
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_under_home() {
        let p = Paths::from_lookup(lookup(&[("HOME", "/home/u")])).unwrap();
        assert_eq!(p.home(), Path::new("/home/u/.synapse"));
        assert_eq!(p.socket(), Path::new("/home/u/.synapse/run/synapsed.sock"));
        assert_eq!(
            p.daemon_lock(),
            Path::new("/home/u/.synapse/run/synapsed.sock.lock")
        );
    }

    #[test]
    fn env_overrides_and_relative_paths_are_rejected() {
        let p = Paths::from_lookup(lookup(&[
            ("SYNAPSE_HOME", "/s"),
            ("SYNAPSE_SOCKET", "/x/d.sock"),
        ]))
        .unwrap();
        assert_eq!(p.home(), Path::new("/s"));
        assert_eq!(p.socket_dir(), Path::new("/x"));
        let err = Paths::from_lookup(lookup(&[("SYNAPSE_HOME", "rel")])).unwrap_err();
        assert!(
            err.to_string()
                .contains("SYNAPSE_HOME must be an absolute path")
        );
    }

    #[test]
    fn layout_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = Paths::with_home(dir.path().join("h"));
        p.ensure_layout().unwrap();
        let mode = fs::metadata(p.socket_dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(p.skills_dir().is_dir() && p.sessions_dir().is_dir() && p.bin_dir().is_dir());
    }
}
