//! End to end: `synapse exec` against a real `synapsed`, printing what the model would see.
//! Each scenario of the Bash tool (issue 3) through the real client, the socket and the daemon.

use std::process::{Child, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use synapse_tests::{DEADLINE, Run, TestEnv, processes_matching, run, wait_until};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").args(args);
    run(&mut cmd)
}

/// `synapse exec <command>` that must succeed; returns its stdout.
fn ok(env: &TestEnv, command: &str) -> String {
    let r = exec(env, &[command]);
    assert_eq!(r.code, Some(0), "{command:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

fn started() -> TestEnv {
    let env = TestEnv::new();
    env.start_daemon();
    env
}

#[test]
fn cd_and_export_persist_and_restart_clears_them() {
    let env = started();
    ok(&env, "cd /tmp");
    ok(&env, "export X=1");
    assert_eq!(ok(&env, "pwd; echo $X"), "/tmp\n1\n");
    let r = exec(&env, &["--restart", "echo \"[$X]\"; pwd"]);
    assert_eq!(r.stdout, format!("[]\n{}\n", env.workdir().display()));
    let r = exec(&env, &["exit 3"]);
    assert_eq!(r.code, Some(3), "{}", r.stdout);
    let r = exec(&env, &["ls /nonexistent-dir"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stdout.contains("No such file or directory") && r.stdout.ends_with("[exit code: 2]\n")
    );
}

#[test]
fn write_read_edit_in_the_shells_directory() {
    let env = started();
    let work = env.workdir();
    assert_eq!(
        ok(&env, r#"write d/a.txt $'L1\nL2\nL2'"#),
        "Created d/a.txt (3 lines, 8 bytes)\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("d/a.txt")).unwrap(),
        "L1\nL2\nL2"
    );
    assert_eq!(
        ok(&env, "read d/a.txt --offset 1 --limit 1"),
        "     2\tL2\n[lines 2-2 of 3; more with `read d/a.txt --offset 2`]\n"
    );
    let file = work.join("d/a.txt");
    let before = std::fs::read(&file).unwrap();
    let r = exec(&env, &["edit d/a.txt L2 L3"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout
            .contains("occurs 2 times in d/a.txt (lines 2, 3); nothing changed"),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let r = exec(&env, &["edit d/a.txt nothere x"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(
        ok(&env, "edit d/a.txt L1 L0"),
        "Replaced 1 occurrence in d/a.txt (line 1)\n"
    );
    assert_eq!(
        ok(&env, "edit d/a.txt L2 L3 --all"),
        "Replaced 2 occurrences in d/a.txt (lines 2, 3)\n"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "L0\nL3\nL3");

    ok(&env, "mkdir sub && echo 'in sub' > sub/a.txt");
    ok(&env, "cd sub");
    assert_eq!(ok(&env, "read a.txt"), "     1\tin sub\n");
    ok(&env, r#"write f "use ls -h here""#);
    assert_eq!(
        std::fs::read_to_string(work.join("sub/f")).unwrap(),
        "use ls -h here"
    );
}

#[test]
fn help_and_usage_errors() {
    let env = started();
    assert_eq!(
        ok(&env, "read -h"),
        "usage: read <path> [--offset N] [--limit N]\nShow a text file with numbered lines (like `cat -n`).\n"
    );
    assert!(
        ok(&env, "read --help").contains("--limit N     number of lines to show (default 2000)")
    );
    let r = exec(&env, &["read"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stdout,
        "read: missing <path>\nusage: read <path> [--offset N] [--limit N]\nrun `read --help` for details\n[exit code: 2]\n"
    );
    let r = exec(&env, &[r#"Bash(command="ls")"#]);
    assert_eq!(r.code, Some(2));
    assert!(r.stdout.contains("looks like a tool call"), "{}", r.stdout);
}

#[test]
fn pipelines_and_redirects_run_in_bash() {
    let env = started();
    assert_eq!(ok(&env, "printf 'b\\na\\n' | sort"), "a\nb\n");
    ok(&env, "echo hello > out.txt");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("out.txt")).unwrap(),
        "hello\n"
    );
    // In a compound line `read` with a file is still the agent command (issue 17); with bash
    // `read` options it is bash's builtin.
    assert_eq!(ok(&env, "read out.txt < /dev/null"), "     1\thello\n");
    assert_eq!(ok(&env, r#"read -r v < out.txt; echo "[$v]""#), "[hello]\n");
}

#[test]
fn timeout_kills_the_process_group_and_the_session_goes_on() {
    let env = started();
    ok(&env, "export KEEP=1");
    let r = exec(
        &env,
        &["--timeout", "1", "sleep 987.41 & sleep 987.42; wait"],
    );
    assert_eq!(r.code, Some(124), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("[command timed out after 1 s"),
        "{}",
        r.stdout
    );
    wait_until(DEADLINE, "no sleep left", || {
        processes_matching("sleep 987.41").is_empty()
            && processes_matching("sleep 987.42").is_empty()
    });
    // No "[1]+ Terminated" notice of the killed job leaks into the next output.
    assert_eq!(ok(&env, "echo $KEEP"), "1\n");
}

#[test]
fn a_client_that_goes_away_cancels_its_command() {
    let env = started();
    let mut cmd = env.synapse();
    cmd.args(["exec", "sleep 987.51 & sleep 987.52; wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut client: Child = cmd.spawn().unwrap();
    wait_until(DEADLINE, "both sleeps running", || {
        processes_matching("sleep 987.51").len() == 1
            && processes_matching("sleep 987.52").len() == 1
    });
    client.kill().unwrap();
    client.wait().unwrap();
    wait_until(DEADLINE, "the sleeps to be killed", || {
        processes_matching("sleep 987.51").is_empty()
            && processes_matching("sleep 987.52").is_empty()
    });
    assert_eq!(ok(&env, "echo next"), "next\n");
}

#[test]
fn five_megabytes_of_output_are_capped() {
    let env = started();
    let out = ok(
        &env,
        "head -c 5000000 /dev/zero | tr '\\0' 'x' | fold -w 100",
    );
    assert!(out.len() < 31_000, "{} bytes", out.len());
    assert!(
        out.contains("bytes of output omitted; total 5049999 bytes"),
        "{}",
        out.get(14_000..16_500).unwrap_or(&out)
    );
    assert!(out.starts_with(&"x".repeat(100)) && out.ends_with(&format!("{}\n", "x".repeat(100))));
}

#[test]
fn sessions_do_not_share_cwd_or_env() {
    let env = started();
    assert_eq!(
        exec(&env, &["--session", "a", "cd /tmp && export ONLY=a"]).code,
        Some(0)
    );
    let b = exec(&env, &["--session", "b", "pwd; echo \"[$ONLY]\""]);
    assert_eq!(b.stdout, format!("{}\n[]\n", env.workdir().display()));
    assert_eq!(
        exec(&env, &["--session", "a", "pwd; echo $ONLY"]).stdout,
        "/tmp\na\n"
    );
}

#[test]
fn closing_stdout_or_killing_the_shell_leaves_the_session_usable() {
    let env = started();
    let r = exec(&env, &["exec 1>&-; echo gone"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(ok(&env, "echo back"), "back\n");
    let r = exec(&env, &["kill $$"]);
    assert!(
        r.stdout.contains("[the shell exited (status 143)]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("a new shell was started in"),
        "{}",
        r.stdout
    );
    assert_eq!(ok(&env, "echo alive"), "alive\n");
}

#[test]
fn stopping_the_daemon_kills_every_shell_and_its_jobs() {
    let env = started();
    ok(&env, "sleep 987.61 &");
    assert_eq!(
        exec(&env, &["--session", "other", "sleep 987.62 &"]).code,
        Some(0)
    );
    wait_until(DEADLINE, "background sleeps", || {
        processes_matching("sleep 987.61").len() == 1
            && processes_matching("sleep 987.62").len() == 1
    });
    let home = env.home().display().to_string();
    let shells_before = shells_of(&home);
    assert!(shells_before >= 2, "expected the sessions' bash processes");
    let stop = env.cli(&["daemon", "stop"]);
    assert!(stop.success(), "{}{}", stop.stdout, stop.stderr);
    wait_until(Duration::from_secs(10), "no orphans after shutdown", || {
        processes_matching("sleep 987.61").is_empty()
            && processes_matching("sleep 987.62").is_empty()
            && shells_of(&home) == 0
    });
    // Every task the daemon spawned ended with it (readers, reapers, the busy sessions' work).
    let log = || -> String {
        std::fs::read_dir(env.paths().logs_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .collect()
    };
    wait_until(Duration::from_secs(10), "the stop is logged", || {
        log().contains("synapsed stopped")
    });
    let log = log();
    let stopped = log
        .lines()
        .find(|l| l.contains("synapsed stopped"))
        .unwrap_or_default();
    assert!(stopped.contains("tasks_left=0"), "{stopped}");
}

/// Live `bash` processes whose PATH starts with this installation's bin folder.
fn shells_of(home: &str) -> usize {
    // The user's bin folder on PATH (after the workspace's own).
    let needle = format!("{home}/bin:");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| synapse_tests::pid_alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"bash\0"))
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|e| {
                e.split(|&b| b == 0).any(|v| {
                    v.starts_with(b"PATH=")
                        && v.windows(needle.len()).any(|w| w == needle.as_bytes())
                })
            })
        })
        .count()
}
