//! Issue 38, stream-json's `init` names the plugins as Claude Code does: with our small kit
//! plugin installed, the real Claude Code 2.1.332 and `synapse run` print the same entry for it in
//! `plugins` (`name`, `path` = where its files are read from, `source` = `<plugin>@<marketplace>`,
//! `version`), and its skills (the title-named one by its folder) and command in `skills` and
//! `slash_commands` under the same names. A disabled plugin is in neither.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::Command;

use crate::mcp_support::fixtures_dir;
use crate::plugins::{KEY, marketplace};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, run_async};

fn init_line(stdout: &str) -> Value {
    let first = stdout.lines().next().unwrap_or_default();
    let line: Value =
        serde_json::from_str(first).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(line["subtype"], "init", "{line}");
    line
}

fn names(init: &Value, key: &str) -> Vec<String> {
    init[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array: {init}"))
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn kit_entry(init: &Value) -> Option<Value> {
    init["plugins"]
        .as_array()?
        .iter()
        .find(|p| p["source"] == KEY)
        .cloned()
}

async fn synapse_init(env: &TestEnv) -> Value {
    let fake = FakeLlm::start(Script::new().text("hello")).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["-p", "hi", "--output-format", "stream-json", "--verbose"]);
    let out = run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    init_line(&out.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_names_the_plugins_as_the_real_claude_code_does() {
    let env = TestEnv::new();
    marketplace(&env, "1.0.0");
    assert!(
        env.cli(&["plugin", "marketplace", "add", "../market"])
            .success()
    );
    assert!(env.cli(&["plugin", "install", KEY]).success());

    let fake = FakeLlm::start(Script::new().text("hello").text("hello").text("hello"))
        .await
        .unwrap();
    let mut cmd = Command::new(fixtures_dir().join("node_modules/.bin/claude"));
    env.apply_env(&mut cmd);
    cmd.args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let out = run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let theirs = init_line(&out.stdout);
    let ours = synapse_init(&env).await;

    let their_kit = kit_entry(&theirs).unwrap_or_else(|| panic!("Claude Code: {theirs}"));
    assert_eq!(kit_entry(&ours), Some(their_kit), "{ours}");
    for (key, wanted) in [
        ("skills", ["kit:notes", "kit:titled"].as_slice()),
        ("slash_commands", ["kit:greet", "kit:notes"].as_slice()),
    ] {
        let (theirs, ours) = (names(&theirs, key), names(&ours, key));
        for name in wanted {
            assert!(
                theirs.iter().any(|n| n == name),
                "Claude Code {key}: {theirs:?}"
            );
            assert!(ours.iter().any(|n| n == name), "Synapse {key}: {ours:?}");
        }
    }

    assert!(env.cli(&["plugin", "disable", KEY]).success());
    let ours = synapse_init(&env).await;
    assert_eq!(kit_entry(&ours), None, "{ours}");
    assert!(
        !names(&ours, "skills").iter().any(|n| n.starts_with("kit:")),
        "{ours}"
    );
}
