//! Issue 10 end to end: the `todo` agent command through a real `synapsed` — its output after
//! each change (`synapse exec`), its file in the session folder, the list surviving
//! `synapse run --continue`, and the one reminder when the model ends a turn with open items.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use pretty_assertions::assert_eq;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run};

fn exec(env: &TestEnv, command: &str) -> Run {
    run(env.synapse().args(["exec", "--session", "plan", command]))
}

async fn run_agent(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::process::Command::from(cmd).output().await.unwrap();
    Run::from(out)
}

const REMINDER_START: &str = "<system-reminder>\nYour todo list still has unfinished items:\n";

#[test]
fn each_change_shows_the_list_and_is_saved_in_the_session_folder() {
    let env = TestEnv::new();
    env.start_daemon();
    assert_eq!(exec(&env, "todo").stdout, "Todo list is empty.\n");
    assert_eq!(
        exec(
            &env,
            r#"todo add "read the code" "fix the bug" "run the tests""#
        )
        .stdout,
        "Todo (0/3 done):\n  1. [ ] read the code\n  2. [ ] fix the bug\n  3. [ ] run the tests\n"
    );
    assert_eq!(
        exec(&env, "todo start 1").stdout,
        "Todo (0/3 done):\n  1. [>] read the code\n  2. [ ] fix the bug\n  3. [ ] run the tests\n"
    );
    assert_eq!(
        exec(&env, "todo start 2").stdout,
        "(item 1 is no longer in progress; only one item is at a time)\n\
         Todo (0/3 done):\n  1. [ ] read the code\n  2. [>] fix the bug\n  3. [ ] run the tests\n"
    );
    let r = exec(&env, "todo done 7");
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout
            .starts_with("todo: there is no item 7; the list has items 1 to 3\n")
    );
    assert_eq!(
        exec(&env, "todo done 1 2 3").stdout,
        "All items are done.\n\
         Todo (3/3 done):\n  1. [x] read the code\n  2. [x] fix the bug\n  3. [x] run the tests\n"
    );
    let file = env.home().join("sessions/plan/todo.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["items"][1]["text"], "fix the bug");
    assert_eq!(saved["items"][1]["status"], "done");

    // Another session has its own list; the daemon restarting keeps this one.
    let other = run(env
        .synapse()
        .args(["exec", "--session", "other", "todo list"]));
    assert_eq!(other.stdout, "Todo list is empty.\n");
    env.stop_daemon();
    env.start_daemon();
    assert!(
        exec(&env, "todo list")
            .stdout
            .starts_with("Todo (3/3 done):\n")
    );
    assert_eq!(exec(&env, "todo clear").stdout, "Todo list is empty.\n");
    let bad = exec(&env, "todo finish 1");
    assert_eq!(bad.code, Some(2));
    assert!(bad.stdout.starts_with(
        "todo: unknown action \"finish\"; use list, add, start, done or clear\nusage: todo"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_survives_resume_and_open_items_bring_one_reminder_per_turn() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            // Turn 1: plan, start, then try to end → reminded once → end anyway.
            .tool_call(r#"todo add "write the parser" "write the tests""#)
            .tool_call("todo start 1")
            .text("Planned.")
            .text("Stopping here; the parser is half done.")
            // Turn 2 (resumed): the list is still there.
            .tool_call("todo list")
            .tool_call("todo done 1 2")
            .text("All done."),
    )
    .await
    .unwrap();
    let first = run_agent(
        &env,
        &fake,
        &["run", "build a parser", "--output-format", "json"],
    )
    .await;
    assert!(first.success(), "{first:?}");
    let json: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    assert_eq!(json["result"], "Stopping here; the parser is half done.");
    let id = json["session_id"].as_str().unwrap().to_string();

    let requests = fake.requests();
    assert_eq!(
        requests.len(),
        4,
        "the reminder asked once, then the turn ended"
    );
    let system = requests[0].system_text().unwrap();
    assert!(
        system.contains(
            "### More commands\n\
             - `job`: Background jobs, no timeout: `job start '<cmd>'` prints an id; `job read ID` \
             (new output, exit status); `job wait ID [--timeout SECS]` (until it ends); `job list`; \
             `job kill ID`.\n\
             - `skill:load`: Same as `skill load <name>`.\n"
        ),
        "{system}"
    );
    // Every agent command documented with its arguments (issue 39), within 12 KB.
    assert!(
        requests[0].body_len <= 12 * 1024,
        "first request is {} bytes",
        requests[0].body_len
    );
    let added = requests[1].last_tool_result().unwrap();
    assert_eq!(
        added,
        "Todo (0/2 done):\n  1. [ ] write the parser\n  2. [ ] write the tests\n"
    );
    let reminder = requests[3].last_user_text().unwrap();
    assert!(reminder.starts_with(REMINDER_START), "{reminder}");
    assert!(
        reminder.contains("  1. [>] write the parser\n  2. [ ] write the tests\n"),
        "{reminder}"
    );
    assert!(
        std::fs::read_to_string(env.home().join(format!("sessions/{id}/todo.json")))
            .unwrap()
            .contains("in_progress")
    );

    let second = run_agent(&env, &fake, &["run", "finish it", "--continue"]).await;
    assert!(second.success(), "{second:?}");
    assert_eq!(second.stdout.trim(), "All done.");
    let requests = fake.requests();
    assert_eq!(requests.len(), 7, "no reminder once every item is done");
    assert_eq!(
        requests[5].last_tool_result().unwrap(),
        "Todo (0/2 done):\n  1. [>] write the parser\n  2. [ ] write the tests\n"
    );
    assert_eq!(requests[4].last_user_text().as_deref(), Some("finish it"));

    // The reminder is part of the saved conversation but is not a user turn.
    let list = env.cli(&["sessions", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["title"], "build a parser");
}
