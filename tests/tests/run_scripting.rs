//! Issue 30, scripting parity with `claude -p`, end to end through the real daemon and the fake
//! model: `--append-system-prompt` and `--system-prompt` in what the model receives, `--max-turns`
//! ending the run as `error_max_turns`, `--disallowedTools` refusing even with `--yes` in yolo
//! mode, `--allowedTools` letting a command run unasked, `--input-format stream-json` running each
//! stdin message as a turn, the stream-json output checked field by field against Claude Code's
//! schema, and every example of `synapse run --help` run as written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, ToolCall};
use synapse_tests::{Run, TestEnv, run_async};

/// Runs `synapse <args>` against the fake model.
async fn synapse(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(args);
    run_async(cmd).await
}

/// Runs `synapse <args>` against the fake model with `stdin` as its input.
async fn synapse_with_stdin(env: &TestEnv, fake: &FakeLlm, args: &[&str], stdin: &str) -> Run {
    let mut cmd = tokio::process::Command::from(env.synapse_with_model(fake));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_string();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        input.write_all(text.as_bytes()).await.unwrap();
    });
    Run::from(child.wait_with_output().await.unwrap())
}

/// Every stdout line as JSON (each must be valid).
fn json_lines(out: &Run) -> Vec<Value> {
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn json_object(out: &Run) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_flags_change_what_the_model_is_told() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("one").text("two"))
        .await
        .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "-p",
            "hi",
            "--append-system-prompt",
            "Always end with APPENDED-MARKER-7.",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(system.starts_with("You are Synapse"), "{system}");
    assert!(
        system
            .trim_end()
            .ends_with("Always end with APPENDED-MARKER-7."),
        "{system}"
    );

    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "hi",
            "--system-prompt",
            "You are Reviewer-Bot, terse.",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[1].system_text().unwrap();
    assert!(
        system.starts_with("You are Reviewer-Bot, terse."),
        "{system}"
    );
    assert!(!system.contains("You are Synapse"), "{system}");
    // The tool's documentation stays: the model can still act.
    assert!(system.contains("### read"), "{system}");
    assert!(!system.contains("APPENDED-MARKER-7"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_ends_the_run_with_error_max_turns_after_that_many_requests() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("echo ran > ran.txt")
            .text("never asked"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &["run", "go", "--max-turns", "1", "--output-format", "json"],
    )
    .await;
    // Claude Code's ending: exit 1, and num_turns counts the turn the limit refused.
    assert_eq!(out.code, Some(1), "{out:?}");
    let v = json_object(&out);
    assert_eq!(v["type"], "result", "{v}");
    assert_eq!(v["subtype"], "error_max_turns", "{v}");
    assert_eq!(v["is_error"], true, "{v}");
    assert_eq!(v["num_turns"], 2, "{v}");
    assert_eq!(fake.requests().len(), 1);
    // The answer's tool call ran; only the next request was not made.
    assert!(env.workdir().join("ran.txt").exists());

    let out = synapse(&env, &fake, &["run", "go", "--max-turns", "0"]).await;
    assert_eq!(out.code, Some(2), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disallowed_tool_is_refused_even_with_yes_in_yolo_mode() {
    let env = TestEnv::new();
    let victim = env.workdir().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .reply(Reply::new().call(ToolCall::bash("rm victim.txt").id("toolu_rm")))
            .text("tried"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "clean up",
            "--disallowedTools",
            "Bash(rm:*)",
            "--yes",
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "json",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(victim.exists(), "rm ran despite --disallowedTools");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains("Permission denied") && result.contains("--disallowedTools"),
        "{result}"
    );
    let v = json_object(&out);
    assert_eq!(
        v["permission_denials"],
        serde_json::json!([{"tool_name": "Bash", "tool_use_id": "toolu_rm", "tool_input": {"command": "rm victim.txt"}}]),
        "{v}"
    );

    // A rule that cannot be read exactly stops the run before the model is asked.
    let out = synapse(
        &env,
        &fake,
        &["run", "x", "--disallowedTools", "bash(rm:*)"],
    )
    .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("bash(rm:*)") && out.stderr.contains("case-sensitive"),
        "{}",
        out.stderr
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_tool_runs_without_a_question() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("touch first.txt")
            .text("asked")
            .tool_call("touch second.txt")
            .text("made"),
    )
    .await
    .unwrap();
    // Claude Code's default mode asks before a command runs: nobody answers in a run.
    let ask = ["--permission-mode", "default"];
    let out = synapse(&env, &fake, &[&["run", "make it"][..], &ask].concat()).await;
    assert!(out.success(), "{out:?}");
    assert!(!env.workdir().join("first.txt").exists());
    assert!(out.stderr.contains("denied"), "{}", out.stderr);

    let out = synapse(
        &env,
        &fake,
        &[
            &["run", "make it", "--allowedTools", "Bash(touch:*),Read"][..],
            &ask,
        ]
        .concat(),
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(env.workdir().join("second.txt").exists(), "{out:?}");
    assert!(!out.stderr.contains("denied"), "{}", out.stderr);
    assert_eq!(out.stdout, "made\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_input_runs_each_message_as_a_turn_of_one_session() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("first answer").text("second answer"))
        .await
        .unwrap();
    let stdin = concat!(
        r#"{"type":"user","message":{"role":"user","content":"first question"}}"#,
        "\n\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}"#,
        "\n",
    );
    let out = synapse_with_stdin(
        &env,
        &fake,
        &[
            "run",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ],
        stdin,
    )
    .await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let last = serde_json::to_string(requests[1].messages()).unwrap();
    assert!(
        last.contains("first question")
            && last.contains("first answer")
            && last.contains("second question"),
        "{last}"
    );
    let lines = json_lines(&out);
    // Both lines were there as the first turn ended: one batch, one result (as Claude Code).
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1, "{lines:?}");
    assert_eq!(results[0]["result"], "second answer");
    assert_eq!(results[0]["num_turns"], 2);
    let answers: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
    assert_eq!(answers[0]["message"]["content"][0]["text"], "first answer");
    assert_eq!(answers[0]["session_id"], results[0]["session_id"]);
    // --include-partial-messages: the text as it streamed, in Claude Code's stream_event form.
    let streamed: String = lines
        .iter()
        .filter(|l| l["type"] == "stream_event")
        .filter_map(|l| l["event"]["delta"]["text"].as_str())
        .collect();
    assert_eq!(streamed, "first answersecond answer", "{lines:?}");

    // A line that is not a user message ends the run, naming the line.
    let out = synapse_with_stdin(
        &env,
        &fake,
        &["run", "--input-format", "stream-json"],
        "not json\n",
    )
    .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("stdin line 1"), "{}", out.stderr);
}

/// Prints a line, then waits (up to 60 s) until the test creates `release`.
const WAITING_COMMAND: &str =
    "echo step-$((40+2)); for i in $(seq 600); do [ -e release ] && break; sleep 0.1; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_output_follows_claude_codes_event_schema() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .reply(Reply::new().call(ToolCall::bash(WAITING_COMMAND).id("toolu_wait")))
            .reply(Reply::new().text("all done").usage(120, 7)),
    )
    .await
    .unwrap();
    let mut cmd: Command = env.synapse_with_model(&fake);
    cmd.args(["run", "wait for it", "--output-format", "stream-json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let release = env.workdir().join("release");
    let lines = tokio::task::spawn_blocking(move || {
        let mut seen: Vec<Value> = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let event: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            // The command is still running when its progress shows up.
            if event["subtype"] == "tool_progress" && event["tail"] == "step-42" {
                std::fs::File::create(&release).unwrap().flush().unwrap();
            }
            seen.push(event);
        }
        seen
    })
    .await
    .unwrap();
    assert!(child.wait().unwrap().success());

    let init = &lines[0];
    assert_eq!(
        (&init["type"], &init["subtype"]),
        (&"system".into(), &"init".into()),
        "{init}"
    );
    let session = init["session_id"].as_str().unwrap();
    assert!(!session.is_empty());
    assert_eq!(init["cwd"], env.workdir().display().to_string());
    assert!(
        init["model"].as_str().is_some_and(|m| !m.is_empty()),
        "{init}"
    );
    assert_eq!(init["tools"], serde_json::json!(["Bash"]));
    assert!(
        init["mcp_servers"].is_array() && init["slash_commands"].is_array(),
        "{init}"
    );
    let agents: Vec<&str> = init["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        agents.contains(&"general") && agents.contains(&"explore"),
        "{init}"
    );
    assert_eq!(init["permissionMode"], "acceptEdits", "{init}");
    assert!(init["apiKeySource"].is_string(), "{init}");

    for line in &lines {
        assert_eq!(line["session_id"], session, "{line}");
    }
    let find = |pred: &dyn Fn(&Value) -> bool| lines.iter().position(pred).unwrap();
    let call = find(&|l| l["type"] == "assistant" && l["message"]["stop_reason"] == "tool_use");
    let message = &lines[call]["message"];
    assert!(
        message["id"].as_str().unwrap().starts_with("msg_"),
        "{message}"
    );
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert!(message["model"].is_string());
    assert_eq!(lines[call]["parent_tool_use_id"], Value::Null);
    let tool_use = &message["content"][0];
    assert_eq!(tool_use["type"], "tool_use", "{message}");
    assert_eq!(tool_use["id"], "toolu_wait");
    assert_eq!(tool_use["name"], "Bash");
    assert_eq!(tool_use["input"]["command"], WAITING_COMMAND);
    assert!(message["usage"]["input_tokens"].is_u64(), "{message}");

    let progress = find(&|l| l["type"] == "system" && l["subtype"] == "tool_progress");
    assert_eq!(
        lines[progress]["tool_use_id"], "toolu_wait",
        "{}",
        lines[progress]
    );
    let result_msg = find(&|l| l["type"] == "user");
    let block = &lines[result_msg]["message"]["content"][0];
    assert_eq!(lines[result_msg]["message"]["role"], "user");
    assert_eq!(block["type"], "tool_result", "{block}");
    assert_eq!(block["tool_use_id"], "toolu_wait");
    assert_eq!(block["is_error"], false);
    assert!(
        block["content"].as_str().unwrap().contains("step-42"),
        "{block}"
    );
    assert!(call < progress && progress < result_msg, "{lines:?}");

    let answer = find(&|l| l["type"] == "assistant" && l["message"]["stop_reason"] == "end_turn");
    assert_eq!(
        lines[answer]["message"]["content"],
        serde_json::json!([{"type": "text", "text": "all done"}])
    );
    let result = lines.last().unwrap();
    assert!(answer < lines.len() - 1);
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "all done");
    assert_eq!(result["num_turns"], 2);
    assert!(
        result["usage"]["input_tokens"].as_u64().unwrap() >= 120,
        "{result}"
    );
    assert!(
        result["usage"]["output_tokens"].as_u64().unwrap() >= 7,
        "{result}"
    );
    for field in ["duration_ms", "duration_api_ms", "total_cost_usd"] {
        assert!(result[field].is_number(), "{field}: {result}");
    }
    assert_eq!(result["permission_denials"], serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_of_run_help_runs() {
    let env = TestEnv::new();
    let help = env.cli(&["run", "--help"]);
    assert!(help.success(), "{help:?}");
    for flag in [
        "--max-turns",
        "--append-system-prompt",
        "--system-prompt",
        "--allowedTools",
        "--disallowedTools",
        "--input-format",
        "--output-format",
    ] {
        assert!(help.stdout.contains(flag), "{flag} missing from run --help");
    }
    let examples: Vec<&str> = help
        .stdout
        .lines()
        .skip_while(|l| *l != "Examples:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    assert!(examples.len() >= 5, "{examples:?}");
    let bin_dir = synapse_tests::bin("synapse")
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for example in examples {
        let fake = FakeLlm::start(Script::new().text("ok")).await.unwrap();
        let mut cmd = Command::new("bash");
        env.apply_env(&mut cmd);
        cmd.args(["-c", example])
            .env("PATH", &path)
            .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-test");
        let out = run_async(cmd).await;
        assert!(out.success(), "{example}: {out:?}");
        assert!(out.stdout.contains("ok"), "{example}: {}", out.stdout);
        assert_eq!(fake.requests().len(), 1, "{example}");
    }
}
