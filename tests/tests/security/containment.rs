//! Issue 27, per-session limits and debris, through the real daemon: a process that left its
//! session every way it can (`setsid`, a double fork, the shell's tags dropped) is gone once the
//! session ends; a session that hits its process limit gets a clear error while the daemon and
//! other sessions carry on; a session's spill files stop at its budget; what a SIGKILLed daemon
//! left on disk is removed by the next one; an MCP server's `setsid` grandchild ends with
//! `daemon stop`.

use std::path::{Path, PathBuf};
use std::process::Command;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, pid_alive, processes_matching, run, wait_until};

fn exec(env: &TestEnv, session: &str, line: &str) -> Run {
    let mut cmd = env.synapse();
    cmd.args(["exec", "--session", session, line]);
    run(&mut cmd)
}

fn write_settings(env: &TestEnv, settings: &serde_json::Value) {
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.home().join("settings.json"), settings.to_string()).unwrap();
}

/// The pid a process wrote to `file`, once it has.
fn pid_in(file: &Path) -> u32 {
    let mut pid = 0;
    wait_until(DEADLINE, "the escaped process to write its pid", || {
        pid = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        pid > 0
    });
    pid
}

fn size(file: &Path) -> u64 {
    std::fs::metadata(file).map_or(0, |m| m.len())
}

/// Waits until `pid` is gone, then proves `grow` stopped growing: nothing is left to write it.
fn assert_gone_and_file_still(pid: u32, grow: &Path, what: &str) {
    wait_until(DEADLINE, what, || !pid_alive(pid));
    let at_end = size(grow);
    assert!(
        at_end > 0,
        "{} never grew: the process did not run",
        grow.display()
    );
    let needle = grow.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        processes_matching(&needle),
        Vec::<u32>::new(),
        "something still writes {needle}"
    );
    assert_eq!(size(grow), at_end, "{} still grows", grow.display());
}

/// Everything the daemon logged so far.
fn daemon_log(env: &TestEnv) -> String {
    std::fs::read_dir(env.home().join("logs"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_left_its_session_every_way_is_gone_when_the_session_ends() {
    let env = TestEnv::new();
    let grow = env.workdir().join("containment-grow.log");
    let pidfile = env.workdir().join("escaped.pid");
    // A double fork into a new session, with every tag the daemon could find it by dropped.
    let escape = "env -u SYNAPSE_SHELL_TAG -u SYNAPSE_COMMAND_TAG -u SYNAPSE_DAEMON_OWNER \
         setsid sh -c 'sh -c \"echo \\$\\$ > escaped.pid; while :; do echo x >> containment-grow.log; \
         sleep 0.05; done\" & exit 0' </dev/null >/dev/null 2>&1 & \
         for i in $(seq 200); do [ -s containment-grow.log ] && [ -s escaped.pid ] && break; sleep 0.05; done; \
         p=$(cat escaped.pid); echo \"escaped=$p shell_sid=$(ps -o sid= -p $$ | tr -d ' ') \
         its_sid=$(ps -o sid= -p $p | tr -d ' ')\"; \
         tr '\\0' '\\n' < /proc/$p/environ \
         | grep -c -E '^SYNAPSE_(SHELL_TAG|COMMAND_TAG|DAEMON_OWNER)=' || true";
    let fake = FakeLlm::start(Script::new().tool_call(escape).text("left it running"))
        .await
        .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--yes", "start a background writer"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let said = fake.requests()[1].last_tool_result().unwrap();
    let field = |name: &str| {
        said.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in: {said}"))
            .to_string()
    };
    // It really escaped: another session, and no tag of ours in its environment.
    assert_ne!(field("shell_sid"), field("its_sid"), "{said}");
    assert!(said.trim_end().ends_with('0'), "tags left: {said}");
    let pid = pid_in(&pidfile);
    assert_eq!(field("escaped"), pid.to_string());
    // The run is over, so is its session: the writer is gone and the file stays as it was.
    assert_gone_and_file_still(pid, &grow, "the escaped writer to end with its session");
}

#[test]
fn a_session_at_its_process_limit_fails_clearly_and_nothing_else_suffers() {
    let env = TestEnv::new();
    write_settings(&env, &serde_json::json!({"shell": {"maxProcesses": 50}}));
    env.start_daemon();
    let log = daemon_log(&env);
    let cgroup = log.contains("per-session process limit: a pids cgroup per session");
    if !cgroup && log.contains("per-session process limit: not enforced") {
        eprintln!("no pids cgroup and root here: nothing enforces a process limit to test");
        return;
    }
    // dash gives up at the first refused fork (bash would retry for seconds).
    let r = exec(
        &env,
        "forky",
        "sh -c 'i=0; while [ $i -lt 120 ]; do sleep 6001 & i=$((i+1)); done' 2>&1; echo \"exit=$?\"",
    );
    assert!(
        r.stdout.contains("Cannot fork") || r.stdout.contains("Resource temporarily unavailable"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("exit=0"), "{r:?}");
    let sleeping = processes_matching("sleep 6001").len();
    if cgroup {
        assert!(
            r.stdout.contains(
                "this session reached its limit of 50 processes (settings.json shell.maxProcesses)"
            ),
            "{r:?}"
        );
        assert!((40..=50).contains(&sleeping), "{sleeping} sleeps ran");
    }
    // The session itself still answers (a builtin needs no new process); another session, and
    // the daemon, are untouched.
    assert_eq!(
        exec(&env, "forky", "echo still-here").stdout,
        "still-here\n"
    );
    let other = exec(&env, "other", "for i in 1 2 3; do /bin/echo other-$i; done");
    assert_eq!(other.stdout, "other-1\nother-2\nother-3\n", "{other:?}");
    assert!(env.cli(&["daemon", "status"]).success());
    // Closing the daemon ends them all.
    env.stop_daemon();
    wait_until(DEADLINE, "the session's processes to end", || {
        processes_matching("sleep 6001").is_empty()
    });
}

#[test]
fn a_sessions_spill_files_stop_at_its_budget() {
    let env = TestEnv::new();
    write_settings(&env, &serde_json::json!({"shell": {"maxSpillMiB": 1}}));
    env.start_daemon();
    let long = "yes 0123456789abcdef | head -c 700000";
    let first = exec(&env, "spilly", long);
    assert!(
        first.stdout.contains("the full output is in"),
        "{}",
        tail(&first.stdout)
    );
    let second = exec(&env, "spilly", long);
    let budget_note =
        "this session has used its spill budget of 1 MiB (settings.json shell.maxSpillMiB)";
    assert!(
        second.stdout.contains("only the first ") && second.stdout.contains(budget_note),
        "{}",
        tail(&second.stdout)
    );
    let third = exec(&env, "spilly", long);
    assert!(
        third.stdout.contains(&format!(
            "the full output could not be saved ({budget_note}"
        )),
        "{}",
        tail(&third.stdout)
    );
    // What the session saved holds 1 MiB at most; another session has its own budget.
    let saved: u64 = spill_files(env.home())
        .iter()
        .filter(|p| p.to_string_lossy().contains("spilly"))
        .map(|p| size(p))
        .sum();
    assert!(saved <= 1024 * 1024, "{saved} bytes saved");
    let elsewhere = exec(&env, "roomy", long);
    assert!(
        elsewhere.stdout.contains("the full output is in"),
        "{}",
        tail(&elsewhere.stdout)
    );
}

/// The session's private `TMPDIR` is bounded like its spill: past `shell.maxTmpMiB` at the end
/// of a call its files are removed and the model is told why, so a session cannot fill the disk
/// through it; below the limit nothing is touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_temp_folder_stays_within_its_limit() {
    let env = TestEnv::new();
    write_settings(&env, &serde_json::json!({"shell": {"maxTmpMiB": 1}}));
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("head -c 1000 /dev/zero > \"$TMPDIR/small\" && echo small-written")
            .tool_call("ls \"$TMPDIR\"")
            .tool_call("head -c 3000000 /dev/zero > \"$TMPDIR/big\" && echo big-written")
            .tool_call("ls -A \"$TMPDIR\" | wc -l")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--permission-mode", "auto", "fill the temp folder"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let result = |n: usize| {
        fake.requests()[n + 1]
            .last_tool_result()
            .unwrap_or_default()
    };
    assert!(
        result(1).contains("small"),
        "within the limit nothing goes: {}",
        result(1)
    );
    let over = result(2);
    assert!(
        over.contains("big-written")
            && over.contains("held more than its limit of 1 MiB")
            && over.contains("shell.maxTmpMiB"),
        "{over}"
    );
    assert_eq!(
        result(3).trim(),
        "0",
        "the folder was emptied: {}",
        result(3)
    );
}

fn tail(text: &str) -> &str {
    let mid = text.find("[...").unwrap_or(0);
    &text[mid..text.len().min(mid + 600)]
}

fn spill_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(spill_files(&path));
        } else if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("output-"))
        {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_killed_daemon_left_on_disk_is_removed_by_the_next() {
    let env = TestEnv::new();
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let start = || {
        let mut cmd = env.synapse();
        cmd.env("TMPDIR", &tmp).args(["daemon", "start"]);
        let started = run(&mut cmd);
        assert!(started.success(), "{started:?}");
        env.daemon_pid().unwrap()
    };
    start();
    // Where this daemon keeps its sessions' private TMPDIRs.
    let fake = FakeLlm::start(Script::new().tool_call("echo \"tmp=$TMPDIR\"").text("ok"))
        .await
        .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--yes", "where is tmp"]);
    assert!(synapse_tests::run_async(cmd).await.success());
    let said = fake.requests()[1].last_tool_result().unwrap();
    let session_tmp = PathBuf::from(said.trim().strip_prefix("tmp=").unwrap());
    let base = session_tmp.parent().unwrap().to_path_buf();
    assert!(base.starts_with(&tmp), "{}", base.display());

    // Killed hard, mid-write of the settings and with a session open.
    let daemon = env.daemon_pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(daemon).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait_until(DEADLINE, "the daemon to die", || !pid_alive(daemon));
    let dead_session = base.join("session-dead123");
    std::fs::create_dir_all(dead_session.join("work")).unwrap();
    std::fs::write(dead_session.join("work/scratch.txt"), "x").unwrap();
    let old_temp = env.home().join(".settings.json.tmp.123");
    std::fs::write(&old_temp, "{").unwrap();
    let touched = Command::new("touch")
        .args(["-d", "2 hours ago"])
        .arg(&old_temp)
        .status()
        .unwrap();
    assert!(touched.success());
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_writer = gone.id();
    gone.wait().unwrap();
    std::fs::create_dir_all(env.home().join("skills")).unwrap();
    let dead_temp = env
        .home()
        .join(format!("skills/.index.json.tmp.{dead_writer}.0"));
    std::fs::write(&dead_temp, "{").unwrap();
    // A write by a live process (this test) right now is not debris.
    let live_temp = env
        .home()
        .join(format!(".settings.json.tmp.{}.9", std::process::id()));
    std::fs::write(&live_temp, "{").unwrap();
    // Another daemon's folder of session TMPDIRs is not this one's to clean.
    let foreign = base
        .with_file_name("d-0123456789abcdef")
        .join("session-alive");
    std::fs::create_dir_all(&foreign).unwrap();

    start();
    wait_until(DEADLINE, "the debris to be removed", || {
        !old_temp.exists() && !dead_temp.exists() && !dead_session.exists()
    });
    assert!(live_temp.exists(), "a live writer's temp file was removed");
    assert!(foreign.exists(), "another daemon's folder was touched");
    assert!(
        daemon_log(&env).contains("removed what a daemon that died left behind"),
        "not logged"
    );
}

#[test]
fn an_mcp_servers_setsid_grandchild_ends_with_daemon_stop() {
    let env = TestEnv::new();
    let grow = env.root().join("containment-mcp-grow.log");
    let pidfile = env.root().join("mcp-escaped.pid");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/security/containment_mcp.py");
    let config = serde_json::json!({"mcpServers": {"leaky": {
        "command": "python3",
        "args": [server, grow, pidfile],
    }}});
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(env.home().join("mcp/mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    let pid = pid_in(&pidfile);
    wait_until(DEADLINE, "the grandchild to write", || size(&grow) > 0);
    let listed = env.cli(&["mcp", "list"]);
    assert!(listed.stdout.contains("leaky"), "{listed:?}");

    let stopped = env.cli(&["daemon", "stop"]);
    assert!(stopped.success(), "{stopped:?}");
    assert_gone_and_file_still(
        pid,
        &grow,
        "the MCP server's grandchild to end with the daemon",
    );
}
