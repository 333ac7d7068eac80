//! Issue 7 end to end: `synapse chat` in a real terminal (tmux) against a real daemon and the
//! scripted fake LLM — banner and prompt, streamed answers, tool lines, `!` commands, slash
//! commands, Ctrl-C and the persisted skill-enhance switch.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use std::time::Duration;

use repl_support::{Screen, after_last};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};
use synapse_tests::{TestEnv, processes_matching, wait_until};

const FIRST_PROMPT: &str = "You (1)>";
const SECOND_PROMPT: &str = "You (2)>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banner_prompt_help_unknown_commands_local_shell_and_goodbye() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat", "--model", "claude-sonnet-4-5"]);
    let shown = screen.wait_for(FIRST_PROMPT);
    assert!(
        shown.contains(&format!("Synapse {}", env!("CARGO_PKG_VERSION"))),
        "{shown}"
    );
    assert!(shown.contains("model    claude-sonnet-4-5"), "{shown}");
    assert!(shown.contains("(new)"), "{shown}");
    assert!(
        shown.contains(&format!("cwd      {}", env.workdir().display())),
        "{shown}"
    );

    screen.line("/HELP");
    let shown = screen.wait_for("Ctrl-D       exit");
    let help = after_last(&shown, "/HELP");
    for command in [
        "/exit, /quit",
        "/resume [<id>|--latest|--all]",
        "/skill enhance [--on|--off]",
        "/compact",
    ] {
        assert!(help.contains(command), "{help}");
    }

    screen.line("/foo");
    screen.wait_for("Unknown command: /foo. Type /help to see the commands.");

    screen.line("!echo hi from the shell");
    let shown = screen.wait_until("the echo output and a new prompt", |s| {
        after_last(s, "!echo hi").contains("\nhi from the shell\nYou (1)>")
    });
    assert!(!after_last(&shown, "!echo").contains("[exit"), "{shown}");

    screen.line("!false");
    screen.wait_until("[exit 1] after !false", |s| {
        after_last(s, "!false").contains("[exit 1]\nYou (1)>")
    });
    // Neither the shell commands nor the slash commands reached the model.
    assert!(fake.requests().is_empty());

    screen.keys(&["C-d"]);
    screen.wait_for("Goodbye!");
    wait_until(Duration::from_secs(10), "the REPL to exit", || {
        screen.exited()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_shows_tool_lines_and_the_rendered_answer() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "buy milk\ncall mum\n").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("cat missing.txt")
            .reply(Reply::new().text_chunks([
                "Your **notes** say:\n",
                "\n- buy milk\n- call",
                " mum\n\n",
                "`missing.txt` does not exist.",
            ])),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for(FIRST_PROMPT);
    screen.line("what do my notes say?");
    let shown = screen.wait_for(SECOND_PROMPT);
    let turn = after_last(&shown, "You (1)> what do my notes say?");
    insta::assert_snapshot!(repl_support::stable_turn(turn, SECOND_PROMPT));
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_streams_while_the_turn_runs_and_ctrl_c_cancels_the_command() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .reply(
                Reply::new()
                    .text_chunks(["Waiting a while first.\n"])
                    .tool_call("sleep 107"),
            )
            .text("after the cancel"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for(FIRST_PROMPT);
    screen.line("wait for me");
    // The first line is on screen while the turn is still running.
    let shown = screen.wait_for("Waiting a while first.");
    assert!(!shown.contains(SECOND_PROMPT), "{shown}");
    wait_until(Duration::from_secs(10), "sleep 107 to run", || {
        !processes_matching("sleep 107").is_empty()
    });
    screen.wait_for("● sleep 107");
    screen.keys(&["C-c"]);
    let shown = screen.wait_within(
        Duration::from_secs(1),
        "the prompt back after Ctrl-C",
        |s| s.contains(SECOND_PROMPT),
    );
    assert!(
        after_last(&shown, "wait for me").contains("Cancelled."),
        "{shown}"
    );
    wait_until(Duration::from_secs(5), "no sleep 107 left", || {
        processes_matching("sleep 107").is_empty()
    });
    // The REPL goes on: the next message gets an answer.
    screen.line("are you there?");
    screen.wait_for("after the cancel");
    screen.wait_for("You (3)>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skill_enhance_switch_is_saved_and_survives_a_daemon_restart() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for(FIRST_PROMPT);
    screen.line("/skill enhance");
    screen.wait_for("Automatic skill enhancement is off.");

    screen.line("/skill enhance --on");
    let shown = screen.wait_for("Automatic skill enhancement is on");
    let notice = after_last(&shown, "/skill enhance --on");
    assert!(
        notice.contains("This costs extra tokens on every turn."),
        "{notice}"
    );
    assert!(
        notice.contains("Turn it off any time with /skill enhance --off"),
        "{notice}"
    );
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.home().join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["skillEnhance"]["autoEnhance"], true);

    env.stop_daemon();
    screen.wait_for("The daemon went away");
    env.start_daemon();
    screen.line("/skill enhance");
    let shown = screen.wait_for("Automatic skill enhancement is on:");
    // Read from the new daemon, which loaded it from settings.json.
    let after = after_last(&shown, "The daemon went away");
    assert!(after.contains("Reattached to session"), "{after}");

    screen.line("/skill enhance --off");
    screen.wait_for("Automatic skill enhancement is off (saved in");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.home().join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["skillEnhance"]["autoEnhance"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_cost_context_compact_and_clear() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .reply(Reply::new().text("hello").usage(1_000, 50))
            .reply(Reply::new().text("hello from opus").usage(2_000, 10)),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat", "--model", "claude-sonnet-4-5"]);
    screen.wait_for(FIRST_PROMPT);
    screen.line("/context");
    screen.wait_for("No model call yet");
    screen.line("hi");
    screen.wait_for(SECOND_PROMPT);

    screen.line("/cost");
    let shown = screen.wait_for("at list prices for claude-sonnet-4-5");
    let cost = after_last(&shown, "/cost");
    assert!(cost.contains("(1 turn)"), "{cost}");
    assert!(cost.contains("input               1,000"), "{cost}");
    assert!(cost.contains("output                 50"), "{cost}");

    screen.line("/context");
    let shown = screen.wait_for("/ 200,000 tokens");
    assert!(
        after_last(&shown, "/context").contains("Context  "),
        "{shown}"
    );

    screen.line("/model");
    screen.wait_for("Model: claude-sonnet-4-5");
    screen.line("/model claude-opus-4-5");
    screen.wait_for("Model set to claude-opus-4-5 for the following turns.");
    screen.line("and now?");
    screen.wait_for("hello from opus");
    screen.wait_for("You (3)>");
    assert_eq!(fake.requests()[1].body["model"], "claude-opus-4-5");

    screen.line("/compact");
    screen.wait_until("the compaction notice", |s| {
        let after = after_last(s, "/compact");
        after.contains("Nothing to compact yet.") || after.contains("Context compacted")
    });

    screen.line("/clear");
    let shown = screen.wait_for("(new).");
    assert!(
        after_last(&shown, "/clear").contains("Started session"),
        "{shown}"
    );
    screen.wait_until("the first prompt of the new session", |s| {
        after_last(s, "/clear").contains(FIRST_PROMPT)
    });
    screen.line("/sessions");
    let shown = screen.wait_for("← this session");
    let list = after_last(&shown, "/sessions");
    assert!(list.contains("  1. ") && list.contains("  2. "), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_lists_the_mcp_and_skill_commands_and_skill_list_the_skills() {
    let env = TestEnv::new();
    let skill = env.home().join("skills/tidy-notes");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: tidy-notes\ndescription: Sort and dedupe note files.\n---\nRun the script.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/dedupe.sh"),
        "#!/bin/sh\n# Remove duplicate lines.\nsort -u \"$1\"\n",
    )
    .unwrap();
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        server.exists(),
        "test fixture {} is missing: run tests/fixtures/install.sh",
        server.display()
    );
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    let config = serde_json::json!({"mcpServers": {"fs": {"command": "node", "args": [server, env.workdir()]}}});
    std::fs::write(env.home().join("mcp/mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    wait_until(
        Duration::from_secs(30),
        "the fs MCP server to be ready",
        || env.cli(&["mcp", "list"]).stdout.contains("ready"),
    );
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for(FIRST_PROMPT);
    screen.line("/tools");
    let shown = screen.wait_for("each answers -h and --help.");
    let tools = after_last(&shown, "/tools");
    assert!(tools.contains("mcp:fs:read_text_file"), "{tools}");
    assert!(tools.contains("mcp:fs:list_directory"), "{tools}");
    assert!(tools.contains("skill:tidy-notes:dedupe"), "{tools}");
    // One line per command, cut to the terminal's width.
    assert!(
        tools
            .lines()
            .all(|l| l.chars().count() <= repl_support::COLUMNS as usize),
        "{tools}"
    );
    screen.line("/tools read_");
    let shown = screen.wait_for_count("each answers -h and --help.", 2);
    let filtered = after_last(&shown, "/tools read_");
    assert!(filtered.contains("mcp:fs:read_text_file"), "{filtered}");
    assert!(!filtered.contains("mcp:fs:list_directory"), "{filtered}");
    screen.line("/skill list");
    let shown = screen.wait_for("`skill load <name>` is how the agent reads one.");
    let listed = after_last(&shown, "/skill list");
    assert!(
        listed.contains("tidy-notes") && listed.contains("(user)"),
        "{listed}"
    );
    assert!(listed.contains("Sort and dedupe note files."), "{listed}");
}
