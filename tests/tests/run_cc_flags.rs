//! Issue 38, every `claude -p` flag with Claude Code's meaning, through the real daemon, real
//! bash and the scripted model: `--disallowedTools Bash` leaves the tool and its documentation out
//! of what the model is sent, `--session-id` names the new session (a non-UUID and a used id are
//! refused), `--add-dir` makes another folder writable inside the sandbox, `--settings` layers a
//! model and rules over settings.json (a bad key named), `--fallback-model` takes over from an
//! overloaded model with a notice, and `--dangerously-skip-permissions` answers every question
//! yes while the sandbox stays. Bad values stop the run with exit status 1, as Claude Code's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use synapse_tests::fake_llm::{ErrorReply, FakeLlm, Script};
use synapse_tests::{Run, TestEnv, bin, run, run_async};

/// Runs `synapse <args>` against the fake model.
async fn synapse(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(args);
    run_async(cmd).await
}

fn json_object(out: &Run) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// Whether this machine confines writes (Landlock); the sandbox assertions need it.
fn sandbox_confines() -> bool {
    let mut cmd = std::process::Command::new(bin("synapsed"));
    let probe = run(cmd.args(["__sandbox", "--probe"]));
    let yes = probe.stdout.trim().starts_with("landlock ");
    if !yes {
        eprintln!("skipping the sandbox assertions: {}", probe.stdout.trim());
    }
    yes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disallowing_bash_removes_the_tool_from_what_the_model_is_told() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .text("plain answer")
            .text("with tool")
            .text("streamed"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &["run", "what is 2+2?", "--disallowedTools", "Bash"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "plain answer\n");
    let request = &fake.requests()[0];
    assert!(request.tools().is_empty(), "{:?}", request.tools());
    assert!(request.body.get("tools").is_none(), "{}", request.body);
    let system = request.system_text().unwrap();
    assert!(system.contains("no tools"), "{system}");
    assert!(system.contains("# Environment"), "{system}");
    for gone in [
        "## Agent shell commands",
        "### read",
        "# How you act",
        "`Bash`",
    ] {
        assert!(!system.contains(gone), "{gone:?} still in {system}");
    }

    // A pattern keeps today's meaning: the tool stays, only matching commands are refused.
    let out = synapse(
        &env,
        &fake,
        &["run", "hi", "--disallowedTools", "Bash(rm:*)"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let request = &fake.requests()[1];
    assert_eq!(request.tool_names(), ["Bash"]);
    assert!(request.system_text().unwrap().contains("### read"));

    // stream-json's `init` says what the model is offered: no tool.
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "hi",
            "--disallowedTools",
            "Bash",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let init: serde_json::Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["tools"], serde_json::json!([]), "{init}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_names_the_new_session_and_refuses_a_bad_or_used_one() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("one").text("two"))
        .await
        .unwrap();
    let id = "123e4567-e89b-12d3-a456-426614174000";
    let out = synapse(
        &env,
        &fake,
        &["run", "hi", "--session-id", id, "--output-format", "json"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert_eq!(json_object(&out)["session_id"], id);
    assert!(
        env.home()
            .join("sessions")
            .join(format!("{id}.jsonl"))
            .exists()
    );

    let out = synapse(&env, &fake, &["run", "again", "--session-id", id]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(id) && out.stderr.contains("already in use"),
        "{}",
        out.stderr
    );
    let out = synapse(&env, &fake, &["run", "x", "--session-id", "not-a-uuid"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("not-a-uuid") && out.stderr.contains("UUID"),
        "{}",
        out.stderr
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "refused runs never reach the model"
    );

    // The named session resumes like any other.
    let out = synapse(&env, &fake, &["run", "more", "--resume", id]).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "two\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_dir_makes_another_folder_writable_inside_the_sandbox() {
    let env = TestEnv::new();
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let target = other.join("made.txt");
    let command = format!("echo made > {}", target.display());
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(&command)
            .text("tried")
            .tool_call(&command)
            .text("done"),
    )
    .await
    .unwrap();
    // Without it, a write there is outside the session: asked, and nobody answers in a run.
    let out = synapse(&env, &fake, &["run", "write it"]).await;
    assert!(out.success(), "{out:?}");
    assert!(
        !target.exists(),
        "a write outside the session's folder ran unasked"
    );
    assert!(out.stderr.contains("denied"), "{}", out.stderr);

    let out = synapse(
        &env,
        &fake,
        &["run", "write it", "--add-dir", other.to_str().unwrap()],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "made\n",
        "{out:?}"
    );
    assert!(!out.stderr.contains("denied"), "{}", out.stderr);

    let missing = env.root().join("nowhere");
    let out = synapse(
        &env,
        &fake,
        &["run", "x", "--add-dir", missing.to_str().unwrap()],
    )
    .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("--add-dir") && out.stderr.contains(missing.to_str().unwrap()),
        "{}",
        out.stderr
    );
    assert_eq!(fake.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_flag_layers_a_model_and_rules_and_names_a_bad_key() {
    let env = TestEnv::new();
    let victim = env.workdir().join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    let fake = FakeLlm::start(Script::new().tool_call("rm victim.txt").text("tried"))
        .await
        .unwrap();
    let settings =
        r#"{"model": "flag-model", "permissions": {"deny": ["Bash(rm:*)"]}, "theme": "dark"}"#;
    let out = synapse(
        &env,
        &fake,
        &["run", "clean", "--yes", "--settings", settings],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(victim.exists(), "the --settings deny rule did not hold");
    assert_eq!(fake.requests()[0].body["model"], "flag-model");
    assert!(out.stderr.contains("`theme`"), "{}", out.stderr);

    // From a file, relative to the current folder.
    std::fs::write(env.workdir().join("s.json"), r#"{"env": {"A": 1}}"#).unwrap();
    let out = synapse(&env, &fake, &["run", "x", "--settings", "s.json"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("env"), "{}", out.stderr);
    let out = synapse(&env, &fake, &["run", "x", "--settings", "missing.json"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("--settings") && out.stderr.contains("missing.json"),
        "{}",
        out.stderr
    );
    let out = synapse(&env, &fake, &["run", "x", "--settings", "{not json"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("not valid JSON"), "{}", out.stderr);
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fallback_model_takes_over_from_an_overloaded_model() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    // No retry fits in the budget: the overloaded answer fails the call at once.
    std::fs::write(
        env.home().join("settings.json"),
        r#"{"llm": {"retryBudgetSecs": 0.2}}"#,
    )
    .unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .error(ErrorReply::overloaded())
            .text("from the fallback"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "hi",
            "--model",
            "main-model",
            "--fallback-model",
            "spare-model",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "from the fallback\n");
    assert!(
        out.stderr.contains("main-model") && out.stderr.contains("falling back to spare-model"),
        "{}",
        out.stderr
    );
    let requests = fake.requests();
    assert_eq!(requests[0].body["model"], "main-model");
    assert_eq!(requests.last().unwrap().body["model"], "spare-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangerously_skip_permissions_asks_nothing_and_keeps_the_sandbox() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let escaped = outside.join("escaped.txt");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("touch asked.txt")
            .text("made")
            .tool_call(format!("touch {}", escaped.display()))
            .text("tried"),
    )
    .await
    .unwrap();
    // Claude Code's default mode asks before a command runs; bypass answers yes.
    let bypass = [
        "--permission-mode",
        "default",
        "--dangerously-skip-permissions",
    ];
    let out = synapse(&env, &fake, &[&["run", "make it"][..], &bypass].concat()).await;
    assert!(out.success(), "{out:?}");
    assert!(env.workdir().join("asked.txt").exists(), "{out:?}");
    assert!(!out.stderr.contains("denied"), "{}", out.stderr);

    let out = synapse(&env, &fake, &[&["run", "escape"][..], &bypass].concat()).await;
    assert!(out.success(), "{out:?}");
    if sandbox_confines() {
        assert!(!escaped.exists(), "bypass mode left the sandbox");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_config_values_are_read_as_claude_code_reads_them() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("never")).await.unwrap();
    // A file that is not there, JSON that is not JSON, a server that is not an object: each
    // named, exit status 1, nothing sent to the model.
    for (value, says) in [
        ("missing.json", "missing.json"),
        ("{not json", "not valid JSON"),
        (r#"{"mcpServers": {"mem": 7}}"#, "server \"mem\""),
    ] {
        let out = synapse(&env, &fake, &["run", "x", "--mcp-config", value]).await;
        assert_eq!(out.code, Some(1), "{value}: {out:?}");
        assert!(out.stderr.contains(says), "{value}: {}", out.stderr);
    }
    // An entry with neither a program nor an address is named before anything is sent (the
    // servers that do start are `mcp_session_scoped`'s).
    let config = r#"{"mcpServers": {"mem": {"args": []}}}"#;
    let out = synapse(&env, &fake, &["run", "x", "--mcp-config", config]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("server \"mem\": missing \"command\""),
        "{}",
        out.stderr
    );
    assert!(fake.requests().is_empty());
    // Nothing reached the user's configuration either.
    let list = env.cli(&["mcp", "list"]);
    assert!(!list.stdout.contains("mem"), "{list:?}");
}
