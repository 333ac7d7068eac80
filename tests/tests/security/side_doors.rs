//! Issue 27's side doors, through the real daemon: a command in the agent's sandboxed shell
//! cannot signal the daemon (it still answers afterwards), cannot write or type into a terminal
//! the user holds, and cannot loosen the mode of the rules file. Each door is tried the way the
//! rules see (refused by name) and the way they cannot see (a script file, an interpreter), so
//! the sandbox itself is what holds.

use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, bin, pid_alive};

/// The kernel's Landlock ABI as the launcher reports it, `None` without Landlock.
fn landlock_abi() -> Option<i32> {
    let out = Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.trim().strip_prefix("landlock ")?.parse().ok()
}

/// Runs one non-interactive auto-mode turn whose model sends `commands` and returns each
/// command's result as the model received it.
async fn agent_results(env: &TestEnv, commands: &[String]) -> Vec<String> {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut script = Script::new();
    for command in commands {
        script = script.tool_call(command.clone());
    }
    let fake = FakeLlm::start(script.text("tried")).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", &tmp).args(["run", "do the task"]);
    let run = synapse_tests::run_async(cmd).await;
    assert!(run.success(), "{run:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), commands.len() + 1, "{run:?}");
    // The result of step i arrives with request i + 1.
    requests[1..]
        .iter()
        .map(|r| r.last_tool_result().unwrap_or_default())
        .collect()
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cannot_signal_the_daemon_which_keeps_answering() {
    match landlock_abi() {
        Some(abi) if abi >= 6 => {}
        abi => {
            eprintln!("Landlock ABI {abi:?}: signals are not scoped here (ABI 6+ needed)");
            return;
        }
    }
    let env = TestEnv::new();
    let daemon = env.start_daemon();
    let results = agent_results(
        &env,
        &[
            format!("kill -0 {daemon}; echo kill=$?"),
            format!("printf 'kill -KILL {daemon}\\n' > k.sh; bash k.sh; echo script=$?"),
            format!("python3 -c 'import os; os.kill({daemon}, 9)'; echo python=$?"),
            "sleep 30 & kill -KILL $!; wait $!; echo own=$?".into(),
        ],
    )
    .await;
    // By name, the rules refuse it; hidden from them, the kernel does.
    assert!(
        results[0].contains("Permission denied") && !results[0].contains("kill=0"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("Operation not permitted") && results[1].contains("script=1"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("PermissionError") && results[2].contains("python=1"),
        "{}",
        results[2]
    );
    // What the agent started itself it can still stop.
    assert!(results[3].contains("own=137"), "{}", results[3]);

    assert!(pid_alive(daemon), "the agent killed the daemon");
    let status = env.cli(&["daemon", "status"]);
    assert!(status.success(), "{status:?}");
    assert!(status.stdout.contains(&daemon.to_string()), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cannot_write_or_type_into_a_terminal_the_user_holds() {
    let Some(abi) = landlock_abi() else {
        eprintln!("Landlock is not available here: no sandboxed shell to test from");
        return;
    };
    let env = TestEnv::new();
    let pty = nix::pty::openpty(None, None).unwrap();
    // Raw: a typed character would be readable at once, and nothing is echoed back.
    let mut raw = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    nix::sys::termios::cfmakeraw(&mut raw);
    nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &raw).unwrap();
    let pts = nix::unistd::ttyname(&pty.slave).unwrap();
    let pts = pts.display();
    let type_in = format!(
        "import fcntl, os, termios\n\
         fd = os.open('{pts}', os.O_RDONLY | os.O_NOCTTY)\n\
         for c in b'touch pwned\\n':\n    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))"
    );
    let results = agent_results(
        &env,
        &[
            format!("echo PWNED > {pts}; echo echo=$?"),
            format!("printf 'echo PWNED > {pts}\\n' > w.sh; bash w.sh; echo script=$?"),
            format!("python3 -c \"open('{pts}', 'w').write('PWNED')\"; echo python=$?"),
            format!("python3 -c \"{type_in}\"; echo typed=$?"),
        ],
    )
    .await;
    assert!(
        results[0].contains("Permission denied") && !results[0].contains("echo=0"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("Permission denied") && results[1].contains("script=1"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("PermissionError") && results[2].contains("python=1"),
        "{}",
        results[2]
    );
    // The seccomp filter answers before Landlock's device-ioctl check would.
    assert!(
        results[3].contains("PermissionError") && results[3].contains("typed=1"),
        "ABI {abi}: {}",
        results[3]
    );
    // Nothing reached the terminal: no output on its master, no input queued on it.
    for (end, fd) in [("master", pty.master.as_fd()), ("slave", pty.slave.as_fd())] {
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        let ready = poll(&mut fds, PollTimeout::ZERO).unwrap();
        assert_eq!(ready, 0, "something arrived on the {end} of {pts}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cannot_make_the_rules_file_writable_by_others() {
    if landlock_abi().is_none() {
        eprintln!("Landlock is not available here: no sandboxed shell to test from");
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = env.paths().settings_file();
    std::fs::write(&settings, r#"{"permissions": {"defaultMode": "auto"}}"#).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    let notes = env.workdir().join("notes.txt");
    std::fs::write(&notes, "notes\n").unwrap();
    std::fs::set_permissions(&notes, std::fs::Permissions::from_mode(0o644)).unwrap();
    let results = agent_results(
        &env,
        &[
            "chmod 0666 $SYNAPSE_HOME/settings.json; echo chmod=$?".into(),
            "f=$SYNAPSE_HOME/settings.json; chmod 0666 \"$f\"; echo variable=$?".into(),
            format!(
                "python3 -c 'import os; os.chmod(\"{}\", 0o666)'; echo python=$?",
                settings.display()
            ),
            "chmod 0666 notes.txt; echo project=$?".into(),
            "printf 'echo ran\\n' > run.sh && chmod +x run.sh && ./run.sh && chmod 644 notes.txt \
             && echo ordinary=$?"
                .into(),
        ],
    )
    .await;
    // The rules may ask about the rules file (refused: nobody to ask) or not see it behind a
    // variable; either way the kernel is the last word.
    for (result, ran) in [(&results[0], "chmod=0"), (&results[1], "variable=0")] {
        assert!(
            !result.contains(ran)
                && (result.contains("Operation not permitted")
                    || result.contains("Permission denied")),
            "{result}"
        );
    }
    assert!(
        results[3].contains("Operation not permitted") && results[3].contains("project=1"),
        "{}",
        results[3]
    );
    // From python the kernel refuses it, unless the rules already asked (the line names the
    // rules file, and nobody can answer here).
    assert!(
        (results[2].contains("PermissionError") && results[2].contains("python=1"))
            || results[2].contains("holds permission settings"),
        "{}",
        results[2]
    );
    // Ordinary work still works.
    assert!(
        results[4].contains("ran") && results[4].contains("ordinary=0"),
        "{}",
        results[4]
    );
    assert_eq!(mode_of(&settings), 0o600, "the rules file's mode changed");
    assert_eq!(mode_of(&notes), 0o644);
    assert_eq!(mode_of(&env.workdir().join("run.sh")), 0o755);
}
