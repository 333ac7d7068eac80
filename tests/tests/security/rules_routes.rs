//! Issue 27, the rules file judged by where a write lands, through the real daemon: in yolo mode
//! (from the settings) with `--yes`, every way of reaching `$SYNAPSE_HOME/settings.json`
//! without spelling it out — the variable, `cd $SYNAPSE_HOME &&`, a variable set earlier in the
//! line or by an earlier call, `tee "${SYNAPSE_HOME}/…"`, the folder an earlier call moved to, a
//! target only known at run time, the agent's `write` — asks, so a run refuses it and the file
//! stays byte for byte the same; the deny rule for `rm` it holds still refuses the `rm` that
//! follows, and a function handed to a child shell through `BASH_FUNC_x%%` is refused too. A
//! plain write still runs, so yolo mode was in force throughout.

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

const SETTINGS: &str = r#"{"permissions": {"defaultMode": "yolo", "bash": {"deny": ["rm:*"]}}}"#;

/// `(a call that runs first, the route to the rules file)`.
const ROUTES: &[(Option<&str>, &str)] = &[
    (
        None,
        r#"echo '{"permissions":{}}' > $SYNAPSE_HOME/settings.json"#,
    ),
    (
        None,
        r#"cd $SYNAPSE_HOME && echo '{"permissions":{}}' > settings.json"#,
    ),
    (
        None,
        r#"cd "$SYNAPSE_HOME"; echo '{"permissions":{}}' > settings.json"#,
    ),
    (
        None,
        r#"f=$SYNAPSE_HOME/settings.json; echo '{"permissions":{}}' > $f"#,
    ),
    (
        None,
        r#"echo '{"permissions":{}}' | tee "${SYNAPSE_HOME}/settings.json""#,
    ),
    (
        Some("f=$SYNAPSE_HOME/settings.json"),
        r#"echo '{"permissions":{}}' > "$f""#,
    ),
    (
        Some("export d=$SYNAPSE_HOME"),
        "cp evil.json $d/settings.json",
    ),
    (
        Some("cd $SYNAPSE_HOME"),
        r#"echo '{"permissions":{}}' > settings.json"#,
    ),
    (
        None,
        r#"echo '{"permissions":{}}' > "$(echo $SYNAPSE_HOME)/settings.json""#,
    ),
    (
        None,
        r#"write "$SYNAPSE_HOME/settings.json" '{"permissions":{}}'"#,
    ),
];

async fn run(env: &TestEnv, fake: &FakeLlm) -> Run {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("TMPDIR", tmp).args(["run", "--yes", "do the task"]);
    synapse_tests::run_async(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_variable_route_to_the_rules_file_asks_in_yolo_and_the_deny_rule_holds() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = env.paths().settings_file();
    std::fs::write(&settings, SETTINGS).unwrap();
    let work = env.workdir();
    std::fs::write(work.join("evil.json"), r#"{"permissions":{}}"#).unwrap();
    std::fs::write(work.join("victim.txt"), "keep me").unwrap();
    std::fs::write(work.join("victim2.txt"), "keep me").unwrap();
    // Between routes: back to the session's folder (a route may have moved the shell), which
    // also keeps the run from stopping at refusals in a row.
    let back = format!("cd '{}'", work.display());

    let mut script = Script::new();
    let mut calls = 0;
    let mut attacks = Vec::new();
    for (setup, route) in ROUTES {
        if let Some(setup) = setup {
            script = script.tool_call(*setup);
            calls += 1;
        }
        script = script.tool_call(*route).tool_call(back.clone());
        attacks.push((calls, *route));
        calls += 2;
    }
    let rm = calls;
    let bash_func = calls + 1;
    let script = script
        .tool_call("rm -f victim.txt")
        .tool_call("env 'BASH_FUNC_x%%=() { rm -f victim2.txt; }' bash -c x")
        .tool_call("echo ran > yolo.txt")
        .text("done");
    let fake = FakeLlm::start(script).await.unwrap();
    let out = run(&env, &fake).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(fake.remaining_steps(), 0, "{out:?}");

    let requests = fake.requests();
    for (call, route) in &attacks {
        let result = requests[call + 1].last_tool_result().unwrap_or_default();
        assert!(
            result.contains("holds permission settings"),
            "`{route}` was not asked about: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        SETTINGS,
        "a route rewrote the rules file"
    );
    for (call, victim) in [(rm, "victim.txt"), (bash_func, "victim2.txt")] {
        let result = requests[call + 1].last_tool_result().unwrap_or_default();
        assert!(result.contains("Permission denied"), "{victim}: {result}");
        assert!(work.join(victim).exists(), "{victim} was removed");
    }
    assert!(
        work.join("yolo.txt").exists(),
        "yolo mode was not in force: {out:?}"
    );
}

/// Claude Code's user settings hold hooks, which run outside the sandbox: a session writing one
/// there is asked like a write to the rules file (refused in a run, also in yolo with `--yes`),
/// and the file never appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_written_into_claude_settings_asks_in_yolo() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.paths().settings_file(), SETTINGS).unwrap();
    std::fs::create_dir_all(env.user_home().join(".claude")).unwrap();
    let hook =
        r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/x"}]}]}}"#;
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("echo '{hook}' > ~/.claude/settings.json"))
            .tool_call(format!("write ~/.claude/settings.json '{hook}'"))
            .text("done"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake).await;
    assert!(out.success(), "{out:?}");
    for i in [1, 2] {
        let result = fake.requests()[i].last_tool_result().unwrap_or_default();
        assert!(result.contains("holds permission settings"), "{result}");
    }
    assert!(!env.user_home().join(".claude/settings.json").exists());
}
