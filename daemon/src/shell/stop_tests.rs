//! In-process tests of stopping a command: timeouts and cancels end the whole submitted line,
//! kill every process it started, and leave the session shell (cwd, environment) usable.

use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::tests::{Fixture, count_processes, wait_until};
use super::*;

#[tokio::test]
async fn timeout_kills_the_process_group_and_the_session_goes_on() {
    let f = Fixture::new();
    f.ok("export KEEP=yes").await;
    let call = ToolCall {
        command: "sleep 987.11 & sleep 987.12; wait".into(),
        timeout: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    let r = f.call_in("main", call).await;
    assert!(r.timed_out);
    assert_eq!(r.exit_code, 124);
    assert!(
        r.output.contains("[command timed out after 0.5 s"),
        "{}",
        r.output
    );
    wait_until(Duration::from_secs(5), "sleeps to die", || {
        count_processes(&["sleep", "987.11"]) + count_processes(&["sleep", "987.12"]) == 0
    })
    .await;
    assert!(!r.restarted, "{}", r.output);
    assert_eq!(f.ok("echo $KEEP").await, "yes\n");
}

#[tokio::test]
async fn background_jobs_of_earlier_commands_survive_a_timeout() {
    let f = Fixture::new();
    f.ok("sleep 987.21 &").await;
    wait_until(Duration::from_secs(5), "background sleep", || {
        count_processes(&["sleep", "987.21"]) == 1
    })
    .await;
    let call = ToolCall {
        command: "sleep 987.22".into(),
        timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    assert!(f.call_in("main", call).await.timed_out);
    assert_eq!(count_processes(&["sleep", "987.22"]), 0);
    assert_eq!(count_processes(&["sleep", "987.21"]), 1);
    f.sessions.close_all().await;
    assert_eq!(
        count_processes(&["sleep", "987.21"]),
        0,
        "close_all leaves no processes"
    );
}

#[tokio::test]
async fn cancel_kills_the_command() {
    let f = Fixture::new();
    let cancel = CancellationToken::new();
    let origin = SessionOrigin {
        cwd: f.root(),
        env: Vec::new(),
        sandbox: None,
        workspace: None,
        private_tmp: None,
        spare_tmp: None,
    };
    let call = ToolCall {
        command: "sleep 987.31 & sleep 987.32; wait".into(),
        ..Default::default()
    };
    let sessions = f.sessions.clone();
    let token = cancel.clone();
    let run = tokio::spawn(async move { sessions.execute("main", &origin, &call, &token).await });
    wait_until(Duration::from_secs(5), "sleeps to start", || {
        count_processes(&["sleep", "987.31"]) + count_processes(&["sleep", "987.32"]) == 2
    })
    .await;
    cancel.cancel();
    let r = run.await.unwrap().unwrap();
    assert_eq!(r.exit_code, 130);
    assert!(r.output.contains("[command cancelled"), "{}", r.output);
    assert_eq!(
        count_processes(&["sleep", "987.31"]) + count_processes(&["sleep", "987.32"]),
        0
    );
    // bash may first report the killed background job (`[1]+ Terminated …`), as in a terminal.
    let next = f.ok("echo still").await;
    assert!(next.ends_with("still\n"), "{next}");
}

#[tokio::test]
async fn a_busy_loop_of_builtins_is_stopped_and_the_shell_kept() {
    let f = Fixture::new();
    f.ok("cd /tmp && export KEEP=loop").await;
    let call = ToolCall {
        command: "while :; do :; done; echo after-loop".into(),
        timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let r = f.call_in("main", call).await;
    assert!(r.timed_out && !r.restarted, "{}", r.output);
    assert!(!r.output.contains("after-loop"), "{}", r.output);
    assert_eq!(f.ok("pwd; echo $KEEP").await, "/tmp\nloop\n");
}

#[tokio::test]
async fn a_timeout_stops_the_rest_of_the_line() {
    let f = Fixture::new();
    f.ok("export KEEP=yes; mkdir d && cd d").await;
    let call = ToolCall {
        command: "sleep 987.41; touch after; echo touched".into(),
        timeout: Some(Duration::from_millis(400)),
        ..Default::default()
    };
    let r = f.call_in("main", call).await;
    assert!(r.timed_out, "{}", r.output);
    assert!(!r.output.contains("touched"), "{}", r.output);
    assert_eq!(count_processes(&["sleep", "987.41"]), 0);
    assert!(!f.root().join("d/after").exists());
    // Functions and loops are left too, and the shell comes back as it was.
    let call = ToolCall {
        command: "f() { for i in 1 2; do sleep 987.42; echo looped; done; }; f; touch after2"
            .into(),
        timeout: Some(Duration::from_millis(400)),
        ..Default::default()
    };
    let r = f.call_in("main", call).await;
    assert!(r.timed_out && !r.output.contains("looped"), "{}", r.output);
    assert!(!f.root().join("d/after2").exists());
    assert_eq!(f.ok("echo $KEEP; basename $PWD").await, "yes\nd\n");
}
