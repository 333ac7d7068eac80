//! Issue 38, `synapse run`'s output as Claude Code's, end to end through the real daemon and the
//! scripted model: stream-json read by a consumer written against Claude Code's documented schema
//! (field names and JSON types of init, assistant, user and result lines), with and without
//! `--verbose`; one result for a piped multi-line `--input-format stream-json`; the `--max-turns`
//! ending (exit status, subtype, num_turns, errors); a closed stdout or stderr that ends nothing
//! and prints no panic; and the key sets of the real `claude -p` and Synapse on one script.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, ToolCall};
use synapse_tests::{DEADLINE, Run, TestEnv, run_async, wait_until};

/// A JSON type's name, as the schema says it.
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

/// Checks `line[field]` has the schema's type (`"string|null"` allows either).
fn expect(line: &Value, field: &str, types: &str) {
    let got = kind(&line[field]);
    assert!(
        types.split('|').any(|t| t == got),
        "{field}: expected {types}, got {got} in {line}"
    );
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<usize> = s.split('-').map(str::len).collect();
    parts == [8, 4, 4, 4, 12] && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// `2026-12-02T01:05:49.536Z`, Claude Code's timestamp form.
fn is_iso_millis(t: &str) -> bool {
    let shape: String = t
        .chars()
        .map(|c| if c.is_ascii_digit() { 'd' } else { c })
        .collect();
    shape == "dddd-dd-ddTdd:dd:dd.dddZ"
}

/// A consumer of `claude -p --output-format stream-json --verbose`, written from Claude Code's
/// documented message types (SDKSystemMessage, SDKAssistantMessage, SDKUserMessage,
/// SDKResultMessage): every field it reads, with its type.
fn read_as_claude_code_consumer(lines: &[Value]) {
    for line in lines {
        expect(line, "type", "string");
        expect(line, "session_id", "string");
        expect(line, "uuid", "string");
        assert!(is_uuid(line["uuid"].as_str().unwrap()), "{line}");
        match line["type"].as_str().unwrap() {
            "system" if line["subtype"] == "init" => {
                for f in ["cwd", "model", "permissionMode", "apiKeySource"] {
                    expect(line, f, "string");
                }
                expect(line, "claude_code_version", "string");
                expect(line, "output_style", "string");
                for f in ["tools", "mcp_servers", "slash_commands", "agents", "skills"] {
                    expect(line, f, "array");
                }
                expect(line, "plugins", "array");
                for p in line["plugins"].as_array().unwrap() {
                    expect(p, "name", "string");
                    expect(p, "path", "string");
                }
                for s in line["mcp_servers"].as_array().unwrap() {
                    expect(s, "name", "string");
                    expect(s, "status", "string");
                }
            }
            "system" => expect(line, "subtype", "string"),
            "assistant" | "user" => {
                expect(line, "message", "object");
                expect(line, "parent_tool_use_id", "string|null");
                expect(line, "timestamp", "string");
                let t = line["timestamp"].as_str().unwrap();
                assert!(is_iso_millis(t), "{t}");
                let message = &line["message"];
                expect(message, "role", "string");
                expect(message, "content", "array");
                if line["type"] == "assistant" {
                    expect(message, "id", "string");
                    expect(message, "model", "string");
                    expect(message, "usage", "object");
                    expect(&message["usage"], "input_tokens", "number");
                    expect(&message["usage"], "output_tokens", "number");
                } else {
                    let block = &message["content"][0];
                    assert_eq!(block["type"], "tool_result", "{line}");
                    expect(block, "tool_use_id", "string");
                    expect(block, "is_error", "boolean");
                    if block["is_error"] == true {
                        expect(line, "tool_use_result", "string");
                    } else {
                        let r = &line["tool_use_result"];
                        expect(r, "stdout", "string");
                        expect(r, "stderr", "string");
                        expect(r, "interrupted", "boolean");
                        expect(r, "isImage", "boolean");
                    }
                }
            }
            "result" => {
                expect(line, "subtype", "string");
                expect(line, "is_error", "boolean");
                for f in [
                    "duration_ms",
                    "duration_api_ms",
                    "num_turns",
                    "total_cost_usd",
                ] {
                    expect(line, f, "number");
                }
                expect(line, "usage", "object");
                expect(line, "permission_denials", "array");
                if line["subtype"] == "success" {
                    expect(line, "result", "string");
                } else {
                    expect(line, "errors", "array");
                }
            }
            "stream_event" => expect(line, "event", "object"),
            other => panic!("a line of type {other} is not in Claude Code's schema: {line}"),
        }
    }
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

async fn synapse(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(args);
    run_async(cmd).await
}

/// A command that succeeds, then one that fails, then the answer.
fn two_commands() -> Script {
    Script::new()
        .reply(Reply::new().call(ToolCall::bash("echo out; echo err >&2").id("toolu_ok")))
        .reply(Reply::new().call(ToolCall::bash("echo nope; exit 3").id("toolu_bad")))
        .text("all done")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_reads_as_claude_codes_schema_with_and_without_verbose() {
    let env = TestEnv::new();
    for verbose in [true, false] {
        let fake = FakeLlm::start(two_commands()).await.unwrap();
        let mut args = vec!["-p", "go", "--output-format", "stream-json", "--yes"];
        if verbose {
            args.push("--verbose");
        }
        let out = synapse(&env, &fake, &args).await;
        assert!(out.success(), "{out:?}");
        let lines = json_lines(&out.stdout);
        read_as_claude_code_consumer(&lines);
        let init = &lines[0];
        assert_eq!(init["subtype"], "init", "{init}");
        assert!(!init["claude_code_version"].as_str().unwrap().is_empty());
        let users: Vec<&Value> = lines.iter().filter(|l| l["type"] == "user").collect();
        assert_eq!(users.len(), 2, "{lines:?}");
        assert!(
            users[0]["tool_use_result"]["stdout"]
                .as_str()
                .unwrap()
                .contains("out"),
            "{}",
            users[0]
        );
        assert_eq!(users[0]["tool_use_result"]["interrupted"], false);
        let failed = users[1]["tool_use_result"].as_str().unwrap();
        assert!(
            failed.starts_with("Error: ") && failed.contains("nope"),
            "{failed}"
        );
        let uuids: BTreeSet<&str> = lines.iter().filter_map(|l| l["uuid"].as_str()).collect();
        assert_eq!(uuids.len(), lines.len(), "every line its own uuid");
        let result = lines.last().unwrap();
        assert_eq!(
            (&result["subtype"], &result["result"]),
            (&"success".into(), &"all done".into())
        );
        assert_eq!(result["num_turns"], 3, "{result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_lists_skills_and_the_plugins_they_come_from() {
    let env = TestEnv::new();
    env.write_skill(
        "pdf-notes",
        "Use when the user asks about PDF notes.",
        "# PDF notes\n",
    );
    let plugin = env
        .user_home()
        .join(".claude/plugins/cache/market/docs/1.0.0");
    let skill = plugin.join("skills/guide");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: guide\ndescription: Use when the user asks for the docs guide.\n---\n# Guide\n",
    )
    .unwrap();
    std::fs::write(
        env.user_home().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"docs@market": true}}"#,
    )
    .unwrap();
    let fake = FakeLlm::start(Script::new().text("ok")).await.unwrap();
    let out = synapse(&env, &fake, &["-p", "hi", "--output-format", "stream-json"]).await;
    assert!(out.success(), "{out:?}");
    let lines = json_lines(&out.stdout);
    read_as_claude_code_consumer(&lines);
    let init = &lines[0];
    let skills: Vec<&str> = init["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(skills.contains(&"pdf-notes"), "{init}");
    assert!(skills.contains(&"docs:guide"), "{init}");
    assert_eq!(
        init["plugins"],
        serde_json::json!([{"name": "docs", "path": plugin.display().to_string(), "source": "docs@market", "version": "1.0.0"}]),
        "{init}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_multi_line_stream_json_input_prints_one_result() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("first answer").text("second answer"))
        .await
        .unwrap();
    let mut cmd = tokio::process::Command::from(env.synapse_with_model(&fake));
    cmd.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = concat!(
        r#"{"type":"user","message":{"role":"user","content":"first question"}}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":"second question"}}"#,
        "\n",
    );
    {
        use tokio::io::AsyncWriteExt;
        input.write_all(stdin.as_bytes()).await.unwrap();
    }
    drop(input);
    let out = Run::from(child.wait_with_output().await.unwrap());
    assert!(out.success(), "{out:?}");
    assert_eq!(fake.requests().len(), 2);
    let lines = json_lines(&out.stdout);
    read_as_claude_code_consumer(&lines);
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1, "{lines:?}");
    assert_eq!(results[0]["result"], "second answer");
    assert_eq!(results[0]["num_turns"], 2);
    assert_eq!(lines.iter().filter(|l| l["subtype"] == "init").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_ends_as_claude_code_does() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("echo one")
            .tool_call("echo two")
            .text("never asked"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "-p",
            "go",
            "--max-turns",
            "2",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(fake.requests().len(), 2);
    let lines = json_lines(&out.stdout);
    read_as_claude_code_consumer(&lines);
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "error_max_turns", "{result}");
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["num_turns"], 3,
        "the turn the limit refused counts: {result}"
    );
    assert_eq!(
        result["errors"],
        serde_json::json!(["Reached maximum number of turns (2)"])
    );
    // Text mode: the same status, the reason on stderr.
    let fake = FakeLlm::start(Script::new().tool_call("echo one").text("never"))
        .await
        .unwrap();
    let out = synapse(&env, &fake, &["-p", "go", "--max-turns", "1"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("--max-turns"), "{}", out.stderr);
}

/// Waits (up to 60 s) until the test creates `release`, then prints.
const WAIT_FOR_RELEASE: &str =
    "for i in $(seq 600); do [ -e release ] && break; sleep 0.1; done; echo released > after.txt";

/// Reads one line of `pipe`, then closes it.
fn read_one_line_and_close(pipe: impl Read) -> String {
    let mut line = String::new();
    BufReader::new(pipe).read_line(&mut line).unwrap();
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_or_stderr_ends_nothing_and_prints_no_panic() {
    let env = TestEnv::new();
    let script = || {
        Script::new()
            .tool_call("echo first")
            .reply(Reply::new().call(ToolCall::bash(WAIT_FOR_RELEASE)))
            .text("the answer ".repeat(20_000))
    };
    let release = env.workdir().join("release");
    let after = env.workdir().join("after.txt");
    // stdout closed after the first stream-json line: the run goes on and exits 0.
    let fake = FakeLlm::start(script()).await.unwrap();
    let mut cmd: Command = env.synapse_with_model(&fake);
    cmd.args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let first = read_one_line_and_close(child.stdout.take().unwrap());
    assert!(first.contains("\"init\""), "{first}");
    std::fs::write(&release, "").unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    wait_until(DEADLINE, "the command after the closed pipe ran", || {
        after.exists()
    });

    // stderr closed after the first tool line: the answer still reaches stdout.
    std::fs::remove_file(&release).unwrap();
    std::fs::remove_file(&after).unwrap();
    let fake = FakeLlm::start(script()).await.unwrap();
    let mut cmd: Command = env.synapse_with_model(&fake);
    cmd.args(["-p", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let first = read_one_line_and_close(child.stderr.take().unwrap());
    assert!(first.contains("echo first"), "{first}");
    std::fs::write(&release, "").unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        stdout.starts_with("the answer"),
        "{}",
        &stdout[..100.min(stdout.len())]
    );
    assert!(after.exists());

    // Both on one pipe, closed by `head -1`, as a user types it.
    std::fs::remove_file(&release).unwrap();
    let fake = FakeLlm::start(Script::new().text("line\n".repeat(50_000)))
        .await
        .unwrap();
    let mut cmd = Command::new("bash");
    env.apply_env(&mut cmd);
    cmd.arg("-c")
        .arg(format!(
            "{} -p go 2>&1 | head -1; exit ${{PIPESTATUS[0]}}",
            synapse_tests::bin("synapse").display()
        ))
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test");
    let out = run_async(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "line\n");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// The real Claude Code, if the fixtures hold it.
fn claude_code() -> Option<std::path::PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/node_modules/.bin/claude");
    path.exists().then_some(path)
}

/// The keys of each line's type (`system/init`, `assistant`, `user`, `result`).
fn key_sets(lines: &[Value]) -> Vec<(String, BTreeSet<String>)> {
    lines
        .iter()
        .map(|l| {
            let name = match l["subtype"].as_str() {
                Some(sub) if l["type"] == "system" => format!("system/{sub}"),
                _ => l["type"].as_str().unwrap_or_default().to_string(),
            };
            let keys = l.as_object().unwrap().keys().cloned().collect();
            (name, keys)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_code_and_synapse_print_the_same_keys() {
    let Some(claude) = claude_code() else {
        panic!("tests/fixtures/node_modules/.bin/claude is missing: run tests/fixtures/install.sh");
    };
    let script = || {
        Script::new()
            .reply(Reply::new().call(ToolCall::bash("echo hi").id("toolu_1")))
            .text("all done")
    };
    let env = TestEnv::new();
    let fake = FakeLlm::start(script()).await.unwrap();
    let mut cmd = Command::new(claude);
    env.apply_env(&mut cmd);
    cmd.current_dir(env.workdir())
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(["--allowedTools", "Bash"])
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test");
    let out = run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let theirs = key_sets(&json_lines(&out.stdout));

    let fake = FakeLlm::start(script()).await.unwrap();
    let out = synapse(
        &env,
        &fake,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    // Synapse's own `system` lines (a long command's `tool_progress`, notices) come and go with
    // how long things take; Claude Code's schema has only `init` of them.
    let ours: Vec<_> = key_sets(&json_lines(&out.stdout))
        .into_iter()
        .filter(|(name, _)| !name.starts_with("system/") || name == "system/init")
        .collect();
    let names =
        |s: &[(String, BTreeSet<String>)]| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&theirs), names(&ours));
    // Every key of Claude Code's messages and of the fields its documentation lists for init
    // and result, Synapse prints too (Claude Code adds telemetry keys of its own).
    let documented: &[&str] = &[
        "type",
        "subtype",
        "session_id",
        "uuid",
        "cwd",
        "model",
        "tools",
        "mcp_servers",
        "slash_commands",
        "agents",
        "skills",
        "plugins",
        "permissionMode",
        "apiKeySource",
        "claude_code_version",
        "output_style",
        "message",
        "parent_tool_use_id",
        "timestamp",
        "tool_use_result",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "result",
        "total_cost_usd",
        "usage",
        "permission_denials",
        "stop_reason",
    ];
    for ((name, cc), (_, syn)) in theirs.iter().zip(&ours) {
        for key in cc.iter().filter(|k| documented.contains(&k.as_str())) {
            assert!(
                syn.contains(key),
                "{name}: Synapse lacks {key} (has {syn:?})"
            );
        }
    }
}
