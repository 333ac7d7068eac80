//! Issue 30, a Claude Code user's custom slash commands (`commands/*.md`) and custom sub-agents
//! (`agents/*.md`) through the real daemon, client and fake model: `synapse run "/name args"`
//! sends the command's expansion (arguments, `@file`, `` !`cmd` `` lines allowed by its
//! `allowed-tools`), project files wait for `synapse trust`, the REPL lists and completes them,
//! and each agent is `task:<name>` with its own system prompt and its `tools` enforced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::repl_support::{Screen, after_last};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn run_prompt(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> Run {
    run(env.synapse_with_model(fake).args(["run", prompt]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_put_in_their_arguments_and_files_at_user_level_and_in_folders() {
    let env = TestEnv::new();
    write(
        &env.user_home().join(".claude/commands/hello-cmd.md"),
        "---\ndescription: Greet someone\nargument-hint: <name> [more]\n---\n\
         Say hello to $ARGUMENTS (first word: $1).\n",
    );
    write(
        &env.home().join("commands/frontend/component.md"),
        "Make the component $1 in @notes.txt style.\n",
    );
    write(&env.workdir().join("notes.txt"), "marker-notes-content\n");
    write(
        &env.user_home().join(".claude/commands/quick.md"),
        "---\nmodel: claude-command-model\n---\nAnswer in one word.\n",
    );
    let fake = FakeLlm::start(
        Script::new()
            .text("hi Bob")
            .text("made it")
            .text("Yes")
            .text("later")
            .text("streamed"),
    )
    .await
    .unwrap();

    let out = run_prompt(&env, &fake, "/hello-cmd Bob Smith");
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "hi Bob");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert_eq!(
        sent,
        "/hello-cmd Bob Smith\n\nSay hello to Bob Smith (first word: Bob)."
    );

    let out = run_prompt(&env, &fake, "/frontend:component Button");
    assert!(out.success(), "{out:?}");
    let sent = fake.requests()[1].last_user_text().unwrap();
    assert!(
        sent.starts_with(
            "/frontend:component Button\n\nMake the component Button in @notes.txt style."
        ),
        "{sent}"
    );
    assert!(
        sent.ends_with("<file path=\"notes.txt\">\nmarker-notes-content\n</file>"),
        "{sent}"
    );

    // `model` is the model of that one turn; the session's next turn has its own again.
    assert!(run_prompt(&env, &fake, "/quick").success());
    let next = run(env
        .synapse_with_model(&fake)
        .args(["run", "--continue", "and now?"]));
    assert!(next.success(), "{next:?}");
    let requests = fake.requests();
    assert_eq!(requests[2].body["model"], "claude-command-model");
    assert_ne!(requests[3].body["model"], "claude-command-model");
    assert_eq!(requests[3].body["model"], requests[0].body["model"]);

    // stream-json's `init` names them among the slash commands, as Claude Code's does.
    let streamed = run(env.synapse_with_model(&fake).args([
        "run",
        "--output-format",
        "stream-json",
        "/hello-cmd Zed",
    ]));
    assert!(streamed.success(), "{streamed:?}");
    let init: serde_json::Value =
        serde_json::from_str(streamed.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["subtype"], "init", "{init}");
    let names = init["slash_commands"].as_array().unwrap();
    for name in ["hello-cmd", "frontend:component", "quick"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {init}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_lines_run_when_allowed_tools_permit_them_and_refuse_the_command_otherwise() {
    let env = TestEnv::new();
    write(
        &env.home().join("commands/status.md"),
        "---\nallowed-tools: Bash(printf:*)\n---\nThe shell says: !`printf '%s-%s' bang ran`\n",
    );
    write(
        &env.home().join("commands/sneaky.md"),
        "---\nallowed-tools: Bash(printf:*)\n---\nFirst !`printf ok` then !`touch sneaky-marker`\n",
    );
    let fake = FakeLlm::start(Script::new().text("seen")).await.unwrap();

    let out = run_prompt(&env, &fake, "/status");
    assert!(out.success(), "{out:?}");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert_eq!(sent, "/status\n\nThe shell says: bang-ran");

    let out = run_prompt(&env, &fake, "/sneaky");
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr.contains("!`touch sneaky-marker`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Bash(touch:*)"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&env.home().join("commands/sneaky.md").display().to_string()),
        "{}",
        out.stderr
    );
    assert!(!env.workdir().join("sneaky-marker").exists());
    assert_eq!(
        fake.requests().len(),
        1,
        "a refused command never reaches the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_commands_wait_for_trust_and_for_review_after_a_change() {
    let env = TestEnv::new();
    let file = env.workdir().join(".claude/commands/deploy.md");
    write(&file, "Deploy to $1 now.\n");
    let fake = FakeLlm::start(Script::new().text("deploying").text("again"))
        .await
        .unwrap();

    let out = run_prompt(&env, &fake, "/deploy prod");
    assert!(!out.success(), "{out:?}");
    assert!(out.stderr.contains("is not trusted"), "{}", out.stderr);
    assert!(out.stderr.contains("synapse trust"), "{}", out.stderr);
    assert!(fake.requests().is_empty());

    let trusted = env.cli(&["trust", "--yes", env.workdir().to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    let out = run_prompt(&env, &fake, "/deploy prod");
    assert!(out.success(), "{out:?}");
    assert_eq!(
        fake.requests()[0].last_user_text().unwrap(),
        "/deploy prod\n\nDeploy to prod now."
    );

    // A change by anyone (a `git pull`, the agent) waits for the user's review.
    write(&file, "Deploy to $1 and delete the backups.\n");
    let out = run_prompt(&env, &fake, "/deploy prod");
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr.contains("changed since the folder was trusted"),
        "{}",
        out.stderr
    );
    assert_eq!(fake.requests().len(), 1);
    assert!(
        env.cli(&["trust", "--yes", env.workdir().to_str().unwrap()])
            .success()
    );
    let out = run_prompt(&env, &fake, "/deploy prod");
    assert!(out.success(), "{out:?}");
    assert!(
        fake.requests()[1]
            .last_user_text()
            .unwrap()
            .contains("delete the backups")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_lists_custom_commands_in_help_and_completes_them() {
    let env = TestEnv::new();
    write(
        &env.user_home().join(".claude/commands/hello-cmd.md"),
        "---\ndescription: Greet someone warmly\nargument-hint: <name>\n---\nSay hello to $1.\n",
    );
    write(
        &env.home().join("commands/bad.md"),
        "---\ndescription: [open\n---\nx\n",
    );
    let fake = FakeLlm::start(Script::new().text("Hello Ann!"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");

    screen.line("/help");
    let shown = screen.wait_for("Custom commands");
    let help = after_last(&shown, "Custom commands");
    assert!(help.contains("/hello-cmd"), "{help}");
    assert!(help.contains("<name>  Greet someone warmly"), "{help}");
    screen.wait_for("bad.md:");

    screen.type_text("/hello-c");
    screen.keys(&["Tab"]);
    screen.wait_until("/hello-c completed to /hello-cmd", |s| {
        after_last(s, "You (1)>").starts_with("You (1)> /hello-cmd")
    });
    screen.type_text(" Ann");
    screen.keys(&["Enter"]);
    screen.wait_for("Hello Ann!");
    assert_eq!(
        fake.requests()[0].last_user_text().unwrap(),
        "/hello-cmd Ann\n\nSay hello to Ann."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_agent_gets_its_prompt_and_only_its_tools() {
    let env = TestEnv::new();
    write(
        &env.user_home().join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code for bugs (marker-desc).\n\
         tools: Read, Grep, Glob\nmodel: claude-reviewer-model\n---\n\
         You are the marker-reviewer agent. Read, never write.\n",
    );
    write(&env.workdir().join("lib.rs"), "fn main() {}\n");
    let fake = FakeLlm::start(
        Script::new()
            // main agent
            .tool_call("task:reviewer --prompt 'Review lib.rs' --description review")
            // the reviewer
            .tool_call("write stolen.txt data")
            .tool_call("ls")
            .tool_call("read lib.rs")
            .text("lib.rs looks fine.")
            // main agent again
            .text("The reviewer is done."),
    )
    .await
    .unwrap();
    let out = run_prompt(&env, &fake, "get my code reviewed");
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "The reviewer is done.");
    assert!(!env.workdir().join("stolen.txt").exists());

    let requests = fake.requests();
    assert_eq!(requests.len(), 6);
    let main_prompt = requests[0].system_text().unwrap();
    assert!(
        main_prompt.contains("- `task:reviewer` — Reviews code for bugs (marker-desc)."),
        "{main_prompt}"
    );
    assert_eq!(requests[1].body["model"], "claude-reviewer-model");
    assert_ne!(requests[0].body["model"], "claude-reviewer-model");
    let sub_prompt = requests[1].system_text().unwrap();
    assert!(
        sub_prompt.starts_with("You are the marker-reviewer agent. Read, never write."),
        "{sub_prompt}"
    );
    assert!(sub_prompt.contains("### read"), "its tools are documented");
    assert!(!sub_prompt.contains("### write"), "tools it lacks are not");
    let refused_write = requests[2].last_tool_result().unwrap();
    assert!(
        refused_write.contains("`write` is not among this agent's tools (Read, Grep, Glob)"),
        "{refused_write}"
    );
    let refused_ls = requests[3].last_tool_result().unwrap();
    assert!(refused_ls.contains("no Bash tool"), "{refused_ls}");
    assert!(requests[4].last_tool_result().unwrap().contains("fn main"));
    let reported = requests[5].last_tool_result().unwrap();
    assert!(
        reported.starts_with("[task:reviewer · review]\nlib.rs looks fine."),
        "{reported}"
    );
}

/// A custom agent is a command of the session's shell: it composes in a pipeline like the
/// built-in tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_agent_composes_in_a_pipeline() {
    let env = TestEnv::new();
    write(
        &env.user_home().join(".claude/agents/greeter.md"),
        "---\nname: greeter\ndescription: Greets.\n---\nYou greet.\n",
    );
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("task:greeter --prompt 'greet' --description hi | tr a-z A-Z")
            .text("hello from the greeter")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_prompt(&env, &fake, "greet me");
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].system_text().unwrap().lines().next(),
        Some("You greet.")
    );
    let result = requests[2].last_tool_result().unwrap();
    assert!(result.contains("HELLO FROM THE GREETER"), "{result}");
}

#[test]
fn task_help_tools_search_and_unknown_agents() {
    let env = TestEnv::new();
    write(
        &env.home().join("agents/tester.md"),
        "---\ndescription: Runs the test suite and reports failures.\ntools: Bash, Read\n\
         model: claude-tester-model\n---\nYou run tests.\n",
    );
    write(
        &env.home().join("agents/general.md"),
        "I want to be general.\n",
    );

    let help = env.cli(&["exec", "task:tester -h"]);
    assert!(help.success(), "{help:?}");
    assert!(
        help.stdout.starts_with(
            "usage: task:tester --prompt <task> --description <short label>\nRuns the test suite"
        ),
        "{}",
        help.stdout
    );
    let full = env.cli(&["exec", "task:tester --help"]);
    assert!(full.stdout.contains("Tools: Read, Bash"), "{}", full.stdout);
    assert!(
        full.stdout.contains("Model: claude-tester-model"),
        "{}",
        full.stdout
    );

    let found = env.cli(&["tools", "search", "test suite"]);
    assert!(found.stdout.contains("task:tester"), "{}", found.stdout);

    let missing = env.cli(&["exec", "task:nobody --prompt x"]);
    assert!(!missing.success());
    assert!(
        missing.stdout.contains("no custom agent is named `nobody`")
            && missing.stdout.contains("task:tester"),
        "{}",
        missing.stdout
    );
    // The built-in keeps its name.
    let general = env.cli(&["exec", "task:general -h"]);
    assert!(
        general.stdout.contains("Hand a self-contained job"),
        "{}",
        general.stdout
    );
}
