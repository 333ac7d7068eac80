//! Issue 15, settings and session release: one settings handle that notices hand edits before
//! each turn, keeps the last good settings when the file breaks, serialises concurrent writers;
//! and finished `synapse run` sessions that give back their shell and fds at once.

use std::process::Stdio;
use std::time::Duration;

use synapse_tests::fake_llm::{ErrorReply, FakeLlm, RecordedRequest, Reply, Script, Step};
use synapse_tests::{DEADLINE, Run, TestEnv, wait_until};

fn write_settings(env: &TestEnv, value: serde_json::Value) {
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        serde_json::to_string_pretty(&value).unwrap(),
    )
    .unwrap();
}

/// `synapse run <args>` with the model endpoint (and key, unless `key` is None) from the client.
async fn run(env: &TestEnv, fake: &FakeLlm, key: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url());
    if let Some(key) = key {
        cmd.env("ANTHROPIC_API_KEY", key);
    }
    cmd.arg("run")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}

fn model_of(r: &RecordedRequest) -> String {
    r.body["model"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_edits_of_model_and_auto_enhance_count_on_the_next_turn() {
    let env = TestEnv::new();
    write_settings(
        &env,
        serde_json::json!({"model": "model-one", "skillEnhance": {"autoEnhance": false}}),
    );
    let fake = FakeLlm::start(
        Script::new()
            .text("first answer")
            .text("second answer")
            // The skill sub-agent that auto-enhance starts after the second turn.
            .text("Skill enhancement done:\n- Action: none"),
    )
    .await
    .unwrap();
    let first = run(&env, &fake, Some("sk-test"), &["hello"]).await;
    assert!(first.success(), "{first:?}");
    assert_eq!(model_of(&fake.requests()[0]), "model-one");
    assert_eq!(
        fake.requests().len(),
        1,
        "auto-enhance is off: no sub-agent"
    );

    // The daemon keeps running; the user edits the file by hand.
    write_settings(
        &env,
        serde_json::json!({"model": "model-two", "skillEnhance": {"autoEnhance": true}}),
    );
    let second = run(
        &env,
        &fake,
        Some("sk-test"),
        &["--output-format", "stream-json", "hello again"],
    )
    .await;
    assert!(second.success(), "{second:?}");
    let requests = fake.wait_for_requests(3, DEADLINE).await;
    assert_eq!(
        model_of(&requests[1]),
        "model-two",
        "the edited model is used"
    );
    assert!(
        second.stdout.contains("skill_enhance_report"),
        "the edited autoEnhance ran the skill sub-agent: {}",
        second.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_after_fixing_a_rejected_key_in_settings_succeeds() {
    let env = TestEnv::new();
    // The fake model accepts only the right key, as the real API does.
    let fake = FakeLlm::start_with(|r| match r.header("x-api-key") {
        Some("sk-right") => Step::Reply(Reply::new().text("welcome back")),
        _ => Step::Error(ErrorReply::unauthorized()),
    })
    .await
    .unwrap();
    write_settings(
        &env,
        serde_json::json!({"env": {"ANTHROPIC_API_KEY": "sk-wrong"}}),
    );
    let failed = run(&env, &fake, None, &["--output-format", "json", "hi"]).await;
    assert!(!failed.success(), "{failed:?}");
    let out: serde_json::Value = serde_json::from_str(&failed.stdout).unwrap();
    assert_eq!(out["error"]["http_status"], 401, "{out}");
    assert_eq!(out["error"]["kind"], "auth", "{out}");
    let id = out["session_id"].as_str().unwrap().to_string();

    write_settings(
        &env,
        serde_json::json!({"env": {"ANTHROPIC_API_KEY": "sk-right"}}),
    );
    let resumed = run(&env, &fake, None, &["--resume", &id, "hi again"]).await;
    assert!(resumed.success(), "{resumed:?}");
    assert_eq!(resumed.stdout.trim(), "welcome back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_settings_file_keeps_the_last_good_settings_and_is_reported_until_fixed() {
    let env = TestEnv::new();
    write_settings(&env, serde_json::json!({"model": "good-model"}));
    let fake = FakeLlm::start(Script::new().text("one").text("two"))
        .await
        .unwrap();
    let first = run(&env, &fake, Some("sk-test"), &["hello"]).await;
    assert!(first.success(), "{first:?}");
    std::fs::write(env.paths().settings_file(), "{\n  \"model\": ,\n}\n").unwrap();

    let status = env.cli(&["daemon", "status"]);
    let expected = format!("{}:2:", env.paths().settings_file().display());
    assert!(
        status.stdout.contains(&expected) || status.stderr.contains(&expected),
        "daemon status shows the current error: {status:?}"
    );
    let second = run(&env, &fake, Some("sk-test"), &["hello again"]).await;
    assert!(second.success(), "{second:?}");
    assert!(
        second.stderr.contains(&expected),
        "reported on the turn: {second:?}"
    );
    assert_eq!(
        model_of(&fake.requests()[1]),
        "good-model",
        "the last good settings stay in force"
    );

    write_settings(&env, serde_json::json!({"model": "good-model"}));
    let status = env.cli(&["daemon", "status"]);
    assert!(
        !status.stdout.contains(&expected) && !status.stderr.contains(&expected),
        "fixed: {status:?}"
    );
}

#[test]
fn sixty_concurrent_enable_and_disable_calls_all_land() {
    let env = TestEnv::new();
    let names: Vec<String> = (0..60).map(|i| format!("skill-{i:02}")).collect();
    for name in &names {
        env.write_skill(name, &format!("Does task {name}. Use for {name}."), "Body.");
    }
    // Odd skills start disabled; every call flips its skill, so each call is its skill's last write.
    let disabled: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, n)| (format!("user:{n}"), serde_json::json!({"enabled": false})))
        .collect();
    write_settings(&env, serde_json::json!({"skills": {"skills": disabled}}));
    env.start_daemon();
    let children: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let verb = if i % 2 == 0 { "disable" } else { "enable" };
            let mut cmd = env.synapse();
            cmd.args(["skill", verb, name])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = Run::from(child.wait_with_output().unwrap());
        assert!(out.success(), "{out:?}");
    }
    let text = std::fs::read_to_string(env.paths().settings_file()).unwrap();
    let settings: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (i, name) in names.iter().enumerate() {
        let enabled = settings["skills"]["skills"][format!("user:{name}")]["enabled"].as_bool();
        assert_eq!(enabled, Some(i % 2 == 1), "{name} in {text}");
    }
    let listed = env.cli(&["skill", "list"]);
    assert!(listed.success(), "{listed:?}");
}

/// Open fds and direct child processes of `pid`.
fn fds_and_children(pid: u32) -> (usize, usize) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0);
    let children = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(Result::ok)
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .map(|c| c.split_whitespace().count())
                .sum()
        })
        .unwrap_or(0);
    (fds, children)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_runs_leave_no_shells_and_no_fds_behind() {
    let env = TestEnv::new();
    // Each run runs one command in its shell, then answers.
    let fake = FakeLlm::start_with(|r| {
        if r.last_tool_result().is_some() {
            Step::Reply(Reply::new().text("done"))
        } else {
            Step::Reply(Reply::new().tool_call("echo ran"))
        }
    })
    .await
    .unwrap();
    let warm = run(&env, &fake, Some("sk-test"), &["warm up"]).await;
    assert!(warm.success(), "{warm:?}");
    let pid = env.daemon_pid().unwrap();
    let mut baseline = (0, 0);
    // The workspace keeps one pre-started spare shell for its next session (issue 39).
    wait_until(DEADLINE, "the warm-up run's shell to be released", || {
        baseline = fds_and_children(pid);
        baseline.1 <= 1
    });
    for i in 0..300 {
        let out = run(&env, &fake, Some("sk-test"), &[&format!("task {i}")]).await;
        assert!(out.success(), "run {i}: {out:?}");
    }
    let mut now = (0, 0);
    wait_until(
        Duration::from_secs(30),
        "daemon fds and shells back to their baseline",
        || {
            now = fds_and_children(pid);
            now.1 <= 1 && now.0 <= baseline.0
        },
    );
    // Their logs stay on disk, resumable.
    let logs = std::fs::read_dir(env.home().join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .count();
    assert!(logs >= 301, "{logs} session logs");
    let latest = env.cli(&["sessions", "list"]);
    assert!(latest.stdout.contains("task 299"), "{latest:?}");
}
