//! Sessions outlive their front end, end to end: `synapse run --detach` prints the session id and
//! returns while the turn goes on in the daemon; `synapse attach` (in tmux) shows the running
//! turn from where it is and answers its question; two REPLs on one session see the same events,
//! the first answer wins and the other sees it answered; closing one REPL leaves the turn running
//! for the other; `sessions list` shows a detached turn waiting for an answer, and the question
//! times out per `questions.timeoutSecs`; a terminal attaching while an answer streams sees
//! that answer from its start, then the rest live.
//!
//! The scripted turn is held by a real command that waits for a file the test creates, so the
//! test decides when the turn moves on; its question is a skill marked `ask`. A streaming answer
//! is held mid-stream by the fake model ([`StreamHold`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support::Screen;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, StreamHold};
use synapse_tests::{DEADLINE, TestEnv, wait_until};

/// The held command: it finishes once the test creates `go` in the work folder.
const HOLD: &str = "while [ ! -e go ]; do sleep 0.05; done; echo released-now";
const QUESTION: &str = "Load skill `secret-notes`";

/// An installation whose skill `secret-notes` asks before it loads; `extra` are more top-level
/// settings.json members (`"questions": {…}`).
fn env_with_asking_skill(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_skill(
        "secret-notes",
        "Private notes workflow.",
        "The secret steps.\n",
    );
    let sep = if extra.is_empty() { "" } else { ", " };
    std::fs::write(
        env.home().join("settings.json"),
        format!(r#"{{"permissions": {{"skill": {{"secret-*": "ask"}}}}{sep}{extra}}}"#),
    )
    .unwrap();
    env
}

/// A turn that runs the held command, then asks, then answers.
async fn held_then_asking() -> FakeLlm {
    FakeLlm::start(
        Script::new()
            .tool_call(HOLD)
            .tool_call("skill load secret-notes")
            .text("all done here"),
    )
    .await
    .unwrap()
}

/// `synapse run --detach <task>`: the one line it printed, the session id.
fn detach(env: &TestEnv, fake: &FakeLlm, task: &str) -> String {
    let run = env.cli_with_model(fake, &["run", "--detach", task]);
    assert!(run.success(), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stdout: {run:?}");
    lines[0].trim().to_string()
}

fn release(env: &TestEnv) {
    std::fs::write(env.workdir().join("go"), "").unwrap();
}

/// `sessions list --json`'s entry for `id`.
fn listed(env: &TestEnv, id: &str) -> serde_json::Value {
    let list = env.cli(&["sessions", "list", "--json"]);
    assert!(list.success(), "{list:?}");
    let all: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    all.into_iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not listed: {}", list.stdout))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_turn_goes_on_and_attach_shows_the_rest_and_answers_its_question() {
    let env = env_with_asking_skill("");
    let fake = held_then_asking().await;
    let id = detach(&env, &fake, "take notes");
    // The client is gone, and the turn still runs in the daemon (held by its command).
    let held = fake.wait_for_requests(1, DEADLINE).await;
    assert_eq!(held.len(), 1);
    let entry = listed(&env, &id);
    assert_eq!(entry["state"], "running", "{entry}");
    assert_eq!(entry["frontEnds"], 0, "{entry}");
    assert_eq!(entry["detached"], true, "{entry}");

    let screen = Screen::start(&env, Some(&fake), &["attach", &id]);
    screen.wait_for("A turn of this session is running");
    wait_until(DEADLINE, "the REPL is attached", || {
        listed(&env, &id)["frontEnds"] == 1
    });
    release(&env);
    screen.wait_for("released-now");
    screen.wait_for(QUESTION);
    screen.type_text("y");
    screen.wait_for("all done here");
    let requests = fake.wait_for_requests(3, DEADLINE).await;
    let result = requests[2].last_tool_result().unwrap();
    assert!(!result.contains("not approved"), "{result}");
    assert_eq!(listed(&env, &id)["state"], "idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_repls_see_the_same_turn_and_the_first_answer_wins() {
    let env = env_with_asking_skill("");
    let fake = held_then_asking().await;
    let id = detach(&env, &fake, "take notes");
    let one = Screen::start_named(&env, Some(&fake), &["attach", &id], &[], "one");
    let two = Screen::start_named(&env, Some(&fake), &["attach", &id], &[], "two");
    one.wait_for("A turn of this session is running");
    two.wait_for("A turn of this session is running");
    wait_until(DEADLINE, "both REPLs are attached", || {
        listed(&env, &id)["frontEnds"] == 2
    });
    let plain = env.cli(&["sessions", "list"]);
    assert!(plain.stdout.contains("2 attached"), "{plain:?}");
    release(&env);
    one.wait_for("released-now");
    two.wait_for("released-now");
    one.wait_for(QUESTION);
    two.wait_for(QUESTION);
    one.type_text("y");
    two.wait_for("Answered at another front end of this session: yes");
    one.wait_for("all done here");
    two.wait_for("all done here");
    // One answer reached the session: the skill loaded once.
    let requests = fake.wait_for_requests(3, DEADLINE).await;
    assert_eq!(requests.len(), 3);
    assert!(
        !requests[2]
            .last_tool_result()
            .unwrap()
            .contains("not approved")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_repl_that_started_a_turn_leaves_it_running_for_the_one_attached() {
    let env = env_with_asking_skill("");
    let fake = held_then_asking().await;
    let first = Screen::start_named(&env, Some(&fake), &["chat"], &[], "first");
    first.wait_for("You (1)>");
    first.line("take notes");
    fake.wait_for_requests(1, DEADLINE).await;
    // No id: the most recent running session of this folder.
    let second = Screen::start_named(&env, Some(&fake), &["attach"], &[], "second");
    second.wait_for("A turn of this session is running");
    first.kill_client();
    release(&env);
    second.wait_for("released-now");
    second.wait_for(QUESTION);
    second.type_text("y");
    second.wait_for("all done here");
    let requests = fake.wait_for_requests(3, DEADLINE).await;
    assert!(
        !requests[2]
            .last_tool_result()
            .unwrap()
            .contains("not approved")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_shows_a_detached_turn_waiting_for_an_answer() {
    let env = env_with_asking_skill("");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("skill load secret-notes")
            .text("all done here"),
    )
    .await
    .unwrap();
    let id = detach(&env, &fake, "take notes");
    // Nobody is attached, and the question is not refused: it waits.
    let plain = wait_for_list(&env, "waiting for an answer");
    assert!(
        plain.contains(&format!("waiting for an answer: {QUESTION}")),
        "{plain}"
    );
    let entry = listed(&env, &id);
    assert_eq!(entry["state"], "waiting", "{entry}");
    assert!(
        entry["question"].as_str().unwrap().contains(QUESTION),
        "{entry}"
    );
    assert_eq!(fake.requests().len(), 1, "the turn waits for the answer");
    // A front end attaching now is shown the open question and answers it.
    let screen = Screen::start(&env, Some(&fake), &["attach", &id]);
    screen.wait_for(QUESTION);
    screen.type_text("n");
    screen.wait_for("all done here");
    let requests = fake.wait_for_requests(2, DEADLINE).await;
    assert!(
        requests[1]
            .last_tool_result()
            .unwrap()
            .contains("not approved")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_turns_question_times_out_per_the_setting() {
    let env = env_with_asking_skill(r#""questions": {"timeoutSecs": 1}"#);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("skill load secret-notes")
            .text("went on without it"),
    )
    .await
    .unwrap();
    let id = detach(&env, &fake, "take notes");
    // Nobody attached within the second: the question is answered no and the turn goes on.
    let requests = fake.wait_for_requests(2, DEADLINE).await;
    let result = requests[1].last_tool_result().unwrap();
    assert!(result.contains("not approved"), "{result}");
    wait_until(DEADLINE, "the turn ended", || {
        listed(&env, &id)["state"] == "idle"
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaching_mid_answer_shows_the_text_streamed_before_then_the_rest_live() {
    let env = TestEnv::new();
    let hold = StreamHold::new();
    // Anthropic events: message_start, ping, content_block_start, then one per chunk: the
    // first paragraph goes out, the second waits for the hold.
    let answer = Reply::new()
        .text_chunks([
            "Streamed-before-attach: the ",
            "opening paragraph.\n\n",
            "Streamed-after-attach: ",
            "the closing paragraph.\n",
        ])
        .hold_after(5, &hold);
    let fake = FakeLlm::start(Script::new().reply(answer)).await.unwrap();
    let id = detach(&env, &fake, "write two paragraphs");
    hold.reached(DEADLINE).await;
    assert_eq!(
        listed(&env, &id)["frontEnds"],
        0,
        "nobody saw the first paragraph"
    );

    let screen = Screen::start(&env, Some(&fake), &["attach", &id]);
    screen.wait_for("A turn of this session is running");
    screen.wait_for("Streamed-before-attach: the opening paragraph.");
    wait_until(DEADLINE, "the REPL is attached", || {
        listed(&env, &id)["frontEnds"] == 1
    });
    hold.release();
    screen.wait_for("Streamed-after-attach: the closing paragraph.");
    // The turn's end (its summary line): the answer once, in order, not shown again.
    let shown = screen.wait_for("tokens in");
    let shown = crate::repl_support::after_last(&shown, "A turn of this session is running");
    assert_eq!(
        shown.matches("Streamed-before-attach").count(),
        1,
        "{shown}"
    );
    let before = shown.find("Streamed-before-attach").unwrap();
    let after = shown.find("Streamed-after-attach").unwrap();
    assert!(before < after, "{shown}");
}

/// Polls `synapse sessions list` until it shows `needle`; returns what it printed.
fn wait_for_list(env: &TestEnv, needle: &str) -> String {
    let mut last = String::new();
    wait_until(DEADLINE, needle, || {
        last = env.cli(&["sessions", "list"]).stdout;
        last.contains(needle)
    });
    last
}
