//! Issue 7 end to end: how `synapse chat` takes input — lines continued with `\`, bracketed
//! paste, Ctrl-C clearing the line, history in $SYNAPSE_HOME/history, the spinner before the
//! first token, and plain (non-terminal) use with piped stdin and stdout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use repl_support::{Screen, after_last};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continued_lines_paste_ctrl_c_history_and_the_spinner() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .reply(
                Reply::new()
                    .text("first answer")
                    // Before every event: the spinner stays up over a second, long enough for a loaded
                    // machine's screen captures to see it.
                    .delay(Duration::from_millis(400)),
            )
            .text("second answer"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");

    // Ctrl-C on a half-typed line clears it and keeps the REPL.
    screen.type_text("never mind this");
    screen.wait_for("never mind this");
    screen.keys(&["C-c"]);
    screen.type_text("line one \\");
    screen.keys(&["Enter"]);
    screen.line("line two");
    // The spinner shows while the model has not answered yet.
    screen.wait_for("Thinking…");
    screen.wait_for("first answer");
    screen.wait_for("You (2)>");
    let first = fake.requests()[0].last_user_text().unwrap();
    assert_eq!(first, "line one \nline two");

    // A paste with newlines is one message, submitted by Enter.
    let socket = env.root().join("tmux.sock");
    let buffer = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["set-buffer", "pasted one\npasted two"])
        .status()
        .unwrap();
    assert!(buffer.success());
    let paste = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["paste-buffer", "-p", "-t", "repl"])
        .status()
        .unwrap();
    assert!(paste.success());
    screen.wait_for("pasted two");
    assert!(!screen.text().contains("second answer"));
    screen.keys(&["Enter"]);
    screen.wait_for("You (3)>");
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].last_user_text().unwrap(),
        "pasted one\npasted two"
    );

    let history = std::fs::read_to_string(env.home().join("history")).unwrap();
    assert!(history.contains("line two"), "{history}");
    assert!(history.contains("pasted two"), "{history}");
    assert!(!history.contains("never mind"), "{history}");

    // Up-arrow brings back the last entry.
    screen.keys(&["Up"]);
    screen.wait_until("the last entry recalled at the prompt", |s| {
        after_last(s, "You (3)>").contains("pasted one")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_input_and_output_are_plain_text() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("plain **answer**"))
        .await
        .unwrap();
    let mut child = env
        .synapse()
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\n!echo local\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains('\x1b'),
        "escape sequences in piped output: {stdout:?}"
    );
    // Markdown is left as written when stdout is not a terminal.
    assert!(stdout.contains("plain **answer**\n"), "{stdout}");
    assert!(stdout.contains("local\n"), "{stdout}");
    assert!(stdout.trim_end().ends_with("Goodbye!"), "{stdout}");
}
