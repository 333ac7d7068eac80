//! The stop hook: work that runs after a turn completed normally, before the turn's last event
//! (the skill enhancer). [`after_completed_turn`] is the whole price every completed turn pays:
//! with no hook, or a hook that is off ([`StopHook::enabled`], an in-memory bool for the
//! enhancer), it returns without reading a file or copying anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// What the hook learns about the turn that just completed.
#[derive(Debug, Clone)]
pub struct FinishedTurn {
    /// The chat session id (also the name of its shell session).
    pub session_id: String,
    /// The session's JSON-lines log.
    pub session_file: PathBuf,
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
}

pub trait StopHook: Send + Sync {
    /// Whether the hook runs at all now; called after every completed turn, so it must be
    /// cheap (no file reads).
    fn enabled(&self) -> bool;

    /// Runs after a completed turn. Returns a report for the user, if any.
    fn after_turn<'a>(
        &'a self,
        turn: FinishedTurn,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Option<String>>;
}

/// Runs `hook` after a completed turn when there is one and it is enabled.
pub async fn after_completed_turn(
    hook: Option<&Arc<dyn StopHook>>,
    session_id: &str,
    session_file: &Path,
    cwd: &Path,
    env: &HashMap<String, String>,
    cancel: &CancellationToken,
) -> Option<String> {
    let hook = hook.filter(|h| h.enabled())?;
    let turn = FinishedTurn {
        session_id: session_id.to_string(),
        session_file: session_file.to_path_buf(),
        cwd: cwd.to_path_buf(),
        env: env.clone(),
    };
    hook.after_turn(turn, cancel.clone())
        .await
        .filter(|_| !cancel.is_cancelled())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    struct Hook {
        on: AtomicBool,
        runs: AtomicUsize,
    }

    impl StopHook for Hook {
        fn enabled(&self) -> bool {
            self.on.load(Ordering::Relaxed)
        }

        fn after_turn<'a>(
            &'a self,
            turn: FinishedTurn,
            _cancel: CancellationToken,
        ) -> BoxFuture<'a, Option<String>> {
            self.runs.fetch_add(1, Ordering::Relaxed);
            Box::pin(async move { Some(format!("enhanced after {}", turn.session_id)) })
        }
    }

    async fn call(hook: &Arc<dyn StopHook>, cancel: &CancellationToken) -> Option<String> {
        after_completed_turn(
            Some(hook),
            "s1",
            Path::new("/tmp/s1.jsonl"),
            Path::new("/tmp"),
            &HashMap::new(),
            cancel,
        )
        .await
    }

    #[tokio::test]
    async fn the_hook_reports_when_on_and_costs_nothing_when_off() {
        let hook = Arc::new(Hook {
            on: AtomicBool::new(false),
            runs: AtomicUsize::new(0),
        });
        let dyn_hook: Arc<dyn StopHook> = hook.clone();
        let cancel = CancellationToken::new();
        assert_eq!(call(&dyn_hook, &cancel).await, None);
        assert_eq!(
            hook.runs.load(Ordering::Relaxed),
            0,
            "an off hook never runs"
        );
        hook.on.store(true, Ordering::Relaxed);
        assert_eq!(
            call(&dyn_hook, &cancel).await.as_deref(),
            Some("enhanced after s1")
        );
        cancel.cancel();
        assert_eq!(
            call(&dyn_hook, &cancel).await,
            None,
            "a cancelled turn gets no report"
        );
        let none: Option<&Arc<dyn StopHook>> = None;
        assert_eq!(
            after_completed_turn(
                none,
                "s",
                Path::new("f"),
                Path::new("."),
                &HashMap::new(),
                &cancel
            )
            .await,
            None
        );
    }
}
