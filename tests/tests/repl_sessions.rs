//! Issue 7 end to end: sessions in `synapse chat` — `/resume` lists and loads, `--continue`,
//! and reattaching to the same session when the daemon dies (idle and mid-turn) without losing
//! what the user typed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use std::time::Duration;

use repl_support::{Screen, after_last};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, processes_matching, wait_until};

fn run_once(env: &TestEnv, fake: &FakeLlm, prompt: &str) {
    let out = synapse_tests::run(
        env.synapse()
            .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-test-key")
            .args(["run", prompt]),
    );
    assert!(out.success(), "{out:?}");
}

/// Opens a chat and leaves it at once (no terminal): an empty session on disk; returns its id.
fn open_and_leave(env: &TestEnv, fake: &FakeLlm) -> String {
    let mut chat = env.synapse_with_model(fake);
    chat.arg("chat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = chat.spawn().unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"/exit\n").unwrap();
    }
    let left = child.wait_with_output().unwrap();
    let opened = banner_session(&String::from_utf8_lossy(&left.stdout));
    let file = env.paths().sessions_dir().join(format!("{opened}.jsonl"));
    assert!(file.exists(), "the empty session is on disk");
    opened
}

/// The session id printed in the banner (`session  <id> (…)`).
fn banner_session(screen: &str) -> String {
    let line = screen
        .lines()
        .find(|l| l.trim_start().starts_with("session  "))
        .unwrap_or_else(|| panic!("no session line in:\n{screen}"));
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_lists_sessions_and_loads_the_chosen_one() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("Noted: pineapple.")
            .text("You asked me to remember pineapple."),
    )
    .await
    .unwrap();
    run_once(&env, &fake, "remember the word pineapple");
    let empty = open_and_leave(&env, &fake);

    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("/resume");
    let shown = screen.wait_for("Resume which session?");
    let list = after_last(&shown, "/resume");
    let chosen = list
        .lines()
        .find(|l| l.contains("remember the word pineapple"))
        .unwrap_or_else(|| panic!("the earlier session is not listed:\n{list}"));
    // The session left without a message is not offered; the one this REPL is in is listed,
    // marked, however new.
    assert!(
        !list.contains(&empty),
        "an empty session is offered:\n{list}"
    );
    assert!(list.contains("← this session"), "{list}");
    let number = chosen.trim_start().split('.').next().unwrap().to_string();
    screen.line(&number);
    let shown = screen.wait_for("You (2)>");
    let resumed = after_last(&shown, "Resume which session?");
    assert!(resumed.contains("Resumed session"), "{resumed}");
    assert!(resumed.contains("(resumed, 2 messages)"), "{resumed}");
    assert!(
        resumed.contains("you: remember the word pineapple"),
        "{resumed}"
    );
    assert!(resumed.contains("synapse: Noted: pineapple."), "{resumed}");

    screen.line("what was the word?");
    screen.wait_for("You asked me to remember pineapple.");
    let requests = fake.requests();
    let history = requests.last().unwrap().body.to_string();
    assert!(history.contains("remember the word pineapple"), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_without_an_id_on_a_terminal_picks_from_this_folders_sessions() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("Noted: mango.")
            .text("The word was mango."),
    )
    .await
    .unwrap();
    run_once(&env, &fake, "remember the word mango");
    // A session nobody wrote in (opened and left at once): nothing to go back to, not offered.
    let opened = open_and_leave(&env, &fake);

    let screen = Screen::start(&env, Some(&fake), &["--resume"]);
    let shown = screen.wait_for("Resume which session? [1-1, Enter starts a new one]");
    assert!(shown.contains("1. remember the word mango"), "{shown}");
    assert!(
        !shown.contains(&opened),
        "the empty session is offered:\n{shown}"
    );
    screen.line("1");
    let shown = screen.wait_for("You (2)>");
    let resumed = after_last(&shown, "Resume which session?");
    assert!(resumed.contains("(resumed, 2 messages)"), "{resumed}");
    assert!(
        resumed.contains("you: remember the word mango"),
        "{resumed}"
    );
    screen.line("what was the word?");
    screen.wait_for("The word was mango.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_skips_a_newer_session_nobody_wrote_in() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("Noted: kiwi.")
            .text("The word was kiwi."),
    )
    .await
    .unwrap();
    run_once(&env, &fake, "remember the word kiwi");
    open_and_leave(&env, &fake);
    let out = synapse_tests::run_async({
        let mut cmd = env.synapse_with_model(&fake);
        cmd.args(["run", "--continue", "what was the word?"]);
        cmd
    })
    .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("The word was kiwi."), "{}", out.stdout);
    let history = fake.requests().last().unwrap().body.to_string();
    assert!(history.contains("remember the word kiwi"), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_continue_opens_the_latest_session() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("First answer."))
        .await
        .unwrap();
    run_once(&env, &fake, "first question");
    let screen = Screen::start(&env, Some(&fake), &["chat", "--continue"]);
    let shown = screen.wait_for("You (2)>");
    assert!(shown.contains("(resumed, 2 messages)"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_killed_while_idle_the_next_message_reattaches_and_is_answered() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("one").text("two"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    let shown = screen.wait_for("You (1)>");
    let session = banner_session(&shown);
    screen.line("first");
    screen.wait_for("You (2)>");

    let pid = env.daemon_pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    screen.wait_for("The daemon went away");
    // Typed while no daemon runs: nothing is lost.
    screen.line("second");
    let shown = screen.wait_for("You (3)>");
    let after = after_last(&shown, "You (2)> second");
    assert!(
        after.contains(&format!(
            "Reattached to session {session} (resumed, 2 messages)"
        )),
        "{after}"
    );
    assert!(after.contains("two"), "{after}");
    assert_ne!(env.daemon_pid(), Some(pid));
    assert_eq!(
        fake.requests().last().unwrap().last_user_text().as_deref(),
        Some("second")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_killed_mid_turn_the_repl_reattaches_to_the_same_session() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().tool_call("sleep 108").text("still here"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    let shown = screen.wait_for("You (1)>");
    let session = banner_session(&shown);
    screen.line("take your time");
    wait_until(Duration::from_secs(10), "sleep 108 to run", || {
        !processes_matching("sleep 108").is_empty()
    });
    let pid = env.daemon_pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let shown = screen.wait_for("You (2)>");
    let after = after_last(&shown, "take your time");
    assert!(
        after.contains("The connection to synapsed was lost"),
        "{after}"
    );
    assert!(
        after.contains(&format!("Reattached to session {session}")),
        "{after}"
    );
    assert!(
        after.contains("the turn was interrupted") || after.contains("it was interrupted"),
        "{after}"
    );
    // A SIGKILLed daemon cannot clean up; do it for it.
    for orphan in processes_matching("sleep 108") {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(orphan as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    screen.line("are you back?");
    screen.wait_for("still here");
    screen.wait_for("You (3)>");
}
