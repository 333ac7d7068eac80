//! Issue 21 end to end, in tmux: the start forms (`synapse`, `synapse "<prompt>"`,
//! `synapse -p`), Tab completion of `/he` and of `@file` (which attaches the file), Ctrl-J
//! newlines, Esc cancelling a running `sleep` with type-ahead queued and run after it, the diff
//! shown after `edit`, the status line agreeing with `/cost` and `/context`, and a wide table
//! drawn within the pane.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use repl_support::{COLUMNS, Screen, after_last};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};
use synapse_tests::{DEADLINE, TestEnv, processes_matching, wait_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_forms_chat_prompted_chat_and_print() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("answer to the first prompt")
            .text("answer in print mode"),
    )
    .await
    .unwrap();
    // `synapse "<prompt>"`: the REPL starts and the prompt is the first message.
    let screen = Screen::start(&env, Some(&fake), &["say hi from the command line"]);
    let shown = screen.wait_for("You (2)>");
    assert!(
        shown.contains("You (1)> say hi from the command line"),
        "{shown}"
    );
    assert!(shown.contains("answer to the first prompt"), "{shown}");
    assert_eq!(
        fake.requests()[0].last_user_text().unwrap(),
        "say hi from the command line"
    );
    screen.keys(&["C-d"]);
    screen.wait_for("Goodbye!");
    drop(screen);

    // `synapse -p "<prompt>"` is `synapse run`: the answer on stdout, no REPL.
    let run = env.cli_with_model(&fake, &["-p", "print this"]);
    assert!(run.success(), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.trim(), "answer in print mode");

    // Bare `synapse` is the chat; it resumes nothing and waits at the prompt.
    let screen = Screen::start(&env, Some(&fake), &[]);
    let shown = screen.wait_for("You (1)>");
    assert!(shown.contains("(new)"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_completes_commands_and_files_and_ctrl_j_makes_a_newline() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.md"), "the secret is 42\n").unwrap();
    let fake = FakeLlm::start(Script::new().text("got the file").text("got two lines"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");

    screen.type_text("/he");
    screen.keys(&["Tab"]);
    screen.wait_until("/he completed to /help", |s| {
        after_last(s, "You (1)>").starts_with("You (1)> /help")
    });
    screen.keys(&["Enter"]);
    screen.wait_for("Ctrl-D       exit");

    screen.type_text("summarise @no");
    screen.keys(&["Tab"]);
    screen.wait_for("summarise @notes.md");
    screen.keys(&["Enter"]);
    screen.wait_for("attached notes.md (1 line)");
    screen.wait_for("got the file");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert!(sent.starts_with("summarise @notes.md"), "{sent}");
    assert!(sent.contains("the secret is 42"), "{sent}");

    screen.wait_for("You (2)>");
    screen.type_text("first line");
    screen.keys(&["C-j"]);
    screen.type_text("second line");
    screen.wait_for("second line");
    screen.keys(&["Enter"]);
    screen.wait_for("got two lines");
    assert_eq!(
        fake.requests()[1].last_user_text().unwrap(),
        "first line\nsecond line"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_cancels_a_running_command_and_type_ahead_runs_after_it() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().tool_call("sleep 27.5").text("never reached"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("wait a while");
    screen.wait_for("● sleep 27.5");
    wait_until(DEADLINE, "the sleep to run", || {
        !processes_matching("sleep 27.5").is_empty()
    });

    // Typed during the turn: shown at once, queued on Enter.
    screen.type_text("/he");
    screen.wait_for("› /he");
    screen.type_text("lp");
    screen.keys(&["Enter"]);
    screen.wait_for("› 1 queued");

    screen.keys(&["Escape"]);
    screen.wait_for("Esc cancelling…");
    screen.wait_for("Cancelled.");
    wait_until(DEADLINE, "the sleep to be killed", || {
        processes_matching("sleep 27.5").is_empty()
    });
    // The queued /help ran as a command, not as a message to the model.
    let shown = screen.wait_for("Ctrl-D       exit");
    assert!(
        after_last(&shown, "Cancelled.").contains("/help"),
        "{shown}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "the cancelled turn made no further model call"
    );
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.last_user_text().as_deref() != Some("help")),
    );
    screen.wait_for("You (2)>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_shows_a_diff_and_expand_shows_whole_output() {
    let env = TestEnv::new();
    let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(env.workdir().join("app.txt"), &lines).unwrap();
    std::fs::write(env.workdir().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("edit app.txt 'line 20' 'LINE 20'")
            .tool_call("seq 1 40")
            .tool_call("write notes.txt <<'EOF'\none\nTWO\nthree\nEOF")
            .text("edited"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("change line 20");
    let shown = screen.wait_for("You (2)>");
    let turn = after_last(&shown, "change line 20");
    // The file's own lines, with their real numbers and three lines of context.
    assert!(turn.contains("app.txt (+1 -1)"), "{shown}");
    assert!(turn.contains("@@ -17,7 +17,7 @@"), "{shown}");
    assert!(turn.contains(" line 19"), "{shown}");
    assert!(turn.contains("-line 20"), "{shown}");
    assert!(turn.contains("+LINE 20"), "{shown}");
    assert!(turn.contains(" line 23"), "{shown}");
    assert!(turn.contains("(/expand 2)"), "{shown}");
    // A write over a file shows the line that changed, not the whole file as additions.
    assert!(turn.contains("notes.txt (+1 -1)"), "{shown}");
    assert!(turn.contains("-two") && turn.contains("+TWO"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("app.txt")).unwrap(),
        lines.replace("line 20\n", "LINE 20\n")
    );

    screen.line("/expand 2");
    let shown = screen.wait_for("  40");
    assert!(
        after_last(&shown, "[2] seq 1 40").contains("\n  39\n  40"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_line_agrees_with_cost_and_context() {
    let env = TestEnv::new();
    let fake =
        FakeLlm::start(Script::new().reply(Reply::new().text("counted").usage(12_000, 3_000)))
            .await
            .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat", "--model", "claude-sonnet-4-5"]);
    let shown = screen.wait_for("You (1)>");
    assert!(shown.contains("claude-sonnet-4-5 · context –"), "{shown}");
    screen.line("count tokens");
    screen.wait_for("counted");
    // The per-turn summary.
    screen.wait_for("tokens in · 3,000 out");
    let shown = screen.wait_for("You (2)>");
    let status = after_last(&shown, "You (2)>")
        .lines()
        .find(|l| l.contains("claude-sonnet-4-5 · context"))
        .unwrap_or_else(|| panic!("no status line under the prompt: {shown}"))
        .to_string();
    assert!(status.contains(" · auto · "), "{status}");
    let percent = between(&status, "context ", "%");
    let cost = between(&status, "$", " ");

    screen.line("/cost");
    let shown = screen.wait_for("at list prices");
    assert!(
        after_last(&shown, "/cost").contains(&format!("${cost}")),
        "status {status} vs {shown}"
    );
    screen.line("/context");
    let shown = screen.wait_for("tokens (");
    assert!(
        after_last(&shown, "/context").contains(&format!("({percent}%)")),
        "status {status} vs {shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_table_stays_within_the_pane() {
    let env = TestEnv::new();
    let cell = "a long cell with many words that cannot fit next to its neighbours on one line";
    let table = format!(
        "Here is the table.\n\n| name | description | notes |\n|---|---|---|\n| first | {cell} | {cell} |\n| second | short | {cell} |\n\nAfter the table.\n"
    );
    let fake = FakeLlm::start(Script::new().text(table)).await.unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("show a table");
    let shown = screen.wait_for("After the table.");
    let answer = after_last(&shown, "show a table");
    for line in answer.lines() {
        assert!(
            line.chars().count() <= COLUMNS as usize,
            "a line wider than the pane ({} > {COLUMNS}): {line:?}\n{answer}",
            line.chars().count()
        );
    }
    assert!(answer.contains("neighbours"), "{answer}");
    // Paragraphs keep their blank line.
    assert!(answer.contains("Here is the table.\n\n"), "{answer}");
}

/// The text between `start` and the next `end` in `s`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> &'a str {
    let from = s
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {s}"))
        + start.len();
    let len = s[from..].find(end).unwrap_or(s.len() - from);
    &s[from..from + len]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_without_a_model_sets_up_a_local_server() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("the local model answers"))
        .await
        .unwrap();
    // No key and no base URL anywhere: the setup starts by itself.
    let screen = Screen::start(&env, None, &[]);
    screen.wait_for("No model is configured yet.");
    screen.wait_for("Provider [1-3]:");
    screen.line("3");
    screen.wait_for("Base URL [");
    screen.line(&fake.url());
    let shown = screen.wait_for("Model [1]:");
    for model in synapse_tests::fake_llm::FAKE_MODELS {
        assert!(shown.contains(model), "{shown}");
    }
    screen.line("2");
    let settings_path = env.home().join("settings.json");
    screen.wait_for(&format!(
        "Saved to {}: model {}.",
        settings_path.display(),
        synapse_tests::fake_llm::FAKE_MODELS[1]
    ));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    assert_eq!(saved["provider"], "openai");
    assert_eq!(saved["model"], synapse_tests::fake_llm::FAKE_MODELS[1]);
    assert_eq!(saved["env"]["OPENAI_BASE_URL"], fake.openai_base_url());

    // The chat goes on with the model just chosen.
    screen.wait_for("You (1)>");
    screen.line("hello");
    screen.wait_for("the local model answers");
    let request = &fake.requests()[0];
    assert_eq!(
        request.body["model"],
        synapse_tests::fake_llm::FAKE_MODELS[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_setup_can_be_skipped() {
    let env = TestEnv::new();
    let screen = Screen::start(&env, None, &[]);
    screen.wait_for("Provider [1-3]:");
    screen.keys(&["Enter"]);
    let shown = screen.wait_for("You (1)>");
    let settings = env.home().join("settings.json").display().to_string();
    assert!(
        shown.contains(&format!(
            "Skipped. Set \"provider\", \"model\" and the key in {settings}"
        )),
        "{shown}"
    );
    assert!(!shown.contains("$SYNAPSE_HOME"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_lists_this_folder_first_and_all_folders_on_request() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("Noted the colour teal.")
            .text("Noted the number nine.")
            .text("Your colour was teal."),
    )
    .await
    .unwrap();
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run_in = |dir: &std::path::Path, prompt: &str| {
        let out = synapse_tests::run(
            env.synapse_with_model(&fake)
                .current_dir(dir)
                .args(["run", prompt]),
        );
        assert!(out.success(), "{out:?}");
    };
    run_in(&elsewhere, "remember the colour teal");
    run_in(&env.workdir(), "remember the number nine");

    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("/resume");
    let shown = screen.wait_for("Resume which session?");
    let list = after_last(&shown, "You (1)> /resume");
    assert!(list.contains("remember the number nine"), "{list}");
    assert!(list.contains("msgs ·"), "{list}");
    assert!(
        list.contains("just now") || list.contains("m ago"),
        "{list}"
    );
    assert!(
        !list.contains("teal"),
        "another folder's session listed: {list}"
    );
    screen.keys(&["Enter"]);

    screen.line("/resume --all");
    let shown = screen.wait_for_count("Resume which session?", 2);
    let list = after_last(&shown, "/resume --all");
    let teal = list
        .lines()
        .find(|l| l.contains("remember the colour teal"))
        .unwrap_or_else(|| panic!("--all does not list the other folder: {list}"));
    assert!(teal.contains(&elsewhere.display().to_string()), "{teal}");
    let nine_at = list.find("remember the number nine").unwrap();
    assert!(
        nine_at < list.find("remember the colour teal").unwrap(),
        "{list}"
    );
    let number = teal.trim_start().split('.').next().unwrap().to_string();
    screen.line(&number);
    let shown = screen.wait_for("synapse: Noted the colour teal.");
    assert!(
        after_last(&shown, "Resumed session").contains("you: remember the colour teal"),
        "{shown}"
    );
}
