//! Issue 19, resources and prompts of a real server (npm `server-everything`) through the real
//! daemon: listed and read from the CLI and by the agent's `mcp:<server>:resources|read`, prompts
//! listed and filled, and in the REPL `/mcp:<server>:<prompt> args` (Tab-completed) runs a turn
//! with the prompt's text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::{mcp_support, repl_support};

use mcp_support::fixtures_dir;
use repl_support::{Screen, after_last};
use std::time::{Duration, Instant};
use synapse_tests::fake_llm::{FakeLlm, Script};

use synapse_tests::{DEADLINE, TestEnv, wait_until};

const FEATURES: &str = "demo://resource/static/document/features.md";

fn with_everything(env: &TestEnv) {
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let add = env.cli(&[
        "mcp",
        "add",
        "everything",
        "--",
        "node",
        &server.display().to_string(),
        "stdio",
    ]);
    assert!(add.success(), "{}{}", add.stdout, add.stderr);
    wait_until(DEADLINE, "server-everything ready", || {
        env.cli(&["mcp", "list"])
            .stdout
            .lines()
            .any(|l| l.starts_with("everything") && l.contains("ready"))
    });
}

#[test]
fn resources_and_prompts_from_the_cli_and_the_agent() {
    let env = TestEnv::new();
    with_everything(&env);
    let list = env.cli(&["mcp", "resources", "everything"]);
    assert!(list.success(), "{}", list.stderr);
    assert!(list.stdout.contains(FEATURES), "{}", list.stdout);
    assert!(list.stdout.contains("templates"), "{}", list.stdout);
    let read = env.cli(&["mcp", "read", "everything", FEATURES]);
    assert!(read.success(), "{}", read.stderr);
    assert!(
        read.stdout.contains("# Everything Server - Features"),
        "{}",
        read.stdout
    );

    // The agent's view: a simple command, through the warm connection.
    let agent = env.cli(&["exec", &format!("mcp:everything:read {FEATURES}")]);
    assert!(
        agent.stdout.contains("# Everything Server - Features"),
        "{agent:?}"
    );
    let agent = env.cli(&["exec", "mcp:everything:resources"]);
    assert!(
        agent
            .stdout
            .contains("Read one with: mcp:everything:read <uri>"),
        "{agent:?}"
    );
    // `tools search` finds them, as it finds the tools.
    let found = env.cli(&["tools", "search", "resources"]);
    assert!(
        found.stdout.contains("mcp:everything:resources")
            && found.stdout.contains("mcp:everything:read"),
        "{found:?}"
    );

    let prompts = env.cli(&["mcp", "prompts", "everything"]);
    assert!(
        prompts
            .stdout
            .contains("/mcp:everything:args-prompt <city> [state]"),
        "{}",
        prompts.stdout
    );
    let filled = env.cli(&["mcp", "prompt", "everything", "args-prompt", "city=Paris"]);
    assert_eq!(
        filled.stdout.trim(),
        "What's weather in Paris?",
        "{filled:?}"
    );
    let bad = env.cli(&["mcp", "read", "everything", "demo://no/such/thing"]);
    assert!(!bad.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_prompt_is_a_repl_slash_command() {
    let env = TestEnv::new();
    with_everything(&env);
    let fake = FakeLlm::start(Script::new().text("It is sunny in Paris."))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    // The prompts arrive in the background; Tab offers them once they have.
    let completed =
        || after_last(&screen.text(), "You (1)>").contains("/mcp:everything:args-prompt");
    let deadline = Instant::now() + DEADLINE;
    loop {
        screen.type_text("/mcp:everything:args");
        screen.keys(&["Tab"]);
        let attempt = Instant::now() + Duration::from_secs(2);
        while !completed() && Instant::now() < attempt {}
        if completed() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Tab never offered the prompt:\n{}",
            screen.text()
        );
        screen.keys(&["C-u"]);
    }
    screen.type_text(" Paris");
    screen.keys(&["Enter"]);
    screen.wait_for("It is sunny in Paris.");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert_eq!(sent, "What's weather in Paris?");
}
