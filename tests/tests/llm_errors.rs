//! Issue 18 end to end against the fake model: every error class ends the turn with the error
//! as its result (never the prompt), with distinct exit codes; short timeouts and the retry
//! budget from settings.json bound a silent or failing server; SIGTERM of `synapse run` closes
//! the model connection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use synapse_tests::fake_llm::{ErrorReply, FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, run_async, wait_until};

const PROMPT: &str = "hello there";

/// Writes settings.json's `"llm"` object (timeouts, retry budget).
fn with_llm_settings(env: &TestEnv, llm: Value) {
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = serde_json::json!({ "llm": llm });
    std::fs::write(env.home().join("settings.json"), settings.to_string()).unwrap();
}

async fn run_prompt(env: &TestEnv, fake: &FakeLlm, extra: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(["run", PROMPT]).args(extra);
    run_async(cmd).await
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn assert_error_result(run: &Run, kind: &str, status: Option<u64>) {
    assert_eq!(run.code, Some(3), "{run:?}");
    let out = json_of(run);
    assert_eq!(out["is_error"], true, "{out}");
    assert_eq!(
        out["result"], "",
        "the prompt must never be the result: {out}"
    );
    assert_eq!(out["error"]["kind"], kind, "{out}");
    assert_eq!(out["error"]["http_status"].as_u64(), status, "{out}");
    assert!(!out["error"]["message"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn a_400_gives_an_empty_stdout_and_a_typed_error() {
    let env = TestEnv::new();
    let bad = ErrorReply::new(400, "invalid_request_error", "messages.0: bad field");
    let fake = FakeLlm::start(Script::new().error(bad.clone()).error(bad))
        .await
        .unwrap();
    let text = run_prompt(&env, &fake, &[]).await;
    assert_eq!(text.code, Some(3), "{text:?}");
    assert_eq!(text.stdout, "", "stdout must stay empty: {text:?}");
    assert!(text.stderr.contains("HTTP 400"), "{}", text.stderr);
    assert!(text.stderr.contains("bad field"), "{}", text.stderr);
    let json = run_prompt(&env, &fake, &["--output-format", "json"]).await;
    assert_error_result(&json, "api", Some(400));
}

#[tokio::test]
async fn a_rejected_key_is_an_auth_error() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().error(ErrorReply::unauthorized()))
        .await
        .unwrap();
    let run = run_prompt(&env, &fake, &["--output-format", "json"]).await;
    assert_error_result(&run, "auth", Some(401));
    assert!(
        json_of(&run)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
}

#[tokio::test]
async fn an_unreachable_server_fails_within_the_retry_budget() {
    let env = TestEnv::new();
    with_llm_settings(&env, serde_json::json!({"retryBudgetSecs": 1.5}));
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", PROMPT, "--output-format", "json"]);
    let started = Instant::now();
    let run = run_async(cmd).await;
    assert_error_result(&run, "retries_exhausted", None);
    assert!(run.stdout.contains("connection failed"), "{}", run.stdout);
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn server_errors_are_retried_with_their_reason_then_reported() {
    let env = TestEnv::new();
    with_llm_settings(&env, serde_json::json!({"retryBudgetSecs": 2.5}));
    let mut script = Script::new();
    for _ in 0..6 {
        script = script.error(ErrorReply::server_error());
    }
    let fake = FakeLlm::start(script).await.unwrap();
    let run = run_prompt(&env, &fake, &[]).await;
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("500 api_error: Internal server error — retrying"),
        "each retry is shown with its reason: {}",
        run.stderr
    );
    assert!(run.stderr.contains("retry budget"), "{}", run.stderr);
}

#[tokio::test]
async fn a_silent_server_is_given_up_on_after_the_short_timeouts_set() {
    let env = TestEnv::new();
    with_llm_settings(
        &env,
        serde_json::json!({"firstByteTimeoutSecs": 0.5, "retryBudgetSecs": 1.2}),
    );
    let fake = FakeLlm::start(Script::new().hang().hang().hang().hang())
        .await
        .unwrap();
    let started = Instant::now();
    let run = run_prompt(&env, &fake, &[]).await;
    assert_eq!(run.code, Some(3), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("no answer within 0.5 s"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn sigterm_of_synapse_run_closes_the_model_call_within_a_second() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().hang()).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", PROMPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = tokio::process::Command::from(cmd).spawn().unwrap();
    fake.wait_for_requests(1, DEADLINE).await;
    wait_until(DEADLINE, "the model call to be open", || {
        fake.open_connections() > 0
    });
    let pid = child.id().unwrap() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(143));
    let closed_by = Instant::now() + Duration::from_secs(1);
    while fake.open_connections() > 0 && Instant::now() < closed_by {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        fake.open_connections(),
        0,
        "the daemon must drop the model call when its client is gone"
    );
}

#[tokio::test]
async fn sigint_before_the_first_token_cancels_with_an_empty_result() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().hang()).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", PROMPT, "--output-format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = tokio::process::Command::from(cmd).spawn().unwrap();
    fake.wait_for_requests(1, DEADLINE).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let run = Run::from(out);
    assert_eq!(run.code, Some(130), "{run:?}");
    let json = json_of(&run);
    assert_eq!(json["stop_reason"], "cancelled");
    assert_eq!(json["result"], "", "{json}");
}

#[tokio::test]
async fn a_daemon_that_dies_mid_turn_is_reported_with_how_to_resume() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().hang()).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", PROMPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = tokio::process::Command::from(cmd).spawn().unwrap();
    fake.wait_for_requests(1, DEADLINE).await;
    // SIGKILL: a daemon that crashes, not one that stops cleanly (that one cancels the turn).
    let daemon = env.daemon_pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let out = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let run = Run::from(out);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains("the daemon stopped ("),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--resume"), "{}", run.stderr);
    assert!(!run.stderr.contains("h2"), "{}", run.stderr);
}
