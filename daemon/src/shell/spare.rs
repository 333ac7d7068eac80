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
