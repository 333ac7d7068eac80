//! Issue 38, hooks written for Claude Code read what Claude Code gives them, through the real
//! daemon and the fake model: `transcript_path` names a transcript in Claude Code's format
//! (`type`, `message.content`, `uuid`/`parentUuid`, `toolUseResult`), written as the session goes,
//! so a Stop hook that reads the last assistant line with `jq '.message.content'` gets the
//! model's last words; and each event's stdin carries the fields Claude Code 2.1.332 sends, with
//! the same JSON types, `tool_response` of `Bash` and `Write` included.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, wait_until};

/// What the real Claude Code 2.1.332 sent its hooks for `echo hi` then a Write of a new file
/// (captured with a hook that `cat`s its stdin, ids and paths shortened). The test compares
/// names and JSON types, not values.
const CLAUDE_CODE_STDIN: &str = r#"
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"UserPromptSubmit","prompt":"say hi"}
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hi","description":"say hi"},"tool_use_id":"toolu_01A"}
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo hi","description":"say hi"},"tool_response":{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_01A","duration_ms":1301}
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/out.txt","content":"hello\n"},"tool_use_id":"toolu_01B"}
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"/w/out.txt","content":"hello\n"},"tool_response":{"type":"create","filePath":"/w/out.txt","content":"hello\n","structuredPatch":[],"originalFile":null,"userModified":false},"tool_use_id":"toolu_01B","duration_ms":97}
{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All done.","background_tasks":[],"session_crons":[]}
"#;

/// Claude Code fields Synapse has no counterpart for: the model's reasoning effort setting and
/// Claude Code's own background tasks and crons.
const NOT_OURS: [&str; 3] = ["effort", "background_tasks", "session_crons"];

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

fn hook(command: String) -> Value {
    json!([{"matcher": "", "hooks": [{"type": "command", "command": command}]}])
}

fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every field of `theirs` (and of its `tool_response`) is in `ours` with the same JSON type.
fn same_shape(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let event = theirs["hook_event_name"].as_str().unwrap_or("?");
    for (key, value) in theirs.as_object().unwrap() {
        if NOT_OURS.contains(&key.as_str()) {
            continue;
        }
        match ours.get(key) {
            None => wrong.push(format!("{event}: `{key}` missing")),
            Some(o) if kind(o) != kind(value) => wrong.push(format!(
                "{event}: `{key}` is {} (Claude Code: {})",
                kind(o),
                kind(value)
            )),
            Some(_) => {}
        }
    }
    if let (Some(o), Some(t)) = (ours.get("tool_response"), theirs.get("tool_response")) {
        for (key, value) in t.as_object().unwrap() {
            match o.get(key) {
                Some(v) if kind(v) == kind(value) => {}
                other => wrong.push(format!(
                    "{event} {}: tool_response.{key} is {:?} (Claude Code: {})",
                    theirs["tool_name"],
                    other.map(kind),
                    kind(value)
                )),
            }
        }
    }
    wrong
}

async fn run_in(env: &TestEnv, fake: &FakeLlm, dir: &Path, prompt: &str) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.current_dir(dir)
        .args(["run", prompt])
        .stdin(Stdio::null());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_get_claude_codes_stdin_and_transcript() {
    let env = TestEnv::new();
    let log = env.root().join("stdin.log");
    let last = env.root().join("last-assistant.json");
    let logger = format!("cat >> '{0}'; echo >> '{0}'", log.display());
    // The way Claude Code's docs (and ralph-wiggum) read the transcript in a Stop hook.
    let reader = format!(
        "t=$(jq -r .transcript_path); grep '\"role\":\"assistant\"' \"$t\" | tail -1 | jq -c '.message.content' > '{}'",
        last.display()
    );
    let mut hooks = serde_json::Map::new();
    for event in ["UserPromptSubmit", "PreToolUse", "PostToolUse"] {
        hooks.insert(event.into(), hook(logger.clone()));
    }
    let mut stop = hook(logger.clone());
    stop[0]["hooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "command": reader}));
    hooks.insert("Stop".into(), stop);
    write_json(
        &env.user_home().join(".claude/settings.json"),
        &json!({ "hooks": hooks }),
    );

    let fake = FakeLlm::start(
        Script::new()
            .tool_call("echo hi")
            .tool_call("write out.txt 'hello'")
            .text("All done."),
    )
    .await
    .unwrap();
    let out = run_in(&env, &fake, &env.workdir(), "say hi").await;
    assert!(out.success(), "{out:?}");
    wait_until(DEADLINE, "the Stop hooks to finish", || {
        last.is_file() && logged(&log).len() >= 6
    });

    // Field by field against Claude Code's, in the same order of events.
    let ours = logged(&log);
    let theirs: Vec<Value> = CLAUDE_CODE_STDIN
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|e| format!("{} {}", e["hook_event_name"], e["tool_name"]))
            .collect()
    };
    assert_eq!(names(&ours), names(&theirs), "{ours:#?}");
    let wrong: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .flat_map(|(o, t)| same_shape(o, t))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}\n{ours:#?}");
    // One prompt, one id; the model's last words reach the Stop hook.
    let prompt_id = &ours[0]["prompt_id"];
    assert!(
        ours.iter().all(|e| &e["prompt_id"] == prompt_id),
        "{ours:#?}"
    );
    assert_eq!(ours[5]["last_assistant_message"], "All done.");
    assert!(
        ours[2]["tool_response"]["stdout"]
            .as_str()
            .is_some_and(|s| s.starts_with("hi")),
        "{}",
        ours[2]
    );
    assert_eq!(ours[4]["tool_response"]["type"], "create");

    // The transcript: Claude Code's lines, chained, beside the session log.
    let path = PathBuf::from(ours[0]["transcript_path"].as_str().unwrap());
    assert!(path.starts_with(env.home().join("sessions")), "{path:?}");
    let content: Value = serde_json::from_str(&std::fs::read_to_string(&last).unwrap()).unwrap();
    assert_eq!(content, json!([{"type": "text", "text": "All done."}]));
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "{lines:#?}"
    );
    assert_eq!(lines[0]["message"]["content"], "say hi");
    assert_eq!(lines[1]["message"]["content"][0]["type"], "tool_use");
    assert!(
        lines[2]["toolUseResult"]["stdout"]
            .as_str()
            .is_some_and(|s| s.contains("hi")),
        "{}",
        lines[2]
    );
    assert_eq!(lines[2]["sourceToolAssistantUUID"], lines[1]["uuid"]);
    for pair in lines.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"], "{pair:#?}");
    }
    for l in &lines {
        assert_eq!(l["sessionId"], ours[0]["session_id"], "{l}");
        assert_eq!(l["cwd"], env.workdir().display().to_string(), "{l}");
        assert!(
            l["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{l}"
        );
    }
}
