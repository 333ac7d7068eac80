//! The stop hook: work that runs after a turn completed normally, before the turn's last event
//! (the skill enhancer). The session calls it only when `skillEnhance.autoEnhance` is on, so
//! an idle hook costs one settings read per turn.

use std::collections::HashMap;
use std::path::PathBuf;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

pub trait StopHook: Send + Sync {
    /// Runs after a completed turn. `session_file` is the session's JSON-lines log; the hook
    /// reads at most its last `max_chars` characters. Returns a report for the user, if any.
    fn after_turn<'a>(
        &'a self,
        session_file: PathBuf,
        max_chars: usize,
        cwd: PathBuf,
        env: HashMap<String, String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Option<String>>;
}
