//! Issue 27, "confinement can be shed" and "API keys are readable": whether a client is
//! sandboxed is decided by something its process cannot drop — descent from a process the daemon
//! started — so it holds with the daemon itself under `no_new_privs` (a container, systemd
//! `NoNewPrivileges=yes`), with the shell's tag dropped, a scrubbed environment, a new session or
//! a double fork; and the daemon's and the client's environments (the API key) cannot be read
//! from the sandbox through `/proc`.

use std::process::Command;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, TestEnv, bin, wait_until};

fn landlock() -> bool {
    Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn no_new_privs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1'))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_under_no_new_privs_still_refuses_its_sandboxed_clients() {
    let env = TestEnv::new();
    let mut start = Command::new("setpriv");
    start
        .arg("--no-new-privs")
        .arg(bin("synapse"))
        .args(["daemon", "start"]);
    env.apply_env(&mut start);
    let started = start.output().unwrap();
    assert!(started.status.success(), "{started:?}");
    let daemon = env.daemon_pid().unwrap();
    assert!(
        no_new_privs(daemon),
        "the daemon did not inherit no_new_privs"
    );

    let synapse = bin("synapse").display().to_string();
    // The socket's path, for a command that scrubs its whole environment.
    std::fs::write(
        env.workdir().join("socket.txt"),
        env.paths().socket().as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    let out_dir = env.root().join("escapes");
    std::fs::create_dir_all(&out_dir).unwrap();
    let marker = |n: u32| out_dir.join(format!("ran-{n}")).display().to_string();
    let log = out_dir.join("orphan.log");
    let attempts = [
        format!(
            "env -u SYNAPSE_SHELL_TAG {synapse} exec 'touch {}'",
            marker(1)
        ),
        format!(
            "env -i PATH=/usr/bin:/bin HOME=$HOME SYNAPSE_SOCKET=$(cat socket.txt) {synapse} exec 'touch {}'",
            marker(2)
        ),
        format!("setsid -w {synapse} exec 'touch {}'", marker(3)),
        // A double fork: the orphan is re-parented, yet still below the session.
        format!(
            "(setsid sh -c \"{synapse} exec 'touch {}' > {log} 2>&1\" &); \
             for i in $(seq 200); do [ -s {log} ] && break; sleep 0.05; done",
            marker(4),
            log = log.display()
        ),
    ];
    let mut script = Script::new();
    for a in &attempts {
        script = script.tool_call(format!("{a}; echo tried"));
    }
    let fake = FakeLlm::start(script.text("done")).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--yes", "try to get out"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    wait_until(DEADLINE, "the orphan's answer", || {
        std::fs::read_to_string(&log).is_ok_and(|t| !t.is_empty())
    });
    let requests = fake.requests();
    for (n, request) in requests.iter().enumerate().take(4).skip(1) {
        let r = request.last_tool_result().unwrap();
        assert!(
            r.contains("not available from inside a sandboxed agent shell"),
            "attempt {n}: {r}"
        );
    }
    let orphan = std::fs::read_to_string(&log).unwrap();
    assert!(
        orphan.contains("not available from inside a sandboxed agent shell"),
        "{orphan}"
    );
    for n in 1..=4 {
        assert!(
            !std::path::Path::new(&marker(n)).exists(),
            "attempt {n} ran"
        );
    }
    // The user's own terminal is not confined: the same call runs.
    let mine = env.cli(&["exec", &format!("touch {}", marker(0))]);
    assert!(mine.success(), "{mine:?}");
    assert!(std::path::Path::new(&marker(0)).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_cannot_be_read_from_proc_inside_the_sandbox() {
    if !landlock() {
        eprintln!("Landlock is not available here: no sandbox to read from");
        return;
    }
    let env = TestEnv::new();
    let key = "sk-ant-probe-5e1d9c";
    let fake = FakeLlm::start(
        Script::new()
            // Every process's environment, the daemon's and this client's included.
            .tool_call(format!(
                "grep -l {key} /proc/[0-9]*/environ 2>/dev/null; echo scanned"
            ))
            .tool_call("cat /proc/$PPID/environ >/dev/null; echo \"exit=$?\"")
            .text("done"),
    )
    .await
    .unwrap();
    // This client starts the daemon, so both hold the key in their environment.
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("ANTHROPIC_API_KEY", key)
        .args(["run", "read the keys"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let scan = requests[1].last_tool_result().unwrap();
    assert_eq!(
        scan.trim(),
        "scanned",
        "a process's key was readable: {scan}"
    );
    let parent = requests[2].last_tool_result().unwrap();
    assert!(!parent.contains("exit=0"), "{parent}");
    // The key was there to find: the daemon (started by that client) holds it.
    let daemon = env.daemon_pid().unwrap();
    if let Ok(environ) = std::fs::read(format!("/proc/{daemon}/environ")) {
        assert!(String::from_utf8_lossy(&environ).contains(key));
    }
}
