//! The owner of every task the daemon spawns. [`spawn`] registers a task with one process-wide
//! tracker; when the daemon stops, `run` first shuts its subsystems down in order (clients, chat
//! sessions, shells, MCP servers), then [`stop_all`] ends whatever is still running — each task is
//! dropped at its next await — and waits for them, with a deadline, logging any that did not
//! end. A task therefore never outlives the daemon's orderly stop, and `daemon status` can say
//! how many are running.
//!
//! Why one tracker rather than a handle passed to each subsystem: tasks are spawned from deep
//! inside the shell, MCP and agent layers (a connection's reader, a shell's output pump), and
//! every one of them has the same owner and the same end — the daemon's. A handle threaded
//! through every constructor would say nothing more.

use std::future::Future;
use std::sync::LazyLock;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Tasks with one owner: they end when they complete or when the owner stops them.
#[derive(Default)]
pub struct TaskOwner {
    tracker: TaskTracker,
    stop: CancellationToken,
}

impl TaskOwner {
    /// Spawns `fut`: it ends when it completes (`Some(output)`) or when [`stop_all`]
    /// (Self::stop_all) runs (`None`), whichever comes first.
    pub fn spawn<F>(&self, fut: F) -> JoinHandle<Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let stop = self.stop.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                biased;
                () = stop.cancelled() => None,
                out = fut => Some(out),
            }
        })
    }

    /// Tasks running now.
    pub fn running(&self) -> usize {
        self.tracker.len()
    }

    /// Ends every task (each is dropped at its next await) and waits for them up to
    /// `deadline`. Returns how many had still not ended then.
    pub async fn stop_all(&self, deadline: Duration) -> usize {
        self.stop.cancel();
        self.tracker.close();
        if tokio::time::timeout(deadline, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                tasks = self.tracker.len(),
                "tasks still running at the end of the stop deadline"
            );
        }
        self.tracker.len()
    }
}

/// The daemon's tasks.
static DAEMON: LazyLock<TaskOwner> = LazyLock::new(TaskOwner::default);

/// Spawns `fut`, owned by the daemon ([`TaskOwner::spawn`]).
pub fn spawn<F>(fut: F) -> JoinHandle<Option<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    DAEMON.spawn(fut)
}

/// The daemon's tasks running now.
pub fn running() -> usize {
    DAEMON.running()
}

/// Ends the daemon's tasks ([`TaskOwner::stop_all`]); the daemon's last step before exit.
pub async fn stop_all(deadline: Duration) -> usize {
    DAEMON.stop_all(deadline).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stopping_ends_endless_tasks_and_finished_ones_keep_their_output() {
        let owner = TaskOwner::default();
        let done = owner.spawn(async { 7 });
        assert_eq!(done.await.unwrap(), Some(7));
        let endless = owner.spawn(std::future::pending::<()>());
        let looping = owner.spawn(async {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        assert_eq!(owner.running(), 2);
        assert_eq!(owner.stop_all(Duration::from_secs(5)).await, 0);
        assert_eq!(endless.await.unwrap(), None);
        assert_eq!(looping.await.unwrap(), None::<()>);
        // Spawned after the stop: ends at once.
        assert_eq!(
            owner.spawn(std::future::pending::<()>()).await.unwrap(),
            None
        );
    }
}
