//! Issue 2: the daemon's life as a user sees it — started by the first client, one per socket,
//! recovering from crashes and stale sockets, stopping cleanly (other users are refused: see
//! security.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use synapse_shared::proto::StatusRequest;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_tests::{DEADLINE, TestEnv, pid_alive, run, wait_until};

fn mode(path: &std::path::Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_cold_client_starts_the_daemon_and_creates_the_home() {
    let env = TestEnv::new();
    assert!(!env.home().exists());
    let out = env.cli(&["daemon", "status"]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("synapsed 0.1.0 running"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&env.paths().socket().display().to_string())
    );
    assert_eq!(mode(env.paths().socket()), 0o600, "socket must be private");
    assert_eq!(
        mode(&env.paths().socket_dir()),
        0o700,
        "socket folder must be private"
    );
    let settings = fs::read_to_string(env.paths().settings_file()).unwrap();
    assert!(settings.contains("\"autoEnhance\": false"), "{settings}");
    for dir in ["skills", "sessions", "bin", "logs", "mcp"] {
        assert!(env.home().join(dir).is_dir(), "{dir}/ missing");
    }
}

#[test]
fn racing_clients_start_exactly_one_daemon() {
    let env = TestEnv::new();
    let children: Vec<_> = (0..6)
        .map(|_| {
            env.synapse()
                .args(["daemon", "status", "--json"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut pids = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        pids.push(v["pid"].as_u64().unwrap());
    }
    pids.dedup();
    assert_eq!(pids.len(), 1, "clients saw different daemons: {pids:?}");
    let startup = fs::read_to_string(env.paths().startup_log()).unwrap_or_default();
    assert!(
        !startup.contains("already running"),
        "a second daemon was started:\n{startup}"
    );
}

#[test]
fn a_stale_socket_file_is_recovered() {
    let env = TestEnv::new();
    env.paths().ensure_layout().unwrap();
    // A socket file nobody listens on, as a crashed daemon leaves it.
    drop(std::os::unix::net::UnixListener::bind(env.paths().socket()).unwrap());
    assert!(env.paths().socket().exists());
    let out = env.cli(&["daemon", "status"]);
    assert!(out.success(), "{out:?}");
    let logs = env.cli(&["daemon", "logs", "-n", "50"]);
    assert!(
        logs.stdout.contains("removed a stale socket"),
        "{}",
        logs.stdout
    );
}

#[test]
fn after_sigkill_the_next_client_call_starts_a_new_daemon() {
    let env = TestEnv::new();
    let first = env.start_daemon();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first as i32),
        nix::sys::signal::SIGKILL,
    )
    .unwrap();
    wait_until(DEADLINE, "killed daemon to disappear", || !pid_alive(first));
    assert!(
        env.paths().socket().exists(),
        "SIGKILL leaves the socket file behind"
    );
    let out = env.cli(&["daemon", "status", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_ne!(v["pid"].as_u64().unwrap(), u64::from(first));
}

#[test]
fn a_second_synapsed_on_the_same_socket_exits_at_once() {
    let env = TestEnv::new();
    let pid = env.start_daemon();
    let out = run(&mut env.synapsed());
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("synapsed is already running with pid {pid}")),
        "{}",
        out.stderr
    );
    assert!(
        env.cli(&["daemon", "status"]).success(),
        "the first daemon must stay healthy"
    );
}

#[test]
fn stop_and_sigterm_remove_the_socket() {
    let env = TestEnv::new();
    let pid = env.start_daemon();
    let out = env.cli(&["daemon", "stop"]);
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), format!("synapsed stopped (pid {pid})"));
    assert!(!env.paths().socket().exists());
    assert!(!pid_alive(pid));
    assert_eq!(
        env.cli(&["daemon", "stop"]).stdout.trim(),
        "synapsed is not running"
    );

    let pid = env.start_daemon();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::SIGTERM,
    )
    .unwrap();
    wait_until(DEADLINE, "daemon to exit on SIGTERM", || !pid_alive(pid));
    assert!(
        !env.paths().socket().exists(),
        "SIGTERM must remove the socket"
    );
}

#[test]
fn corrupt_settings_are_reported_with_position_and_never_overwritten() {
    let env = TestEnv::new();
    env.paths().ensure_layout().unwrap();
    let corrupt = "{\n  \"skillEnhance\": {\n    \"autoEnhance\": \"yes\"\n  }\n}\n";
    fs::write(env.paths().settings_file(), corrupt).unwrap();
    let out = env.cli(&["daemon", "status"]);
    assert!(out.success(), "the daemon runs on defaults: {out:?}");
    let expected = format!("{}:3:", env.paths().settings_file().display());
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert!(
        out.stderr.contains("skillEnhance.autoEnhance"),
        "{}",
        out.stderr
    );
    assert_eq!(
        fs::read_to_string(env.paths().settings_file()).unwrap(),
        corrupt
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_status_calls_all_succeed() {
    let env = TestEnv::new();
    let pid = env.start_daemon();
    let calls = (0..200).map(|_| {
        let socket = env.paths().socket().to_path_buf();
        tokio::spawn(async move {
            let channel = synapse_shared::rpc::connect(&socket).await?;
            let status = DaemonClient::new(channel).status(StatusRequest {}).await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(status.into_inner().pid)
        })
    });
    for result in futures::future::join_all(calls).await {
        assert_eq!(result.unwrap().unwrap(), pid);
    }
}
