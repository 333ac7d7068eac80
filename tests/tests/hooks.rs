//! Issue 30 (hooks): a Claude Code user's hooks work unchanged. Through the real daemon and the
//! fake model: every event fires once per occasion with Claude Code's stdin fields, the agent's
//! `write` reaches a `Write|Edit` matcher as `Write` with `tool_input.file_path`, exit 2 blocks a
//! command (its marker never appears) and tells the model why, UserPromptSubmit output reaches
//! the request, a hook's `allow` never loosens a deny rule, project hooks wait for `synapse
//! trust`, a failing hook never ends the turn, and `/hooks` lists what is configured.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, wait_until};

use crate::repl_support::Screen;

/// `{"hooks": {event: [{"matcher", "hooks": [{"type": "command", "command"}]}]}}` from
/// `(event, matcher, command)` triples.
fn hooks_settings(entries: &[(&str, &str, String)]) -> Value {
    let mut hooks = serde_json::Map::new();
    for (event, matcher, command) in entries {
        let list = hooks
            .entry(event.to_string())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .unwrap();
        list.push(json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command}]
        }));
    }
    json!({ "hooks": hooks })
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Claude Code's user settings file of the test's `HOME`.
fn claude_settings(env: &TestEnv) -> PathBuf {
    env.user_home().join(".claude").join("settings.json")
}

/// A hook that appends its stdin (one JSON object) as a line of `log`.
fn logger(log: &Path) -> String {
    format!("cat >> '{0}'; echo >> '{0}'", log.display())
}

/// The events logged so far, each the hook's stdin.
fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn names(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or("?").to_string())
        .collect()
}

async fn run_in(env: &TestEnv, fake: &FakeLlm, dir: &Path, prompt: &str) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.current_dir(dir)
        .args(["run", prompt])
        .stdin(Stdio::null());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}

/// UserPromptSubmit sees a custom command as the user typed it; the model gets its expansion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_prompt_submit_sees_a_custom_command_as_typed() {
    let env = TestEnv::new();
    let log = env.root().join("prompt.log");
    write_json(
        &claude_settings(&env),
        &hooks_settings(&[("UserPromptSubmit", "", logger(&log))]),
    );
    let command = env.home().join("commands/hello-cmd.md");
    std::fs::create_dir_all(command.parent().unwrap()).unwrap();
    std::fs::write(&command, "Say hello to $ARGUMENTS (marker-expanded).\n").unwrap();
    let fake = FakeLlm::start(Script::new().text("hello Bob"))
        .await
        .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "/hello-cmd Bob").await;
    assert!(out.success(), "{out:?}");
    let events = logged(&log);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["prompt"], "/hello-cmd Bob", "{}", events[0]);
    let sent = fake.requests()[0].body.to_string();
    assert!(
        sent.contains("Say hello to Bob (marker-expanded)."),
        "{sent}"
    );
}

/// A sub-agent started inside a pipeline (through the shell, not the in-process path) still
/// fires its session's SubagentStop, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_in_a_pipeline_fires_subagent_stop() {
    let env = TestEnv::new();
    let log = env.root().join("subagent.log");
    write_json(
        &claude_settings(&env),
        &hooks_settings(&[("SubagentStop", "", logger(&log))]),
    );
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("task:general --description hi --prompt 'Say hi' | tr a-z A-Z")
            // the sub-agent
            .text("hi there")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "delegate").await;
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[2].last_tool_result().unwrap();
    assert!(result.contains("HI THERE"), "{result}");
    let events = logged(&log);
    assert_eq!(names(&events), ["SubagentStop"], "{events:#?}");
    assert_eq!(events[0]["stop_hook_active"], false, "{}", events[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_fires_once_per_occasion_with_claude_codes_fields() {
    let env = TestEnv::new();
    let log = env.root().join("hooks.log");
    let write_log = env.root().join("write-hook.log");
    let all = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SubagentStop",
        "SessionEnd",
    ];
    let mut entries: Vec<(&str, &str, String)> =
        all.iter().map(|e| (*e, "", logger(&log))).collect();
    entries.push(("PostToolUse", "Write|Edit", logger(&write_log)));
    // Claude Code's file and Synapse's own both count.
    let (claude, synapse): (Vec<_>, Vec<_>) = entries
        .into_iter()
        .partition(|(event, _, _)| *event != "SessionEnd");
    write_json(&claude_settings(&env), &hooks_settings(&claude));
    write_json(&env.home().join("settings.json"), &hooks_settings(&synapse));

    let fake = FakeLlm::start(
        Script::new()
            .tool_call("write notes/a.txt hello")
            .tool_call("task:general --description 'say hi' --prompt 'Say hi'")
            // the sub-agent
            .text("hi")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "make a note").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "done");
    wait_until(DEADLINE, "SessionEnd to be logged", || {
        names(&logged(&log)).contains(&"SessionEnd".to_string())
    });

    let events = logged(&log);
    assert_eq!(
        names(&events),
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PreToolUse",
            "SubagentStop",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ],
        "{events:#?}"
    );
    let transcript = &events[0]["transcript_path"];
    for e in &events {
        assert_eq!(e["cwd"], env.workdir().display().to_string(), "{e}");
        assert_eq!(&e["transcript_path"], transcript, "{e}");
        assert!(
            e["session_id"].as_str().is_some_and(|s| !s.is_empty()),
            "{e}"
        );
    }
    let transcript = PathBuf::from(transcript.as_str().unwrap());
    assert!(
        transcript.starts_with(env.home().join("sessions")),
        "{transcript:?}"
    );
    assert!(transcript.is_file());
    assert_eq!(events[0]["source"], "startup");
    assert_eq!(events[1]["prompt"], "make a note");
    assert_eq!(events[2]["tool_name"], "Write");
    assert_eq!(
        events[2]["tool_input"],
        json!({
            "file_path": env.workdir().join("notes/a.txt").display().to_string(),
            "content": "hello"
        })
    );
    assert_eq!(events[4]["tool_name"], "Bash");
    assert!(
        events[4]["tool_input"]["command"]
            .as_str()
            .unwrap()
            .starts_with("task:general"),
        "{}",
        events[4]
    );
    assert_eq!(events[5]["stop_hook_active"], false);
    assert_eq!(events[7]["stop_hook_active"], false);
    assert_eq!(events[8]["reason"], "other");

    // The `Write|Edit` matcher fired for the write only.
    let writes = logged(&write_log);
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0]["tool_name"], "Write");
    assert_eq!(
        writes[0]["tool_input"]["file_path"],
        env.workdir().join("notes/a.txt").display().to_string()
    );
    // Claude Code's Write response: a new file is a `create` with no original.
    assert_eq!(
        writes[0]["tool_response"]["type"], "create",
        "{}",
        writes[0]
    );
    assert_eq!(
        writes[0]["tool_response"]["filePath"],
        env.workdir().join("notes/a.txt").display().to_string()
    );
    assert_eq!(writes[0]["tool_response"]["originalFile"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_two_blocks_the_command_and_tells_the_model_why() {
    let env = TestEnv::new();
    let marker = env.workdir().join("touched");
    write_json(
        &claude_settings(&env),
        &hooks_settings(&[(
            "PreToolUse",
            "Bash",
            "echo 'touch is not allowed here' >&2; exit 2".into(),
        )]),
    );
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("touch {}", marker.display()))
            .text("understood"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "touch it").await;
    assert!(out.success(), "{out:?}");
    assert!(!marker.exists(), "the blocked command ran");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("touch is not allowed here"), "{result}");
    assert!(result.contains("PreToolUse hook"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_keeps_the_agent_going_a_bounded_number_of_times() {
    let env = TestEnv::new();
    let log = env.root().join("stop.log");
    write_json(
        &claude_settings(&env),
        &hooks_settings(&[(
            "Stop",
            "",
            format!("{}; echo 'run the tests first' >&2; exit 2", logger(&log)),
        )]),
    );
    let fake = FakeLlm::start(
        Script::new()
            .text("first end")
            .text("second end")
            .text("third end")
            .text("fourth end"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "work").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "fourth end");
    let requests = fake.requests();
    assert_eq!(requests.len(), 4, "three continuations, then the turn ends");
    let reminder = requests[1].last_user_text().unwrap();
    assert!(reminder.contains("run the tests first"), "{reminder}");
    let active: Vec<Value> = logged(&log)
        .iter()
        .map(|e| e["stop_hook_active"].clone())
        .collect();
    assert_eq!(
        active,
        [json!(false), json!(true), json!(true), json!(true)]
    );
    assert!(out.stderr.contains("Stop hook"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_and_session_start_output_reach_the_request_and_exit_two_blocks_the_prompt() {
    let env = TestEnv::new();
    let settings = claude_settings(&env);
    write_json(
        &settings,
        &hooks_settings(&[
            (
                "UserPromptSubmit",
                "",
                "echo 'Context: the deploy key is CTX-MARKER-42'".into(),
            ),
            ("SessionStart", "startup", "echo 'START-MARKER-7'".into()),
        ]),
    );
    let fake = FakeLlm::start(Script::new().text("noted")).await.unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "what is the key?").await;
    assert!(out.success(), "{out:?}");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert!(sent.starts_with("what is the key?"), "{sent}");
    assert!(sent.contains("CTX-MARKER-42"), "{sent}");
    assert!(
        sent.contains("START-MARKER-7"),
        "SessionStart output: {sent}"
    );

    // Exit 2 blocks the prompt: nothing reaches the model, the user reads why.
    write_json(
        &settings,
        &hooks_settings(&[(
            "UserPromptSubmit",
            "",
            "echo 'no secrets in prompts' >&2; exit 2".into(),
        )]),
    );
    let out = run_in(&env, &fake, &env.workdir(), "my password is hunter2").await;
    assert!(!out.success(), "{out:?}");
    assert!(out.stderr.contains("no secrets in prompts"), "{out:?}");
    assert_eq!(
        fake.requests().len(),
        1,
        "the blocked prompt reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_allow_never_loosens_a_deny_rule() {
    let env = TestEnv::new();
    let marker = env.workdir().join("removed-marker");
    let mut settings = hooks_settings(&[(
        "PreToolUse",
        "*",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#
            .into(),
    )]);
    settings["permissions"] = json!({"bash": {"deny": ["touch:*"]}});
    write_json(&env.home().join("settings.json"), &settings);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("touch {}", marker.display()))
            .text("ok"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "touch it").await;
    assert!(out.success(), "{out:?}");
    assert!(!marker.exists(), "a hook's allow lifted a deny rule");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("Permission denied"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_hooks_do_nothing_until_the_project_is_trusted() {
    let env = TestEnv::new();
    let project = env.root().join("cloned-repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let marker = env.root().join("project-hook-ran");
    write_json(
        &project.join(".claude").join("settings.json"),
        &hooks_settings(&[(
            "UserPromptSubmit",
            "",
            format!("touch '{}'", marker.display()),
        )]),
    );
    let fake = FakeLlm::start(Script::new().text("one").text("two"))
        .await
        .unwrap();
    let out = run_in(&env, &fake, &project, "hello").await;
    assert!(out.success(), "{out:?}");
    assert!(!marker.exists(), "an untrusted project's hook ran");
    assert!(
        out.stderr
            .contains("do not run until you trust the project")
            && out.stderr.contains("synapse trust"),
        "{}",
        out.stderr
    );

    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    let out = run_in(&env, &fake, &project, "hello again").await;
    assert!(out.success(), "{out:?}");
    assert!(marker.exists(), "the trusted project's hook did not run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_hook_never_ends_the_turn() {
    let env = TestEnv::new();
    let marker = env.workdir().join("ran");
    let mut settings = hooks_settings(&[
        ("PreToolUse", "", "/nonexistent/hook-program".into()),
        ("PostToolUse", "", "echo '{not json'; exit 1".into()),
    ]);
    settings["hooks"]["Stop"] =
        json!([{"hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}]);
    write_json(&claude_settings(&env), &settings);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("touch {}", marker.display()))
            .text("all done"),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "touch it").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "all done");
    assert!(marker.exists(), "the command did not run");
    for named in [
        "PreToolUse hook `/nonexistent/hook-program` failed with exit code 127",
        "PostToolUse hook `echo '{not json'; exit 1` failed with exit code 1",
        "Stop hook `sleep 30` timed out",
    ] {
        assert!(out.stderr.contains(named), "{named}\n{}", out.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_lists_hooks_and_fires_pre_compact_and_notification() {
    let env = TestEnv::new();
    let log = env.root().join("repl-hooks.log");
    let claude = claude_settings(&env);
    let settings = hooks_settings(&[
        ("PreCompact", "manual", logger(&log)),
        ("Notification", "", logger(&log)),
        ("SessionStart", "", logger(&log)),
        ("PostToolUse", "Write|Edit", "true".into()),
    ]);
    write_json(&claude, &settings);
    let fake = FakeLlm::start(
        Script::new()
            .text("first answer")
            .tool_call("touch asked-about")
            .text("touched"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat", "--permission-mode", "ask"]);
    screen.wait_for("You (1)>");
    screen.line("/hooks");
    let shown = screen.wait_for("Notification");
    let listed = screen.wait_for("Write|Edit");
    assert!(shown.contains("PreCompact"), "{shown}");
    assert!(
        listed.contains(&claude.display().to_string()) || listed.contains("settings.json"),
        "{listed}"
    );

    screen.line("hello");
    screen.wait_for("first answer");
    screen.wait_for("You (2)>");
    screen.line("/compact");
    wait_until(DEADLINE, "PreCompact to be logged", || {
        names(&logged(&log)).contains(&"PreCompact".to_string())
    });
    let compact = logged(&log)
        .into_iter()
        .find(|e| e["hook_event_name"] == "PreCompact")
        .unwrap();
    assert_eq!(compact["trigger"], "manual");

    screen.line("touch it");
    wait_until(DEADLINE, "the approval's Notification", || {
        names(&logged(&log)).contains(&"Notification".to_string())
    });
    let note = logged(&log)
        .into_iter()
        .find(|e| e["hook_event_name"] == "Notification")
        .unwrap();
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains("touch asked-about"),
        "{note}"
    );
    assert_eq!(note["notification_type"], "permission_prompt");
    screen.line("y");
    screen.wait_for("You (3)>");

    // `/clear` starts a new session, which SessionStart hooks see as `clear`.
    screen.line("/clear");
    wait_until(DEADLINE, "SessionStart of the cleared session", || {
        logged(&log)
            .iter()
            .any(|e| e["hook_event_name"] == "SessionStart" && e["source"] == "clear")
    });
    let starts: Vec<String> = logged(&log)
        .iter()
        .filter(|e| e["hook_event_name"] == "SessionStart")
        .map(|e| e["source"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(starts, ["startup", "clear"]);
}
