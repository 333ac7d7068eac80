//! Issue 38, a project's plugin settings: `enabledPlugins` in a project's `.claude/settings.json`
//! turns a plugin on for that project over the user's "off" (Claude Code's precedence), for its
//! hooks, commands and MCP servers alike — but only in a folder the user trusted, and only as the
//! user trusted the file (`synapse trust` pins it; a rewrite counts after the next review). The
//! plugin here comes from a marketplace inside the project, so its hook script is a project file:
//! a changed script holds the hook until the user reviews it, like any other hook's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::plugins::{KEY, marketplace_in, write};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run};

/// A command the kit's PreToolUse guard blocks (it blocks any command naming `rm -rf`), harmless
/// when it runs.
const GUARDED: &str = "echo 'rm -rf is harmless here'";

fn run_prompt(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> Run {
    run(env.synapse_with_model(fake).args(["run", prompt]))
}

fn project_enables(project: &Path, on: bool) {
    write(
        &project.join(".claude/settings.json"),
        &serde_json::json!({ "enabledPlugins": { KEY: on } }).to_string(),
    );
}

fn trust(env: &TestEnv, project: &Path) {
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
}

/// The result the model got for the guarded command of the `nth` run (two requests a run).
fn guarded_result(fake: &FakeLlm, nth: usize) -> String {
    fake.requests()[2 * nth + 1].last_tool_result().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_turns_a_plugin_on_only_when_trusted_and_as_pinned() {
    let env = TestEnv::new();
    let project = env.workdir();
    let kit = marketplace_in(&project, "1.0.0");
    let market = project.join("market");
    let added = env.cli(&["plugin", "marketplace", "add", market.to_str().unwrap()]);
    assert!(added.success(), "{added:?}");
    assert!(env.cli(&["plugin", "install", KEY]).success());
    assert!(env.cli(&["plugin", "disable", KEY]).success());
    project_enables(&project, true);

    let mut script = Script::new();
    for _ in 0..6 {
        script = script.tool_call(GUARDED).text("ran it");
    }
    let fake = FakeLlm::start(script).await.unwrap();

    // Untrusted: the project's "on" does not count; the user's "off" stands.
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    let result = guarded_result(&fake, 0);
    assert!(result.contains("rm -rf is harmless here"), "{result}");
    assert!(!result.contains("kitguard"), "{result}");
    let out = run_prompt(&env, &fake, "/kit:greet Ann");
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr.contains("the plugin `kit` is disabled"),
        "{}",
        out.stderr
    );
    let list = env.cli(&["mcp", "list"]);
    assert!(!list.stdout.contains("plugin_kit_tools"), "{list:?}");

    // Trusted: the plugin's guard, command and server count for this project.
    trust(&env, &project);
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    let result = guarded_result(&fake, 1);
    assert!(result.contains("kitguard: rm -rf is blocked"), "{result}");
    let list = env.cli(&["mcp", "list"]);
    assert!(
        list.stdout.contains("plugin_kit_tools") && list.stdout.contains("needs approval"),
        "{list:?}"
    );
    let approved = env.cli(&["mcp", "approve", "plugin_kit_tools"]);
    assert!(
        approved.success() && approved.stdout.contains("Approved: plugin_kit_tools"),
        "{approved:?}"
    );
    let list = env.cli(&["mcp", "list"]);
    assert!(
        list.stdout.contains("plugin_kit_tools") && !list.stdout.contains("needs approval"),
        "{list:?}"
    );

    // The guard's script changed (by a session, a pull): held, named, until reviewed again.
    let guard = kit.join("hooks/guard.py");
    let text = std::fs::read_to_string(&guard).unwrap();
    std::fs::write(&guard, format!("{text}# edited\n")).unwrap();
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    assert!(
        guarded_result(&fake, 2).contains("rm -rf is harmless here"),
        "{:?}",
        fake.requests()[5].last_tool_result()
    );
    assert!(
        out.stderr.contains("PreToolUse hook")
            && out.stderr.contains("is held, not run")
            && out
                .stderr
                .contains("guard.py, which changed since you trusted the project"),
        "{}",
        out.stderr
    );
    trust(&env, &project);
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    assert!(guarded_result(&fake, 3).contains("kitguard: rm -rf is blocked"));

    // The settings rewritten to "off": the trusted "on" holds until the user reviews the change.
    project_enables(&project, false);
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    assert!(guarded_result(&fake, 4).contains("kitguard: rm -rf is blocked"));
    trust(&env, &project);
    let out = run_prompt(&env, &fake, "run it");
    assert!(out.success(), "{out:?}");
    assert!(guarded_result(&fake, 5).contains("rm -rf is harmless here"));
    let list = env.cli(&["mcp", "list"]);
    assert!(!list.stdout.contains("plugin_kit_tools"), "{list:?}");
}

/// A trusted project's `"kit@…": false` turns off, in that project only, a plugin the user
/// enabled: its MCP server is listed there as disabled and its commands are neither offered
/// nor run, while a session in another folder still has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_project_turns_a_users_plugin_server_off_there_only() {
    let env = TestEnv::new();
    let project = env.workdir();
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join(".git")).unwrap();
    marketplace_in(&elsewhere, "1.0.0");
    let market = elsewhere.join("market");
    let added = env.cli(&["plugin", "marketplace", "add", market.to_str().unwrap()]);
    assert!(added.success(), "{added:?}");
    assert!(env.cli(&["plugin", "install", KEY]).success());
    let approved = env.cli(&["mcp", "approve", "plugin_kit_tools"]);
    assert!(approved.success(), "{approved:?}");
    project_enables(&project, false);
    trust(&env, &project);

    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:plugin_kit_tools:shout --text hey")
            .text("off here")
            .tool_call("mcp:plugin_kit_tools:shout --text hey")
            .text("on there"),
    )
    .await
    .unwrap();
    let list = env.cli(&["mcp", "list"]);
    let line = list
        .stdout
        .lines()
        .find(|l| l.contains("plugin_kit_tools"))
        .unwrap_or_else(|| panic!("{list:?}"));
    assert!(line.contains("disabled"), "{list:?}");
    assert!(!list.stdout.contains("shadows"), "{list:?}");
    let out = run_prompt(&env, &fake, "shout hey");
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let system = requests[0].system_text().unwrap();
    assert!(!system.contains("plugin_kit_tools (1 tool)"), "{system}");
    let result = requests[1].last_tool_result().unwrap();
    assert!(
        result.contains("turned off in this project") && !result.contains("HEY"),
        "{result}"
    );

    // Another folder: the user's "on" stands.
    let out = run(env
        .synapse_with_model(&fake)
        .current_dir(&elsewhere)
        .args(["run", "shout hey"]));
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let system = requests[2].system_text().unwrap();
    assert!(system.contains("- plugin_kit_tools (1 tool)"), "{system}");
    let result = requests[3].last_tool_result().unwrap();
    assert!(result.contains("HEY"), "{result}");
}
