//! [`Workspaces`]: the projects that are up. A workspace comes up when a session opens in it (or
//! a client asks about its MCP servers there), holds a folder `$SYNAPSE_HOME/workspaces/<id>`
//! whose `bin/` only its sessions' shells have on PATH, and goes down once nobody has held it for
//! `mcp.projectIdleStopSec` seconds (default 600): its folder is removed and every
//! [`WorkspaceListener`] is told.
//!
//! The subsystems that keep something per project subscribe (the contract's
//! [`WorkspaceListener`]): the MCP hub (the project's servers, their wrappers) and the skill store
//! (the project's skill commands). Neither knows the other; the hub sees this registry only as a
//! [`WorkspaceHost`].

use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::binding::WorkspaceBinding;
pub use synapse_command::workspaces::{WorkspaceDirs, WorkspaceHost, WorkspaceListener};

/// Default idle period after which a workspace goes down.
pub const IDLE_STOP_DEFAULT: Duration = Duration::from_secs(600);

/// Reads the idle period now (the live `mcp.projectIdleStopSec` setting).
pub type IdleSetting = Arc<dyn Fn() -> Duration + Send + Sync>;

/// A workspace that is up, as `synapse daemon status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceUp {
    pub root: PathBuf,
    /// Sessions holding it (agent sessions, `synapse exec` shells).
    pub sessions: usize,
    /// While nobody holds it: how long until it goes down.
    pub stops_in: Option<Duration>,
}

struct Slot {
    dirs: WorkspaceDirs,
    /// Sessions holding the workspace (their [`Lease`]s).
    leases: AtomicUsize,
    /// When the workspace was last used or last released.
    last_used: Mutex<Instant>,
}

impl Slot {
    fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }
}

/// A session's hold on its workspace; released when dropped.
struct Lease {
    slot: Arc<Slot>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.slot.touch();
        self.slot.leases.fetch_sub(1, Ordering::AcqRel);
    }
}

struct Inner {
    dir: PathBuf,
    slots: Mutex<HashMap<PathBuf, Arc<Slot>>>,
    idle: IdleSetting,
    listeners: RwLock<Vec<Arc<dyn WorkspaceListener>>>,
    /// Whether the reaper runs: only while some workspace is up, so an idle daemon sleeps.
    reaper_running: AtomicBool,
}

/// Every workspace that is up. Cheap to clone.
#[derive(Clone)]
pub struct Workspaces {
    inner: Arc<Inner>,
}

impl Workspaces {
    /// `dir` is `$SYNAPSE_HOME/workspaces`; `idle` reads `mcp.projectIdleStopSec`.
    pub fn new(dir: PathBuf, idle: IdleSetting) -> Workspaces {
        Workspaces {
            inner: Arc::new(Inner {
                dir,
                slots: Mutex::new(HashMap::new()),
                idle,
                listeners: RwLock::new(Vec::new()),
                reaper_running: AtomicBool::new(false),
            }),
        }
    }

    /// Adds a listener: it hears of every workspace that comes up or goes down from now on.
    pub fn subscribe(&self, listener: Arc<dyn WorkspaceListener>) {
        self.inner.listeners.write().push(listener);
    }

    /// The folders workspace `root` has while it is up (whether it is up or not).
    pub fn dirs(&self, root: &Path) -> WorkspaceDirs {
        let state_dir = self
            .inner
            .dir
            .join(synapse_command::workspaces::workspace_id(root));
        WorkspaceDirs {
            bin_dir: state_dir.join("bin"),
            state_dir,
        }
    }

    /// Brings workspace `root` up (telling the listeners when it was down) and marks it used now.
    pub fn open(&self, root: &Path) -> WorkspaceDirs {
        self.slot(root).dirs.clone()
    }

    /// Binds a session to workspace `root`: the bin folder its shell puts first on PATH. The
    /// workspace stays up while the returned value (or a clone) lives.
    pub fn bind(&self, root: &Path) -> WorkspaceBinding {
        let slot = self.slot(root);
        slot.leases.fetch_add(1, Ordering::AcqRel);
        WorkspaceBinding {
            root: root.to_path_buf(),
            bin_dir: slot.dirs.bin_dir.clone(),
            hold: Arc::new(Lease { slot: slot.clone() }),
            instructions: Arc::default(),
            own: None,
        }
    }

    /// Whether workspace `root` is up now.
    pub fn is_up(&self, root: &Path) -> bool {
        self.inner.slots.lock().contains_key(root)
    }

    fn slot(&self, root: &Path) -> Arc<Slot> {
        let (slot, fresh) = {
            let mut slots = self.inner.slots.lock();
            match slots.get(root) {
                Some(slot) => (slot.clone(), false),
                None => {
                    let slot = Arc::new(Slot {
                        dirs: self.dirs(root),
                        leases: AtomicUsize::new(0),
                        last_used: Mutex::new(Instant::now()),
                    });
                    slots.insert(root.to_path_buf(), slot.clone());
                    (slot, true)
                }
            }
        };
        slot.touch();
        if fresh {
            // After the insert: a reaper that found no workspace left has already said so.
            self.start_reaper();
            let listeners = self.inner.listeners.read().clone();
            for l in listeners {
                l.workspace_up(root, &slot.dirs);
            }
        }
        slot
    }

    /// The workspaces that are up, sorted by root (`synapse daemon status`).
    pub fn list(&self) -> Vec<WorkspaceUp> {
        let idle = (self.inner.idle)();
        let slots: Vec<(PathBuf, Arc<Slot>)> = self
            .inner
            .slots
            .lock()
            .iter()
            .map(|(root, s)| (root.clone(), s.clone()))
            .collect();
        let mut out: Vec<WorkspaceUp> = slots
            .into_iter()
            .map(|(root, slot)| {
                let sessions = slot.leases.load(Ordering::Acquire);
                WorkspaceUp {
                    root,
                    sessions,
                    stops_in: (sessions == 0)
                        .then(|| idle.saturating_sub(slot.last_used.lock().elapsed())),
                }
            })
            .collect();
        out.sort_by(|a, b| a.root.cmp(&b.root));
        out
    }

    fn start_reaper(&self) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.inner.reaper_running.swap(true, Ordering::AcqRel)
        {
            return;
        }
        synapse_command::tasks::spawn(reaper(Arc::downgrade(&self.inner)));
    }
}

/// Takes down the workspaces nobody has held for the idle period; ends once no workspace is up
/// (the next one starts it again).
async fn reaper(workspaces: Weak<Inner>) {
    loop {
        let tick = {
            let Some(ws) = workspaces.upgrade() else {
                return;
            };
            let idle = (ws.idle)();
            (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(5))
        };
        tokio::time::sleep(tick).await;
        let Some(ws) = workspaces.upgrade() else {
            return;
        };
        let idle = (ws.idle)();
        let mut slots = ws.slots.lock();
        if slots.is_empty() {
            // Under the lock: a workspace inserted after this starts a new reaper.
            ws.reaper_running.store(false, Ordering::Release);
            return;
        }
        let stale: Vec<PathBuf> = slots
            .iter()
            .filter(|(_, s)| {
                s.leases.load(Ordering::Acquire) == 0 && s.last_used.lock().elapsed() >= idle
            })
            .map(|(r, _)| r.clone())
            .collect();
        // Its folder goes with it (written again when it comes up again); done under the lock so
        // a workspace opened again meanwhile never loses the files it writes.
        for root in stale {
            let Some(slot) = slots.remove(&root) else {
                continue;
            };
            let dir = &slot.dirs.state_dir;
            if let Err(e) = std::fs::remove_dir_all(dir)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove an idle workspace's folder");
            }
            tracing::info!(workspace = %root.display(), "workspace down: idle");
            for l in ws.listeners.read().iter() {
                l.workspace_down(&root);
            }
        }
    }
}

impl WorkspaceHost for Workspaces {
    fn open(&self, root: &Path) -> WorkspaceDirs {
        Workspaces::open(self, root)
    }

    fn subscribe(&self, listener: Arc<dyn WorkspaceListener>) {
        Workspaces::subscribe(self, listener);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl WorkspaceListener for Heard {
        fn workspace_up(&self, root: &Path, dirs: &WorkspaceDirs) {
            self.0
                .lock()
                .push(format!("up {} {}", root.display(), dirs.bin_dir.display()));
        }
        fn workspace_down(&self, root: &Path) {
            self.0.lock().push(format!("down {}", root.display()));
        }
    }

    #[tokio::test]
    async fn every_listener_hears_a_workspace_come_up_once_and_go_down_when_idle() {
        let home = tempfile::tempdir().unwrap();
        let ws = Workspaces::new(home.path().into(), Arc::new(|| Duration::ZERO));
        let (a, b) = (Arc::new(Heard::default()), Arc::new(Heard::default()));
        ws.subscribe(a.clone());
        ws.subscribe(b.clone());
        let root = Path::new("/p/app");
        let bound = ws.bind(root);
        let again = ws.open(root);
        assert_eq!(bound.bin_dir, again.bin_dir);
        assert!(bound.bin_dir.starts_with(home.path()));
        std::fs::create_dir_all(&bound.bin_dir).unwrap();
        let up = format!("up /p/app {}", bound.bin_dir.display());
        assert_eq!(*a.0.lock(), vec![up.clone()]);
        assert_eq!(ws.list()[0].sessions, 1);
        // An unheld workspace goes down at the reaper's next look; the held one stays up.
        let other = Path::new("/p/other");
        ws.open(other);
        let deadline = Instant::now() + Duration::from_secs(10);
        let wait_down = async |root: &Path| {
            while ws.is_up(root) {
                assert!(
                    Instant::now() < deadline,
                    "{} never went down",
                    root.display()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        wait_down(other).await;
        assert!(ws.is_up(root), "a held workspace stays up however idle");
        drop(bound);
        wait_down(root).await;
        assert_eq!(
            b.0.lock()
                .iter()
                .filter(|l| l.contains("/p/app"))
                .collect::<Vec<_>>(),
            vec![&up, "down /p/app"]
        );
        assert!(!again.state_dir.exists(), "its folder is removed");
    }
}
