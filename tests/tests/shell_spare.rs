//! Issue 39, a shell ready before it is asked for: the daemon keeps one pre-started sandboxed
//! shell per active workspace and hands it to the next chat session whose shell would start the
//! same. What the model sees in that shell is what a fresh one shows (folder, environment, its
//! own private TMPDIR, the sandbox); a session with another environment never gets it; no spare
//! outlives its workspace or the daemon.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, TestEnv, bin, wait_until};

/// The session shells (bash under the daemon, tagged) of the installation at `home`, with
/// their TMPDIR.
fn shells_under(home: &Path) -> Vec<(u32, String)> {
    let needle = format!("SYNAPSE_HOME={}", home.display());
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter_map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            if comm.trim() != "bash" || !synapse_tests::pid_alive(pid) {
                return None;
            }
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let environ = String::from_utf8_lossy(&environ).into_owned();
            let vars: Vec<&str> = environ.split('\0').collect();
            if !vars.iter().any(|v| v.starts_with("SYNAPSE_SHELL_TAG=")) {
                return None;
            }
            if !vars.iter().any(|v| *v == needle) {
                return None;
            }
            let tmp = vars.iter().find_map(|v| v.strip_prefix("TMPDIR="))?;
            Some((pid, tmp.to_string()))
        })
        .collect()
}

/// The value of `key=` on a line of `text`.
fn field(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {text}"))
        .to_string()
}

fn sandbox_here() -> bool {
    std::process::Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .is_ok_and(|o| o.status.success())
}

const PROBE: &str = "echo pid=$$; echo tmp=$TMPDIR; echo dir=$(pwd); echo probe=$SPARE_PROBE; \
                     touch \"$TMPDIR/mine\" && echo private-ok";

/// One `synapse run --yes` with `SPARE_PROBE=probe`, whose model (`fake`, scripted for every
/// run of the test: one model address, as one user's runs have) runs `calls` commands; the
/// result of each.
async fn run(env: &TestEnv, fake: &FakeLlm, probe: &str, calls: usize) -> Vec<String> {
    let before = fake.requests().len();
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("SPARE_PROBE", probe).args(["run", "--yes", "go"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    (1..=calls)
        .map(|i| requests[before + i].last_tool_result().unwrap())
        .collect()
}

/// Waits for a spare: a session shell under the test root none of `seen` is.
fn wait_for_spare(env: &TestEnv, seen: &[u32]) -> (u32, String) {
    let mut found = None;
    wait_until(DEADLINE, "a spare shell to be started", || {
        found = shells_under(env.home())
            .into_iter()
            .find(|(pid, _)| !seen.contains(pid));
        found.is_some()
    });
    found.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_sessions_first_command_runs_in_the_spare_shell_as_in_a_fresh_one() {
    let env = TestEnv::new();
    env.start_daemon();
    let sandboxed = sandbox_here();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // A script the rules cannot see into: only the sandbox stands between it and `outside`.
    std::fs::write(
        env.workdir().join("escape.sh"),
        format!("echo x > '{}/f'\n", outside.display()),
    )
    .unwrap();

    let fake = FakeLlm::start(
        Script::new()
            .tool_call(PROBE)
            .text("done")
            .tool_call(PROBE)
            .tool_call("bash escape.sh; echo tried")
            .text("done")
            .tool_call(PROBE)
            .text("done"),
    )
    .await
    .unwrap();
    let first = run(&env, &fake, "one", 1).await;
    let first_pid: u32 = field(&first[0], "pid").parse().unwrap();
    let first_tmp = field(&first[0], "tmp");

    let (spare_pid, spare_tmp) = wait_for_spare(&env, &[first_pid]);
    assert_ne!(spare_tmp, first_tmp, "a spare gets its own TMPDIR");

    let second = run(&env, &fake, "one", 2).await;
    let text = &second[0];
    assert_eq!(
        field(text, "pid"),
        spare_pid.to_string(),
        "the first command ran in the spare: {text}"
    );
    assert_eq!(field(text, "tmp"), spare_tmp, "{text}");
    assert!(spare_tmp.contains("/session-"), "{spare_tmp}");
    assert_eq!(
        field(text, "dir"),
        env.workdir().display().to_string(),
        "{text}"
    );
    assert_eq!(field(text, "probe"), "one", "{text}");
    assert!(text.contains("private-ok"), "{text}");
    assert!(second[1].contains("tried"), "{}", second[1]);
    if sandboxed {
        assert!(
            !outside.join("f").exists(),
            "the spare is sandboxed: {}",
            second[1]
        );
    }

    // The spare was replaced; a session with another environment does not get it.
    let (replacement, _) = wait_for_spare(&env, &[first_pid, spare_pid]);
    let third = run(&env, &fake, "two", 1).await;
    let text = &third[0];
    assert_ne!(
        field(text, "pid"),
        replacement.to_string(),
        "a session with another environment got the spare: {text}"
    );
    assert_eq!(field(text, "probe"), "two", "{text}");

    env.stop_daemon();
    wait_until(DEADLINE, "no session shell to be left", || {
        shells_under(env.home()).is_empty()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spare_goes_with_its_workspace() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("settings.json"),
        r#"{"mcp": {"projectIdleStopSec": 1}}"#,
    )
    .unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(Script::new().tool_call(PROBE).text("done"))
        .await
        .unwrap();
    let first = run(&env, &fake, "one", 1).await;
    let first_pid: u32 = field(&first[0], "pid").parse().unwrap();
    let (spare, _) = wait_for_spare(&env, &[first_pid]);
    wait_until(DEADLINE, "the spare to end with its idle workspace", || {
        !synapse_tests::pid_alive(spare)
    });
}
