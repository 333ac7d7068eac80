//! Issue 17, end to end: long work. Background jobs the model starts, polls, and kills (and
//! that die with their session), and the timeout settings `shell.defaultTimeoutSec` /
//! `shell.maxTimeoutSec` in settings.json.

use synapse_tests::{DEADLINE, Run, TestEnv, processes_matching, run, wait_until};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").args(args);
    run(&mut cmd)
}

/// Polls `job read ID` until its output (accumulated over reads) contains `needle`.
fn read_until(env: &TestEnv, id: u32, needle: &str) -> String {
    let mut seen = String::new();
    let line = format!("job read {id}");
    wait_until(DEADLINE, &format!("job {id} to print {needle:?}"), || {
        let r = exec(env, &[&line]);
        assert_eq!(r.code, Some(0), "{}", r.stdout);
        seen.push_str(&r.stdout);
        seen.contains(needle)
    });
    seen
}

#[test]
fn a_background_job_is_started_polled_and_killed() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(
        &env,
        &["job start 'echo begin-$((1+1)); sleep 1818.5 & wait'"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stdout.starts_with("started job 1 in the background"),
        "{}",
        r.stdout
    );
    // The call returned at once; the job goes on.
    // The output, not the command line echoed in the status line.
    let seen = read_until(&env, 1, "begin-2");
    assert!(seen.contains("job 1: running for"), "{seen}");
    // A second read returns only what is new.
    let again = exec(&env, &["job read 1"]);
    assert!(
        again.stdout.starts_with("(no new output)"),
        "{}",
        again.stdout
    );
    let status = env.cli(&["daemon", "status"]);
    assert!(status.stdout.contains("jobs      1"), "{}", status.stdout);
    let list = exec(&env, &["job list"]);
    assert!(
        list.stdout.contains("job 1: running for"),
        "{}",
        list.stdout
    );

    let kill = exec(&env, &["job kill 1"]);
    assert_eq!(kill.code, Some(0), "{}", kill.stdout);
    assert!(
        kill.stdout.contains("job 1: killed after"),
        "{}",
        kill.stdout
    );
    assert!(
        processes_matching("sleep 1818.5").is_empty(),
        "the job's sleep survived"
    );
    let status = env.cli(&["daemon", "status"]);
    assert!(status.stdout.contains("jobs      0"), "{}", status.stdout);
}

#[test]
fn a_jobs_exit_status_is_visible_and_compound_lines_share_the_jobs() {
    let env = TestEnv::new();
    env.start_daemon();
    // `job` inside a list goes through the agent channel; the job lands in the same session.
    let r = exec(&env, &["job start 'echo o$((1))ut; exit 3' && echo queued"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stdout.contains("started job 1") && r.stdout.ends_with("queued\n"),
        "{}",
        r.stdout
    );
    wait_until(DEADLINE, "job 1 to exit", || {
        exec(&env, &["job list"])
            .stdout
            .contains("job 1: exited with status 3")
    });
    let r = exec(&env, &["job read 1"]);
    assert!(r.stdout.starts_with("o1ut\n"), "{}", r.stdout);
    assert!(r.stdout.contains("exited with status 3"), "{}", r.stdout);
    let r = exec(&env, &["job read 7"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout.contains("no job 7 in this session"),
        "{}",
        r.stdout
    );
}

#[test]
fn jobs_die_with_their_session() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(&env, &["job start 'sleep 1818.7'"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    wait_until(DEADLINE, "the job's sleep to start", || {
        !processes_matching("sleep 1818.7").is_empty()
    });
    env.stop_daemon();
    wait_until(DEADLINE, "the job's sleep to be killed", || {
        processes_matching("sleep 1818.7").is_empty()
    });
}

#[test]
fn timeout_settings_set_the_default_and_the_maximum() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"shell": {"defaultTimeoutSec": 1, "maxTimeoutSec": 5}}"#,
    )
    .unwrap();
    env.start_daemon();
    let r = exec(&env, &["sleep 1818.9; echo late"]);
    assert_eq!(r.code, Some(124), "{}", r.stdout);
    assert!(r.stdout.contains("timed out after 1 s"), "{}", r.stdout);
    assert!(!r.stdout.contains("late"), "{}", r.stdout);
    let r = exec(&env, &["bash --timeout 4 'sleep 1.5; echo in time'"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert_eq!(r.stdout, "in time\n");
    let r = exec(&env, &["bash --timeout 6 'echo never'"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("over the limit of 5 s (settings.json shell.maxTimeoutSec)")
            && r.stdout.contains("job start"),
        "{}",
        r.stdout
    );
}
