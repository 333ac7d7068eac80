//! Issue 21, rendering as a person sees it in tmux: a fenced code block in the answer is
//! syntax-highlighted in colour (and its fences are not shown), while `NO_COLOR` gives the same
//! text with no colour at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use repl_support::Screen;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

const ANSWER: &str =
    "Here:\n\n```python\ndef greet(name):\n    return f\"hi {name}\"\n```\n\nDone.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_blocks_are_highlighted_and_no_color_turns_colour_off() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text(ANSWER).text(ANSWER))
        .await
        .unwrap();
    // The test environment sets NO_COLOR=1; empty means unset (no-color.org).
    let screen = Screen::start_with(&env, Some(&fake), &["chat"], &[("NO_COLOR", "")]);
    screen.wait_for("You (1)>");
    screen.line("show me a function");
    let shown = screen.wait_for("You (2)>");
    assert!(shown.contains("def greet(name):"), "{shown}");
    assert!(!shown.contains("```"), "fences are not shown:\n{shown}");
    let coloured = screen.text_with_colours();
    let line = coloured
        .lines()
        .find(|l| l.contains("greet"))
        .unwrap_or_else(|| panic!("no code line in:\n{coloured}"));
    // Several colours on the one line: the keyword, the name, the punctuation.
    assert!(line.matches("\x1b[").count() >= 3, "{line:?}");
    drop(screen);

    let env = TestEnv::new();
    let screen = Screen::start_with(&env, Some(&fake), &["chat"], &[("NO_COLOR", "1")]);
    screen.wait_for("You (1)>");
    screen.line("again");
    screen.wait_for("You (2)>");
    let plain = screen.text_with_colours();
    let line = plain.lines().find(|l| l.contains("greet")).unwrap();
    assert!(!line.contains('\x1b'), "NO_COLOR still coloured: {line:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_typed_in_the_setup_never_shows_on_screen() {
    let env = TestEnv::new();
    let screen = Screen::start(&env, None, &[]);
    screen.wait_for("Provider [1-3]:");
    screen.line("1");
    screen.wait_for("Anthropic API key:");
    screen.type_text("sk-ant-SECRET-1234");
    screen.wait_for("Anthropic API key: ******************");
    screen.keys(&["Enter"]);
    // Typing is shown again for the next answer.
    screen.wait_for("Model [");
    screen.type_text("my-model");
    let shown = screen.wait_for("my-model");
    assert!(!shown.contains("SECRET"), "the key is on screen:\n{shown}");
    screen.keys(&["Enter"]);
    screen.wait_for("Saved to");
    let saved = std::fs::read_to_string(env.home().join("settings.json")).unwrap();
    assert!(saved.contains("sk-ant-SECRET-1234"), "{saved}");
    assert!(!screen.text().contains("SECRET"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_counts_the_sessions_running_jobs() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("job start sleep 300")
            .text("Started it.")
            .tool_call("job kill 1")
            .text("Stopped it."),
    )
    .await
    .unwrap();
    let screen = Screen::start_with(
        &env,
        Some(&fake),
        &["chat", "--permission-mode", "yolo"],
        &[],
    );
    screen.wait_for("You (1)>");
    screen.line("start a long job");
    screen.wait_for("Started it.");
    screen.wait_for("· 1 job running");
    screen.line("stop it");
    screen.wait_for("Stopped it.");
    screen.wait_until("the job count gone", |s| {
        s.contains("You (3)>") && !repl_support::after_last(s, "You (3)>").contains("job running")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_output_line_is_cut_to_the_pane_not_wrapped() {
    let env = TestEnv::new();
    let long = "x".repeat(300);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("echo {long}"))
            .text("Printed it."),
    )
    .await
    .unwrap();
    let screen = Screen::start_with(
        &env,
        Some(&fake),
        &["chat", "--permission-mode", "yolo"],
        &[],
    );
    screen.wait_for("You (1)>");
    screen.line("print a long line");
    let shown = screen.wait_for("Printed it.");
    // The pane's text with wrapped rows joined: a wrapped line would show longer than the pane.
    let tool = shown
        .lines()
        .find(|l| l.contains("⎿"))
        .unwrap_or_else(|| panic!("no output line in:\n{shown}"));
    assert!(tool.ends_with('…'), "cut, and says so: {tool}");
    for line in shown.lines() {
        assert!(
            line.chars().count() <= repl_support::COLUMNS as usize,
            "wider than the pane ({} columns): {line}",
            line.chars().count()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tab_list_does_not_mix_with_the_status_line() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    // The status line is drawn under the prompt before Tab is pressed.
    screen.wait_for(" · auto · ");
    // A short list (the `/c…` commands): the row is not filled, so whatever was on it stays.
    screen.type_text("/c");
    screen.keys(&["Tab"]);
    screen.keys(&["Tab"]);
    // rustyline writes the list under the prompt's row and then draws the prompt again: the
    // rows between the two prompts are the list, where the status line was.
    let prompts = |s: &str| {
        s.lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("You (1)> /c"))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    let shown = screen.wait_until("the list of slash commands", |s| prompts(s).len() >= 2);
    let at = prompts(&shown);
    let lines: Vec<&str> = shown.lines().collect();
    let listed = &lines[at[0] + 1..at[at.len() - 1]];
    assert!(
        listed.iter().any(|l| l.contains("/clear")),
        "no list:\n{shown}"
    );
    for line in listed {
        assert!(
            !line.contains(" · "),
            "the status line shows through the list: {line}\n{shown}"
        );
    }
}
