//! One shell session's place in [`super::ShellSessions`]: its [`ShellSession`] (behind the lock
//! that makes its calls run one at a time), and what lives and dies with it — scratch folder,
//! background jobs, process limit, spill budget. A pre-started spare ([`super::spare`]) is a slot
//! not yet in the map; the session that takes it over renames it at its first use.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::cgroup::ProcessLimit;
use super::limits::{SessionLimits, SpillBudget};
use super::session::ShellSession;
use crate::workspace::WorkspaceBinding;

pub(super) struct Slot {
    pub session: Arc<tokio::sync::Mutex<ShellSession>>,
    pub last_used: Mutex<Instant>,
    /// Set (under the session lock) when the slot left the map: a caller that got it just
    /// before must look again rather than revive a shell nobody would close.
    pub closed: AtomicBool,
    /// The session's spill files and job logs; removed with the session.
    pub scratch: PathBuf,
    pub jobs: Arc<super::jobs::JobTable>,
    /// The session's process limit (its cgroup, if any); ended with the session.
    pub processes: ProcessLimit,
    pub spill: Arc<SpillBudget>,
    /// A spare taken over by a session: the session's name and workspace hold, given to the
    /// [`ShellSession`] under its lock at its first use ([`Slot::adopt`]).
    pub handed_to: Mutex<Option<(String, Option<WorkspaceBinding>)>>,
    /// A taken-over spare's session's own spill folder (named by the session, not by the
    /// spare's `scratch`); removed with the session too.
    pub named_spills: Mutex<Option<PathBuf>>,
}

impl Slot {
    pub fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used.lock().elapsed()
    }

    /// Gives a taken-over spare its session's name and workspace hold (no-op otherwise); called
    /// with the session lock held.
    pub fn adopt(&self, session: &mut ShellSession) {
        if let Some((name, workspace)) = self.handed_to.lock().take() {
            session.hand_over(name, workspace);
        }
    }

    /// Kills the shell and the session's background jobs, and removes its scratch folder;
    /// called once the slot is out of the map.
    pub async fn close(&self) {
        // Jobs first: they do not hold the session lock, and a busy session still loses them.
        self.jobs.kill_all().await;
        let mut session = self.session.lock().await;
        self.closed.store(true, Ordering::Release);
        session.close().await;
        // Whatever escaped both the shell's and the jobs' keepers is still in the cgroup.
        self.processes.end().await;
        let _ = std::fs::remove_dir_all(&self.scratch);
        if let Some(spills) = self.named_spills.lock().take() {
            let _ = std::fs::remove_dir_all(spills);
        }
    }

    /// Applies the limits settings.json has now.
    pub fn apply(&self, limits: SessionLimits) {
        self.processes.set_max(limits.max_processes);
        self.spill.set_limit(limits.spill_budget_bytes);
    }
}
