//! Issue 6 end to end: `synapse run` against the scripted fake LLM, through a real daemon, real
//! shell sessions and real session files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use synapse_tests::fake_llm::{ErrorReply, FakeLlm, Reply, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, processes_matching, wait_until};

enum Api {
    Anthropic,
    OpenAi,
}

fn agent_cmd(env: &TestEnv, fake: &FakeLlm, api: Api, args: &[&str]) -> tokio::process::Command {
    let mut cmd = env.synapse();
    match api {
        Api::Anthropic => {
            cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "sk-test-key");
        }
        Api::OpenAi => {
            cmd.env("SYNAPSE_PROVIDER", "openai")
                .env("OPENAI_BASE_URL", fake.openai_base_url())
                .env("SYNAPSE_MODEL", "local-model");
        }
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::process::Command::from(cmd)
}

async fn run_agent(env: &TestEnv, fake: &FakeLlm, api: Api, args: &[&str]) -> Run {
    let out = agent_cmd(env, fake, api, args).output().await.unwrap();
    Run::from(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_task_writes_a_file_reads_it_back_and_answers() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("write notes/todo.txt \"buy milk\"")
            .tool_call("read notes/todo.txt")
            .text("The note says: buy milk."),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, Api::Anthropic, &["run", "what is in my note?"]).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "The note says: buy milk.");
    assert!(
        out.stderr.contains("● write notes/todo.txt"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("notes/todo.txt")).unwrap(),
        "buy milk"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(r.tool_names(), vec!["Bash".to_string()], "exactly one tool");
    }
    assert_eq!(
        requests[0].last_user_text().as_deref(),
        Some("what is in my note?")
    );
    let read_result = requests[2].last_tool_result().unwrap();
    assert!(read_result.contains("buy milk"), "{read_result}");
    let system = requests[0].system_text().unwrap();
    assert!(system.contains("### read") && system.contains(&env.workdir().display().to_string()));
    assert!(
        // The bare prompt documents every agent command in full (issue 39: ≤ 12 KB).
        requests[0].body_len <= 12 * 1024,
        "first request is {} bytes",
        requests[0].body_len
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_path_runs_the_same_task() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("write a.txt hello")
            .tool_call("read a.txt")
            .text("done: hello"),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, Api::OpenAi, &["run", "-p", "do it"]).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "done: hello");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("a.txt")).unwrap(),
        "hello"
    );
    assert!(
        fake.requests()[2]
            .last_tool_result()
            .unwrap()
            .contains("hello")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cwd_persists_and_continue_sends_the_earlier_history() {
    let env = TestEnv::new();
    std::fs::create_dir(env.workdir().join("sub")).unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("cd sub")
            .text("moved")
            .tool_call("pwd")
            .text("in sub"),
    )
    .await
    .unwrap();
    let first = run_agent(
        &env,
        &fake,
        Api::Anthropic,
        &["run", "go to sub", "--output-format", "json"],
    )
    .await;
    assert!(first.success(), "{first:?}");
    let json: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    let id = json["session_id"].as_str().unwrap().to_string();
    assert_eq!(json["result"], "moved");

    let second = run_agent(
        &env,
        &fake,
        Api::Anthropic,
        &["run", "where are you?", "--continue"],
    )
    .await;
    assert!(second.success(), "{second:?}");
    let requests = fake.requests();
    let pwd = requests[3].last_tool_result().unwrap();
    assert!(pwd.contains("/sub"), "cwd did not persist: {pwd}");
    let history = serde_json::to_string(requests[2].messages()).unwrap();
    assert!(
        history.contains("go to sub"),
        "resumed request lacks the first turn: {history}"
    );

    let list = env.cli(&["sessions", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["title"], "go to sub");
    let file = std::fs::read_to_string(env.home().join(format!("sessions/{id}.jsonl"))).unwrap();
    let lines: Vec<serde_json::Value> = file
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "header");
    assert_eq!(lines[0]["cwd"], env.workdir().display().to_string());
    let messages = lines.iter().filter(|l| l["type"] == "message").count();
    assert_eq!(
        messages, 8,
        "8 messages (2 turns × user, call, result, answer)"
    );
    // The session's fixed system prompt is kept once, so `--continue` sends the same bytes.
    let prompts = lines.iter().filter(|l| l["type"] == "prompt").count();
    assert_eq!(prompts, 1, "{file}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overloaded_twice_then_success_shows_the_retries() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .error(ErrorReply::overloaded().header("retry-after-ms", "20"))
            .error(ErrorReply::overloaded().header("retry-after-ms", "20"))
            .text("finally"),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, Api::Anthropic, &["run", "hi"]).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "finally");
    assert!(
        out.stderr
            .contains("529 overloaded_error: Overloaded — retrying, attempt 2/5")
            && out.stderr.contains("attempt 3/5"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_after_a_tool_call_never_runs_the_command() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new().reply(
            Reply::new()
                .tool_call("echo ran >> marker.txt")
                .cut_after(6),
        ),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, Api::Anthropic, &["run", "hi"]).await;
    // Exit 3: the model call failed (issue 18's distinct exit codes).
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("synapse: "), "{}", out.stderr);
    assert!(
        !env.workdir().join("marker.txt").exists(),
        "the cut call must not run"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "a stream broken after output is not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_running_command_and_kills_it() {
    let env = TestEnv::new();
    let marker = format!("sleep 97{}", std::process::id() % 100);
    let fake = FakeLlm::start(Script::new().tool_call(marker.clone()).text("never"))
        .await
        .unwrap();
    let child = agent_cmd(&env, &fake, Api::Anthropic, &["run", "sleep please"])
        .spawn()
        .unwrap();
    wait_until(DEADLINE, "the sleep to start", || {
        !processes_matching(&marker).is_empty()
    });
    let pid = child.id().unwrap() as i32;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGINT).unwrap();
    let out = Run::from(
        tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .unwrap()
            .unwrap(),
    );
    assert_eq!(out.code, Some(130), "{out:?}");
    wait_until(DEADLINE, "the sleep to be killed", || {
        processes_matching(&marker).is_empty()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_configured_says_how_to_set_one() {
    let env = TestEnv::new();
    let out = Run::from(
        tokio::process::Command::from({
            let mut c = env.synapse();
            c.args(["run", "hi"]).stdin(Stdio::null());
            c
        })
        .output()
        .await
        .unwrap(),
    );
    // Exit 3: no model could be called (issue 18's distinct exit codes).
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("ANTHROPIC_API_KEY"), "{}", out.stderr);
    assert!(out.stderr.contains("OPENAI_BASE_URL"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_skips_corrupt_lines_and_closes_interrupted_commands() {
    let env = TestEnv::new();
    let sessions = env.home().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let id = "20261122-000000-abcdef";
    let header = serde_json::json!({"type": "header", "version": 1, "id": id,
        "cwd": env.workdir().display().to_string(), "model": "m", "created": "2026-11-22T00:00:00.000Z"});
    let user = serde_json::json!({"type": "message", "ts": "t", "data": {"role": "user", "content": [{"type": "text", "text": "run the build"}]}});
    let call = serde_json::json!({"type": "message", "ts": "t", "data": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make"}}]}});
    let file = format!("{header}\n{user}\n{{\"type\":\"message\",\"da\n{call}\n");
    std::fs::write(sessions.join(format!("{id}.jsonl")), file).unwrap();

    let fake = FakeLlm::start(Script::new().text("resumed fine"))
        .await
        .unwrap();
    let out = run_agent(
        &env,
        &fake,
        Api::Anthropic,
        &["run", "go on", "--resume", id],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr.contains(":3: skipped corrupt line"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    let request = &fake.requests()[0];
    let result = request.tool_results();
    assert_eq!(result.len(), 1, "{result:?}");
    assert!(
        result[0]
            .1
            .contains("interrupted before this command finished"),
        "{result:?}"
    );
    assert!(
        serde_json::to_string(request.messages())
            .unwrap()
            .contains("run the build")
    );
}

/// The stream of a turn with text and a tool call, cut at every event boundary in turn: the
/// command runs at most once (exactly once only when a complete reply arrived), and a broken
/// turn ends with a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_at_any_event_never_runs_a_command_twice() {
    for api in [Api::Anthropic, Api::OpenAi] {
        let api_name = match api {
            Api::Anthropic => "anthropic",
            Api::OpenAi => "openai",
        };
        // Anthropic streams more events per reply than OpenAI; cutting past the end is a
        // complete reply.
        for cut in 0..16 {
            let env = TestEnv::new();
            let fake = FakeLlm::start(
                Script::new()
                    .reply(
                        Reply::new()
                            .text("Appending a line. ")
                            .tool_call("echo first >> marker.txt")
                            .cut_after(cut),
                    )
                    // The next request gets this: a retry after a cut before any output, or
                    // the next step after a complete first reply.
                    .tool_call("echo second >> marker.txt")
                    .text("done"),
            )
            .await
            .unwrap();
            let api = match api_name {
                "anthropic" => Api::Anthropic,
                _ => Api::OpenAi,
            };
            let out = run_agent(&env, &fake, api, &["run", "append a line"]).await;
            let lines =
                std::fs::read_to_string(env.workdir().join("marker.txt")).unwrap_or_default();
            let count = |w: &str| lines.lines().filter(|l| *l == w).count();
            assert!(
                count("first") <= 1 && count("second") <= 1,
                "{api_name} cut {cut}: a command ran twice: {lines:?} {out:?}"
            );
            if out.success() {
                assert_eq!(count("second"), 1, "{api_name} cut {cut}: {out:?}");
                assert_eq!(out.stdout.trim(), "done", "{api_name} cut {cut}");
            } else {
                assert!(lines.is_empty(), "{api_name} cut {cut}: {lines:?} {out:?}");
                assert!(
                    out.stderr.contains("synapse: "),
                    "{api_name} cut {cut}: no clear error: {}",
                    out.stderr
                );
            }
        }
    }
}
