//! Issue 30's `synapse doctor` and `synapse --resume` without an id, as a user meets them: the
//! doctor's report on a healthy and on a broken installation (its ✓/!/✗ lines, the fix under each
//! problem, the exit status) — and that it never sends the model a prompt; `--resume` without an
//! id off a terminal names the ways that work.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run_async};

/// The report's line that starts with `mark topic` and contains `needle`, with the line after it
/// (where a fix goes).
fn line_of<'a>(out: &'a Run, mark_topic: &str, needle: &str) -> (&'a str, &'a str) {
    let lines: Vec<&str> = out.stdout.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with(mark_topic) && l.contains(needle))
        .unwrap_or_else(|| panic!("no `{mark_topic} … {needle}` line in:\n{}", out.stdout));
    (lines[i], lines.get(i + 1).copied().unwrap_or(""))
}

/// A TCP port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_on_a_healthy_setup_passes_and_sends_the_model_no_prompt() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let work = env.workdir();
    std::fs::write(work.join("AGENTS.md"), "# AGENTS.md\nRun cargo test.\n").unwrap();
    // Project rules in a folder the user has not trusted: worth saying, not broken.
    std::fs::create_dir_all(work.join(".synapse")).unwrap();
    std::fs::write(
        work.join(".synapse/settings.json"),
        r#"{"permissions": {}}"#,
    )
    .unwrap();

    let out = run_async({
        let mut cmd = env.synapse_with_model(&fake);
        cmd.arg("doctor");
        cmd
    })
    .await;
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains('✗'), "{}", out.stdout);
    line_of(&out, "✓ versions", "synapse ");
    line_of(&out, "✓ socket", "mode 0600");
    line_of(&out, "✓ daemon", "synapsed");
    line_of(&out, "✓ settings", "settings.json");
    let (model, _) = line_of(&out, "✓ model", "answers");
    assert!(
        model.contains(&format!("GET {}/v1/models → 200", fake.url())),
        "{model}"
    );
    line_of(&out, "✓ mcp", "no MCP servers configured");
    line_of(
        &out,
        "✓ instructions",
        &work.join("AGENTS.md").display().to_string(),
    );
    let (rules, fix) = line_of(&out, "! rules", "not a trusted folder");
    assert!(rules.contains(".synapse/settings.json"), "{rules}");
    assert!(
        fix.trim_start().starts_with(&format!(
            "fix: review it, then: synapse trust {}",
            work.display()
        )),
        "{fix}"
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("✓ sandbox") || l.starts_with("! sandbox")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Nothing broken; 1 warning."),
        "{}",
        out.stdout
    );

    // The model heard one question, the models list, and no prompt; no session was made.
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    assert_eq!(fake.side_requests(), ["GET /v1/models"]);
    let sessions = std::fs::read_dir(env.paths().sessions_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(sessions, 0, "doctor opened a session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_broken_settings_file_with_its_fix_and_exits_1() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("never asked"))
        .await
        .unwrap();
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = env.paths().settings_file();
    std::fs::write(&settings, "{\n  \"model\": \n").unwrap();

    let out = run_async({
        let mut cmd = env.synapse_with_model(&fake);
        cmd.arg("doctor");
        cmd
    })
    .await;
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let (line, fix) = line_of(&out, "✗ settings", &settings.display().to_string());
    assert!(line.contains(":3:"), "names the line: {line}");
    assert!(
        fix.trim_start()
            .starts_with(&format!("fix: correct {}", settings.display())),
        "{fix}"
    );
    assert!(out.stdout.contains("1 problem to fix."), "{}", out.stdout);
    assert_eq!(fake.remaining_steps(), 1, "the model was sent a prompt");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_the_model_is_unreachable_and_how_to_fix_it() {
    let env = TestEnv::new();
    let url = format!("http://127.0.0.1:{}", closed_port());
    // And an MCP server whose program is not there.
    let mcp = env.home().join("mcp");
    std::fs::create_dir_all(&mcp).unwrap();
    std::fs::write(
        mcp.join("mcp_servers.json"),
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/ghost-mcp"}}}"#,
    )
    .unwrap();
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("doctor");
    let out = run_async(cmd).await;
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let (line, fix) = line_of(&out, "✗ model", "no answer");
    assert!(line.contains(&format!("{url}/v1/models")), "{line}");
    assert!(line.contains("refused"), "says why: {line}");
    assert!(
        fix.contains("fix: start the server, or correct ANTHROPIC_BASE_URL"),
        "{fix}"
    );
    assert!(
        fix.contains(&env.paths().settings_file().display().to_string()),
        "{fix}"
    );
    let (ghost, fix) = line_of(&out, "✗ mcp", "ghost: failed");
    assert!(ghost.contains("mcp_servers.json"), "names where: {ghost}");
    assert!(fix.contains("fix: correct its entry"), "{fix}");
    assert!(out.stdout.contains("2 problems to fix."), "{}", out.stdout);
    // Everything else is fine, and said so.
    line_of(&out, "✓ daemon", "synapsed");
    line_of(&out, "✓ settings", "settings.json");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_warns_when_the_server_does_not_list_the_configured_model() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let mut cmd = env.synapse();
    cmd.env("SYNAPSE_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", fake.openai_base_url())
        .env("SYNAPSE_MODEL", "no-such-model")
        .arg("doctor");
    let out = run_async(cmd).await;
    assert!(
        out.success(),
        "a warning is not broken: {}{}",
        out.stdout,
        out.stderr
    );
    let (line, fix) = line_of(&out, "! model", "does not list no-such-model");
    assert!(line.contains("it lists"), "{line}");
    assert!(fix.contains("to one of the server's models"), "{fix}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // And piped into a reader that stops early, the report ends quietly.
    let mut cmd = std::process::Command::new("bash");
    env.apply_env(&mut cmd);
    cmd.env("SYNAPSE_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", fake.openai_base_url())
        .arg("-c")
        .arg(format!(
            "'{}' doctor --json --offline | head -1",
            synapse_tests::bin("synapse").display()
        ));
    let piped = run_async(cmd).await;
    assert_eq!(piped.stdout, "[\n", "{piped:?}");
    assert!(!piped.stderr.contains("panicked"), "{}", piped.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_without_a_key_names_the_real_settings_file() {
    let env = TestEnv::new();
    let out = run_async({
        let mut cmd = env.synapse();
        cmd.arg("doctor");
        cmd
    })
    .await;
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let (line, fix) = line_of(&out, "✗ model", "no Anthropic API key");
    assert!(
        line.contains(&env.paths().settings_file().display().to_string()),
        "the real path: {line}"
    );
    assert!(!out.stdout.contains("$SYNAPSE_HOME"), "{}", out.stdout);
    assert!(fix.contains("fix: set ANTHROPIC_API_KEY"), "{fix}");
}

#[test]
fn resume_without_an_id_off_a_terminal_names_continue_and_the_sessions_list() {
    let env = TestEnv::new();
    for args in [&["--resume"][..], &["chat", "--resume"]] {
        let out = env.cli(args);
        assert!(!out.success(), "{args:?}: {out:?}");
        for needle in [
            "needs a terminal",
            "synapse --continue",
            "synapse sessions list",
            "synapse --resume <id>",
        ] {
            assert!(
                out.stderr.contains(needle),
                "{args:?}: {needle}: {}",
                out.stderr
            );
        }
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    // Nothing was started to say so.
    assert!(env.daemon_pid().is_none());
}
