//! What a SIGKILLed daemon leaves behind is cleaned up: its session shells, what they started
//! and its MCP servers end with it (their keepers see it die) or, when the keepers were killed
//! too, are killed by the next daemon of the same socket, and nothing of another daemon is
//! touched.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use serde_json::json;
use synapse_tests::{DEADLINE, TestEnv, pid_alive, processes_matching, wait_until};

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().nth(1))
                    == Some(pid.to_string().as_str())
            })
        })
        .collect()
}

fn sigkill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::SIGKILL,
    )
    .unwrap();
    wait_until(DEADLINE, "the killed daemon to go", || !pid_alive(pid));
}

#[test]
fn the_next_daemon_kills_what_a_killed_one_left_running() {
    let env = TestEnv::new();
    let other = TestEnv::new();
    let marker = format!("synapse-orphan-{}", std::process::id());
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({"mcpServers": {"py": {
        "command": mcp_support::venv_python(),
        // An -X option Python ignores, so the server can be found by name.
        "args": ["-X", format!("{marker}-mcp"), mcp_support::py_server(), "stdio"]
    }}});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    let first = env.start_daemon();
    // A background job of a session shell, named so it can be found.
    let started = env.cli(&[
        "exec",
        &format!("(exec -a {marker}-job sleep 301) & echo started"),
    ]);
    assert!(started.stdout.contains("started"), "{started:?}");
    // The same kind of job under another daemon must survive.
    other.start_daemon();
    let kept = other.cli(&[
        "exec",
        &format!("(exec -a {marker}-other sleep 301) & echo started"),
    ]);
    assert!(kept.stdout.contains("started"), "{kept:?}");
    wait_until(DEADLINE, "the job and the MCP server to run", || {
        !processes_matching(&format!("{marker}-job")).is_empty()
            && !processes_matching(&format!("{marker}-mcp")).is_empty()
    });

    // Killed with its keepers (`pkill -9 synapsed` does that): the keepers' own sweep cannot
    // run, the job is re-parented to init and lives on.
    for keeper in children_of(first) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(keeper as i32),
            nix::sys::signal::SIGKILL,
        );
    }
    sigkill(first);
    assert!(
        !processes_matching(&format!("{marker}-job")).is_empty(),
        "SIGKILL of the daemon and its keepers leaves the job running"
    );
    let second = env.start_daemon();
    assert_ne!(first, second);
    wait_until(DEADLINE, "the orphaned job to be killed", || {
        processes_matching(&format!("{marker}-job")).is_empty()
    });
    // The new daemon starts its own MCP server: exactly one runs again.
    wait_until(DEADLINE, "one MCP server", || {
        processes_matching(&format!("{marker}-mcp")).len() == 1
    });
    assert_eq!(
        processes_matching(&format!("{marker}-other")).len(),
        1,
        "another daemon's processes are left alone"
    );
    wait_until(DEADLINE, "the clean-up in the daemon log", || {
        std::fs::read_dir(env.home().join("logs"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect::<String>()
            .contains("killed processes left by a daemon that died")
    });
    env.stop_daemon();
    other.stop_daemon();
}

/// SIGKILL lands, 150 times, while the daemon rewrites settings.json, index.json, a SKILL.md
/// and a file written by the agent's `write`: every file is afterwards a whole old or a whole
/// new version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_writes_never_leaves_a_torn_file() {
    use synapse_shared::proto::SetAutoEnhanceRequest;
    use synapse_shared::proto::daemon_client::DaemonClient;

    let env = TestEnv::new();
    const ROUNDS: u64 = 150;
    const PAYLOAD: usize = 100 * 1024;
    for round in 0..ROUNDS {
        let pid = env.start_daemon();
        let letter = char::from(b'a' + (round % 26) as u8);
        let payload: String = std::iter::repeat_n(letter, PAYLOAD).collect();
        let mut writers = Vec::new();
        {
            let mut cmd = env.synapse();
            cmd.args(["exec", &format!("write big.txt {payload}")]);
            writers.push(std::thread::spawn(move || cmd.output()));
            let mut cmd = env.synapse();
            cmd.args([
                "skill",
                "create",
                &format!("fault-{round}"),
                "-d",
                "A skill made while the daemon is killed.",
            ]);
            writers.push(std::thread::spawn(move || cmd.output()));
        }
        let socket = env.paths().socket().to_path_buf();
        let toggle = tokio::spawn(async move {
            if let Ok(channel) = synapse_shared::rpc::connect(&socket).await {
                for i in 0..20 {
                    let request = SetAutoEnhanceRequest {
                        enabled: i % 2 == 0,
                    };
                    if DaemonClient::new(channel.clone())
                        .set_auto_enhance(request)
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
        // Fault injection, not a wait: the kill lands at a different point of the writes in
        // each round (0 to 24 ms after they start, spread over the rounds).
        std::thread::sleep(std::time::Duration::from_millis((round * 7) % 25));
        sigkill(pid);
        let _ = toggle.await;
        for w in writers {
            let _ = w.join();
        }

        let settings = std::fs::read_to_string(env.home().join("settings.json")).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&settings)
            .unwrap_or_else(|e| panic!("round {round}: torn settings.json ({e}): {settings}"));
        assert!(parsed.is_object());
        let index = env.home().join("skills/index.json");
        if let Ok(text) = std::fs::read_to_string(&index) {
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("round {round}: torn index.json ({e})"));
        }
        if let Ok(big) = std::fs::read_to_string(env.workdir().join("big.txt")) {
            let first = big.chars().next().unwrap();
            assert!(
                big.len() == PAYLOAD && big.chars().all(|c| c == first),
                "round {round}: torn big.txt ({} bytes)",
                big.len()
            );
        }
        for entry in std::fs::read_dir(env.home().join("skills"))
            .unwrap()
            .flatten()
        {
            let md = entry.path().join("SKILL.md");
            if let Ok(text) = std::fs::read_to_string(&md) {
                assert!(
                    text.starts_with("---\n") && text.contains("description:"),
                    "round {round}: torn {}: {text:?}",
                    md.display()
                );
            }
        }
    }
    // The home is still usable after all that.
    let status = env.cli(&["skill", "list"]);
    assert!(status.success(), "{status:?}");
}

/// The session folder fills up mid-conversation: the user is told the session cannot be resumed
/// past that point, the turn still answers, and the file holds only whole records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_sessions_folder_is_a_clear_error_and_no_torn_line() {
    use synapse_tests::fake_llm::{FakeLlm, Script};

    let env = TestEnv::new();
    let sessions = env.home().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&sessions)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("cannot mount a small tmpfs here (needs root): disk-full test skipped");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
    let _unmount = Unmount(sessions.clone());
    // Each command prints ~20 KB, so the 64 KB folder fills within a few steps.
    let big = r"head -c 20000 /dev/zero | tr '\0' x";
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(big)
            .tool_call(big)
            .tool_call(big)
            .tool_call(big)
            .text("finished anyway"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "fill the disk"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.stdout.contains("finished anyway"), "{out:?}");
    assert!(
        out.stderr.contains("cannot be resumed past this point"),
        "{}",
        out.stderr
    );
    for entry in std::fs::read_dir(&sessions).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(text.ends_with('\n'), "the file ends with a whole line");
            for line in text.lines() {
                serde_json::from_str::<serde_json::Value>(line)
                    .unwrap_or_else(|e| panic!("torn line ({e}): {line:.80}"));
            }
        }
    }
}
