//! One pre-started shell per active workspace, so a new session's first command finds its shell
//! running instead of waiting for keeper, cgroup, Landlock, seccomp and bash to start.
//!
//! A spare is made from the origin of a chat session of that workspace, with the one thing that
//! is the session's own swapped for a fresh one: the private temporary folder (its `TMPDIR`, and
//! the only temporary folder its sandbox may write). The next chat session opening in the same
//! workspace and folder claims that folder for its gate ([`Spares::claim`]); at its first call
//! the shell is handed over only if everything the shell was started with — folder,
//! environment, PATH, workspace, sandbox, scrubbed credentials — is what the session would
//! start a fresh shell with ([`ShellKey`]); otherwise the spare is killed and a fresh shell
//! started. The agent-channel token, scratch folder and cgroup are the shell's own, never
//! shared, so a handed-over shell is one nobody else ever used.
//!
//! Bounded: at most one ready spare per workspace root; a claimed one lives only while its
//! session does not yet run a command. Spares die with their workspace going down, after
//! [`super::SESSION_IDLE_TIMEOUT`] unused, and at daemon shutdown. A spare holds no lease on
//! its workspace, so it never keeps one up.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::slot::Slot;
use super::spec::SecretVariables;
use synapse_sandbox::SandboxSpec;

/// Makes a fresh private temporary folder for a session of the same kind (the gate's maker).
#[derive(Clone)]
pub struct SpareTmp(pub Arc<dyn Fn() -> Option<Arc<tempfile::TempDir>> + Send + Sync>);

impl std::fmt::Debug for SpareTmp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpareTmp(..)")
    }
}

/// Everything a shell's start depends on but its own secrets: two shells with equal keys are
/// interchangeable before their first command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ShellKey {
    pub cwd: PathBuf,
    /// Sorted: a session's environment comes from a map.
    pub env: Vec<(OsString, OsString)>,
    pub bin_dir: Option<PathBuf>,
    pub workspace: Option<(PathBuf, PathBuf)>,
    /// The session's own commands (id, folder): a spare never has them.
    pub own: Option<(String, PathBuf)>,
    pub sandbox: Option<SandboxSpec>,
    pub secrets: SecretVariables,
    pub agent: bool,
    pub output_cap: usize,
}

/// The variables bash sets itself at startup, whatever it inherits: `_` is the path of the
/// command that started the client (`timeout`, a wrapper script, `synapse` itself), so two
/// sessions whose shells would be identical would otherwise never share a spare.
const SET_BY_BASH: &[&str] = &["_"];

/// The environment part of a [`ShellKey`]: what the shell sees (`sees`: credentials it never
/// gets cannot differ), without what bash overwrites, sorted.
pub(super) fn key_env(
    env: &[(OsString, OsString)],
    sees: impl Fn(&std::ffi::OsStr) -> bool,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = env
        .iter()
        .filter(|(k, _)| sees(k) && !SET_BY_BASH.iter().any(|b| k == b))
        .cloned()
        .collect();
    env.sort();
    env
}

impl ShellKey {
    /// What differs between two keys, for the log line saying why a spare was not handed over:
    /// field names, and for the environment the variable names (never their values).
    pub fn differences(&self, other: &ShellKey) -> Vec<String> {
        let mut out = Vec::new();
        if self.cwd != other.cwd {
            out.push("folder".to_string());
        }
        if self.env != other.env {
            let mut names: Vec<String> = self
                .env
                .iter()
                .filter(|kv| !other.env.contains(kv))
                .chain(other.env.iter().filter(|kv| !self.env.contains(kv)))
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            names.sort();
            names.dedup();
            out.push(format!("environment ({})", names.join(", ")));
        }
        if self.bin_dir != other.bin_dir {
            out.push("bin folder".to_string());
        }
        if self.workspace != other.workspace {
            out.push("workspace".to_string());
        }
        if self.own != other.own {
            out.push("session's own MCP commands".to_string());
        }
        if self.sandbox != other.sandbox {
            out.push("sandbox".to_string());
        }
        if self.secrets != other.secrets {
            out.push("credential variables".to_string());
        }
        if self.agent != other.agent {
            out.push("agent channel".to_string());
        }
        if self.output_cap != other.output_cap {
            out.push("output cap".to_string());
        }
        out
    }
}

/// A pre-started shell waiting for a session.
pub(super) struct Spare {
    pub root: PathBuf,
    pub key: ShellKey,
    pub slot: Arc<Slot>,
    /// The private temporary folder the spare's shell was started with; the claiming session's
    /// gate shares it (and removes it when the session ends).
    pub tmp: Arc<tempfile::TempDir>,
}

#[derive(Default)]
struct Inner {
    /// By workspace root: at most one each.
    ready: HashMap<PathBuf, Spare>,
    /// By the temporary folder a session's gate claimed.
    claimed: HashMap<PathBuf, Spare>,
}

#[derive(Default)]
pub(super) struct Spares {
    inner: Mutex<Inner>,
}

impl Spares {
    /// The temporary folder of workspace `root`'s spare started in `cwd`, for a new session's
    /// gate; the spare waits for that session's first call.
    pub fn claim(&self, root: &Path, cwd: &Path) -> Option<Arc<tempfile::TempDir>> {
        let mut inner = self.inner.lock();
        if inner.ready.get(root).is_none_or(|s| s.key.cwd != cwd) {
            return None;
        }
        let spare = inner.ready.remove(root)?;
        let tmp = spare.tmp.clone();
        inner.claimed.insert(tmp.path().to_path_buf(), spare);
        Some(tmp)
    }

    /// The spare claimed with temporary folder `tmp`, if any.
    pub fn take_claimed(&self, tmp: &Path) -> Option<Spare> {
        self.inner.lock().claimed.remove(tmp)
    }

    pub fn has_ready(&self, root: &Path) -> bool {
        self.inner.lock().ready.contains_key(root)
    }

    /// Keeps `spare` as its workspace's ready one; gives it back when there is one already.
    pub fn offer(&self, spare: Spare) -> Option<Spare> {
        let mut inner = self.inner.lock();
        if inner.ready.contains_key(&spare.root) {
            return Some(spare);
        }
        inner.ready.insert(spare.root.clone(), spare);
        None
    }

    /// Every spare of workspace `root` (it went down).
    pub fn drain_root(&self, root: &Path) -> Vec<Spare> {
        let mut inner = self.inner.lock();
        let mut out: Vec<Spare> = inner.ready.remove(root).into_iter().collect();
        let claimed: Vec<PathBuf> = inner
            .claimed
            .iter()
            .filter(|(_, s)| s.root == root)
            .map(|(k, _)| k.clone())
            .collect();
        out.extend(claimed.iter().filter_map(|k| inner.claimed.remove(k)));
        out
    }

    /// Every spare (shutdown).
    pub fn drain_all(&self) -> Vec<Spare> {
        let mut inner = self.inner.lock();
        let mut out: Vec<Spare> = inner.ready.drain().map(|(_, s)| s).collect();
        out.extend(inner.claimed.drain().map(|(_, s)| s));
        out
    }

    /// Ready spares unused for `idle`, and claimed ones whose session ended before its first
    /// call (nobody else holds their temporary folder).
    pub fn drain_stale(&self, idle: std::time::Duration) -> Vec<Spare> {
        let mut inner = self.inner.lock();
        let old: Vec<PathBuf> = inner
            .ready
            .iter()
            .filter(|(_, s)| s.slot.idle_for() >= idle)
            .map(|(k, _)| k.clone())
            .collect();
        let mut out: Vec<Spare> = old.iter().filter_map(|k| inner.ready.remove(k)).collect();
        let orphans: Vec<PathBuf> = inner
            .claimed
            .iter()
            .filter(|(_, s)| Arc::strong_count(&s.tmp) == 1)
            .map(|(k, _)| k.clone())
            .collect();
        out.extend(orphans.iter().filter_map(|k| inner.claimed.remove(k)));
        out
    }

    /// How many spares there are (ready and claimed).
    pub fn len(&self) -> usize {
        let inner = self.inner.lock();
        inner.ready.len() + inner.claimed.len()
    }
}

/// Kills a spare's shell in the background (its temporary folder goes with the last holder).
pub(super) fn discard(spare: Spare) {
    synapse_command::tasks::spawn(async move {
        spare.slot.close().await;
        drop(spare.tmp);
    });
}

/// `env` with `TMPDIR` (and every writable folder of `sandbox` that was `old`) moved to `new`.
pub(super) fn retarget(
    env: &[(OsString, OsString)],
    sandbox: Option<&SandboxSpec>,
    old: &Path,
    new: &Path,
) -> (Vec<(OsString, OsString)>, Option<SandboxSpec>) {
    let env = env
        .iter()
        .map(|(k, v)| {
            if k == "TMPDIR" {
                (k.clone(), new.as_os_str().to_owned())
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect();
    let sandbox = sandbox.map(|s| SandboxSpec {
        writable: s
            .writable
            .iter()
            .map(|w| {
                if w == old {
                    new.to_path_buf()
                } else {
                    w.clone()
                }
            })
            .collect(),
        ..s.clone()
    });
    (env, sandbox)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(env: &[(&str, &str)]) -> ShellKey {
        let env: Vec<(OsString, OsString)> = env
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        ShellKey {
            cwd: PathBuf::from("/p"),
            env: key_env(&env, |k| k != "ANTHROPIC_API_KEY"),
            bin_dir: None,
            workspace: None,
            own: None,
            sandbox: None,
            secrets: SecretVariables::default(),
            agent: true,
            output_cap: 30_000,
        }
    }

    #[test]
    fn a_client_started_by_another_command_still_fits_the_spare() {
        // `_` differs with how the client was started; bash sets it afresh anyway.
        let spare = key(&[("HOME", "/h"), ("_", "/usr/bin/timeout")]);
        let session = key(&[("_", "/usr/bin/synapse"), ("HOME", "/h")]);
        assert_eq!(spare, session);
        assert!(spare.differences(&session).is_empty());
        // Nor does a credential the shell never gets.
        let with_key = key(&[("HOME", "/h"), ("ANTHROPIC_API_KEY", "sk-1")]);
        assert_eq!(with_key, session);
    }

    #[test]
    fn differences_name_the_variables_never_their_values() {
        let spare = key(&[("HOME", "/h"), ("LANG", "C"), ("TOKEN_FREE", "a")]);
        let mut session = key(&[("HOME", "/h"), ("LANG", "C.UTF-8")]);
        session.cwd = PathBuf::from("/q");
        let differs = spare.differences(&session);
        assert_eq!(
            differs,
            vec![
                "folder".to_string(),
                "environment (LANG, TOKEN_FREE)".to_string()
            ]
        );
        assert!(!differs.join(" ").contains("C.UTF-8"));
    }

    #[test]
    fn retarget_moves_tmpdir_and_the_writable_folder_only() {
        let env = vec![
            (OsString::from("TMPDIR"), OsString::from("/t/session-a")),
            (OsString::from("HOME"), OsString::from("/h")),
        ];
        let sandbox = SandboxSpec {
            writable: vec![PathBuf::from("/p"), PathBuf::from("/t/session-a")],
            read_only: false,
            protected: Vec::new(),
        };
        let (env, sandbox) = retarget(
            &env,
            Some(&sandbox),
            Path::new("/t/session-a"),
            Path::new("/t/session-b"),
        );
        assert_eq!(env[0].1, OsString::from("/t/session-b"));
        assert_eq!(env[1].1, OsString::from("/h"));
        assert_eq!(
            sandbox.map(|s| s.writable),
            Some(vec![PathBuf::from("/p"), PathBuf::from("/t/session-b")])
        );
    }
}
