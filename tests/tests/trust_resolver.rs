//! Issue 16, deny rules judged against what will really run, through the real daemon: under
//! `rm:*`, every way of reaching `rm` through shell syntax (stdin-fed shells, brace and glob
//! command names, launchers) or through state the model left in the persistent shell (an
//! alias, `hash -p`, a `PATH` prepend, a function, a `DEBUG` trap, `BASH_ENV`) is refused in a
//! non-interactive run, and every victim file survives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::fake_llm::{FakeLlm, Reply, Script, ToolCall};
use synapse_tests::{Run, TestEnv};

async fn run(env: &TestEnv, fake: &FakeLlm, extra: &[&str]) -> Run {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("TMPDIR", tmp)
        .arg("run")
        .args(extra)
        .arg("do the task");
    synapse_tests::run_async(cmd).await
}

fn deny_rm(env: &TestEnv) {
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"permissions": {"bash": {"deny": ["rm:*"]}}}"#,
    )
    .unwrap();
}

/// `(setup lines that may run, the attack on victim N)`.
const ATTACKS: &[(&[&str], &str)] = &[
    (&[], "echo 'rm -f v0.txt' | bash"),
    (&[], "bash <<< 'rm -f v1.txt'"),
    (&[], "bash -s < cmds.sh"),
    (&[], "{rm,-f,v3.txt}"),
    (&[], "/bin/r? -f v4.txt"),
    (&[], "flock lockfile rm -f v5.txt"),
    (&[], "script -qc 'rm -f v6.txt' /dev/null"),
    (&[], "taskset 0x1 rm -f v7.txt"),
    (
        &["shopt -s expand_aliases; alias cat='rm -f'"],
        "cat v8.txt; true",
    ),
    (&["hash -p /bin/rm head"], "head v9.txt"),
    (
        &["mkdir -p evil && cp /bin/rm evil/wc && export PATH=$PWD/evil:$PATH"],
        "wc -f v10.txt",
    ),
    (&["run() { \"$@\"; }"], "run rm -f v11.txt"),
    (&[], "trap \"$(printf 'rm -f v12.txt')\" DEBUG; true"),
    (&[], "BASH_ENV=cmds13.sh bash -c true"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_holds_through_every_rewrite() {
    let env = TestEnv::new();
    deny_rm(&env);
    let work = env.workdir();
    std::fs::write(work.join("cmds.sh"), "rm -f v2.txt\n").unwrap();
    std::fs::write(work.join("cmds13.sh"), "rm -f v13.txt\n").unwrap();
    let mut script = Script::new();
    let mut attack_turns = Vec::new();
    let mut calls = 0;
    for (n, (setup, attack)) in ATTACKS.iter().enumerate() {
        std::fs::write(work.join(format!("v{n}.txt")), "keep me").unwrap();
        for line in *setup {
            script = script.tool_call(*line);
            calls += 1;
        }
        script = script.tool_call(*attack);
        attack_turns.push((calls, *attack));
        // A command that works between attacks, so the run does not stop at failures in a row.
        script = script.tool_call("echo next");
        calls += 2;
    }
    let fake = FakeLlm::start(script.text("done")).await.unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    for (turn, attack) in attack_turns {
        let result = requests[turn + 1].last_tool_result().unwrap();
        assert!(
            result.contains("Permission denied"),
            "`{attack}` was not refused: {result}"
        );
    }
    for (n, (_, attack)) in ATTACKS.iter().enumerate() {
        assert!(
            work.join(format!("v{n}.txt")).exists(),
            "v{n}.txt was removed by `{attack}`"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yolo_asks_when_a_deny_rule_cannot_be_checked_and_a_restart_forgets_path_changes() {
    let env = TestEnv::new();
    deny_rm(&env);
    let work = env.workdir();
    std::fs::write(work.join("victim.txt"), "keep me").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("echo 'rm -f victim.txt' | bash")
            .tool_call("shopt -s expand_aliases; alias ll='ls -la'")
            .tool_call("ll; true")
            .tool_call("export PATH=/nonexistent-dir:$PATH")
            .tool_call("ls; true")
            .reply(Reply::new().call(ToolCall::bash("echo fresh").restart()))
            .tool_call("ls; true")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &["--permission-mode", "yolo"]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let piped = requests[1].last_tool_result().unwrap();
    assert!(
        piped.contains("Permission denied") && piped.contains("deny rules are set"),
        "{piped}"
    );
    assert!(work.join("victim.txt").exists());
    let alias = requests[3].last_tool_result().unwrap();
    assert!(
        alias.contains("victim.txt"),
        "an alias of ls runs in yolo: {alias}"
    );
    let moved = requests[5].last_tool_result().unwrap();
    assert!(
        moved.contains("Permission denied") && moved.contains("PATH was changed"),
        "{moved}"
    );
    let after = requests[7].last_tool_result().unwrap();
    assert!(
        after.contains("victim.txt"),
        "a restarted shell has its PATH back: {after}"
    );
}
