//! The live tail reaches the call's progress sink while the command still runs.

use parking_lot::Mutex;
use std::sync::Arc;

use super::tests::Fixture;
use super::*;

#[tokio::test]
async fn a_running_command_reports_its_latest_lines() {
    let f = Fixture::new();
    let reports: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let sink = {
        let reports = reports.clone();
        ProgressSink::new(move |tail, total| reports.lock().push((tail, total)))
    };
    // The command waits until the first report has been made, so the test needs no timing.
    let release = f.root().join("release");
    let watcher = {
        let reports = reports.clone();
        let release = release.clone();
        tokio::spawn(async move {
            synapse_wait(|| !reports.lock().is_empty()).await;
            std::fs::write(release, "").unwrap();
        })
    };
    let out = f
        .call_in(
            "main",
            ToolCall {
                command: "echo first; for i in $(seq 300); do [ -e release ] && break; sleep 0.1; \
                          done; echo done"
                    .into(),
                progress: Some(sink),
                ..Default::default()
            },
        )
        .await;
    watcher.await.unwrap();
    assert_eq!(out.output, "first\ndone\n");
    let reports = reports.lock();
    assert_eq!(reports[0], ("first".to_owned(), 6));
}

async fn synapse_wait(mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "no progress report");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
