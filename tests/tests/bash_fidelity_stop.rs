//! Issue 17, end to end: stopping means stopped. A timeout or a cancel ends the whole submitted
//! line: nothing after the killed part runs, no process it started survives (background jobs
//! included), and the session shell keeps its folder and variables.

use std::process::Stdio;

use pretty_assertions::assert_eq;
use synapse_tests::{DEADLINE, Run, TestEnv, processes_matching, run, wait_until};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").args(args);
    run(&mut cmd)
}

#[test]
fn a_timeout_ends_the_whole_line_and_keeps_the_shell() {
    let env = TestEnv::new();
    env.start_daemon();
    assert_eq!(
        exec(&env, &["mkdir -p d && cd d && export KEEP=kept"]).code,
        Some(0)
    );
    let r = exec(
        &env,
        &[
            "--timeout",
            "2",
            "sleep 1717.1 & sleep 1717.2; touch after; echo touched",
        ],
    );
    assert_eq!(r.code, Some(124), "{}", r.stdout);
    assert!(!r.stdout.contains("touched"), "{}", r.stdout);
    assert!(r.stdout.contains("timed out after 2 s"), "{}", r.stdout);
    assert!(!env.workdir().join("d/after").exists());
    // Killed with the line: gone once the kernel has reaped them (a loaded machine takes a moment).
    // Only this line's own sleeps: `sleep 1717.3` belongs to the test beside this one.
    let left = || {
        let mut pids = processes_matching("sleep 1717.1");
        pids.extend(processes_matching("sleep 1717.2"));
        pids
    };
    let deadline = std::time::Instant::now() + DEADLINE;
    while !left().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the line's sleeps outlived its timeout: {}",
            synapse_tests::describe_processes(&left())
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = exec(&env, &["echo $KEEP; basename $PWD"]);
    assert_eq!(r.stdout, "kept\nd\n");
}

#[test]
fn a_cancel_ends_the_whole_line() {
    let env = TestEnv::new();
    env.start_daemon();
    let mut cmd = env.synapse();
    cmd.args(["exec", "sleep 1717.3; touch after-cancel; echo touched"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_until(DEADLINE, "the sleep to start", || {
        !processes_matching("sleep 1717.3").is_empty()
    });
    // Ctrl-C on `synapse exec` cancels the command in the daemon.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("touched"), "{stdout}");
    wait_until(DEADLINE, "the sleep to be killed", || {
        processes_matching("sleep 1717.3").is_empty()
    });
    // The line's later part never ran, even after the client went away.
    let r = exec(&env, &["sleep 0.2; ls"]);
    assert!(!r.stdout.contains("after-cancel"), "{}", r.stdout);
    assert!(!env.workdir().join("after-cancel").exists());
}
