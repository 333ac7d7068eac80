//! Issue 19, what a session's MCP calls carry, against a real server (npm `server-everything`):
//! roots (its `get-roots-list` tool exists only for clients that declare them: a project's own
//! server learns its project root; the user's server, shared by every project, is never told
//! one), progress notifications shown while a tool runs, and images saved with the session and
//! removed with it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::fixtures_dir;
use serde_json::json;
use synapse_tests::{DEADLINE, TestEnv, run, wait_until};

fn everything() -> serde_json::Value {
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    json!({"command": "node", "args": [server, "stdio"]})
}

/// server-everything as the user's server `name`.
fn user_server(env: &TestEnv, name: &str) {
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {name: everything()}}).to_string(),
    )
    .unwrap();
}

fn uri(dir: &std::path::Path) -> String {
    format!("file://{}", dir.display())
}

#[test]
fn a_project_server_learns_its_root_and_a_shared_user_server_no_project() {
    let env = TestEnv::new();
    user_server(&env, "mine");
    let project = env.workdir().join("proj");
    let other = env.workdir().join("other");
    for p in [&project, &other] {
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(
            p.join(".mcp.json"),
            json!({"mcpServers": {"theirs": everything()}}).to_string(),
        )
        .unwrap();
        assert!(env.cli(&["trust", "--yes", p.to_str().unwrap()]).success());
    }
    env.start_daemon();
    let in_dir = |dir: &std::path::Path, args: &[&str]| {
        let mut cmd = env.synapse();
        cmd.current_dir(dir).args(args);
        run(&mut cmd)
    };
    // Two projects up at once, each with its own server.
    for p in [&project, &other] {
        assert!(in_dir(p, &["mcp", "approve", "theirs"]).success());
    }
    // Each project's server: its own root, and only that.
    let theirs = in_dir(&project, &["mcp", "call", "theirs", "get-roots-list"]);
    assert!(theirs.success(), "{theirs:?}");
    assert!(
        theirs.stdout.contains(&uri(&project)) && !theirs.stdout.contains(&uri(&other)),
        "{theirs:?}"
    );
    let second = in_dir(&other, &["mcp", "call", "theirs", "get-roots-list"]);
    assert!(
        second.stdout.contains(&uri(&other)) && !second.stdout.contains(&uri(&project)),
        "{second:?}"
    );
    // The user's server serves both projects: it is told neither (the roots capability is not
    // declared to it, so it keeps the folders it was configured with).
    wait_until(DEADLINE, "the user's server is connected", || {
        in_dir(&project, &["mcp", "list"]).stdout.contains("mine")
    });
    let mine = in_dir(&project, &["mcp", "call", "mine", "get-roots-list"]);
    assert!(
        !mine.stdout.contains(&uri(&project)) && !mine.stdout.contains(&uri(&other)),
        "{mine:?}"
    );
}

/// A tool's `notifications/progress` reach the user while it runs: `synapse run --output-format
/// stream-json` emits them as `tool_progress` events before the call finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tools_progress_is_shown_while_it_runs() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    user_server(&env, "every");
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:every:trigger-long-running-operation --duration 1 --steps 3")
            .text("done"),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["run", "go", "--output-format", "stream-json"]);
    assert!(out.success(), "{out:?}");
    let events: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let progress: Vec<&str> = events
        .iter()
        .filter(|e| e["subtype"] == "tool_progress")
        .filter_map(|e| e["tail"].as_str())
        .collect();
    assert!(
        progress
            .iter()
            .any(|t| t.contains("every: progress") && t.contains("/3")),
        "{}",
        out.stdout
    );
    let finished = events.iter().position(|e| e["type"] == "user").unwrap();
    let first_progress = events
        .iter()
        .position(|e| e["subtype"] == "tool_progress")
        .unwrap();
    assert!(first_progress < finished);
}

/// An image a tool returns in a session is saved in the session's scratch folder, named in the
/// result, and gone once the session ends (no `/tmp/synapse-mcp-*` left behind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_mcp_images_go_with_the_session() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    user_server(&env, "every");
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:every:get-tiny-image")
            .text("seen"),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["run", "show me"]);
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    let saved = result
        .split("saved to ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no saved image named: {result}"));
    let saved = std::path::PathBuf::from(saved);
    assert!(saved.starts_with(env.home()), "{}", saved.display());
    wait_until(DEADLINE, "the image left with its session", || {
        !saved.exists()
    });
}

/// An image an MCP tool returns reaches the model as an image, on both APIs and by both routes
/// (the in-process short-cut and the wrapper in a pipeline): Anthropic as an image block in the
/// tool result, OpenAI-compatible as a user message with the image after the tool messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_image_reaches_the_model_on_both_apis() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    user_server(&env, "every");
    env.start_daemon();
    for (openai, command) in [
        (false, "mcp:every:get-tiny-image"),
        (true, "mcp:every:get-tiny-image | cat"),
    ] {
        let fake = FakeLlm::start(Script::new().tool_call(command).text("seen"))
            .await
            .unwrap();
        let mut cmd = env.synapse();
        if openai {
            cmd.env("SYNAPSE_PROVIDER", "openai")
                .env("OPENAI_BASE_URL", fake.openai_base_url())
                .env("SYNAPSE_MODEL", "local-model");
        } else {
            cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "sk-test-key");
        }
        let out = synapse_tests::run(cmd.args(["run", "show me"]));
        assert!(out.success(), "{out:?}");
        let second = &fake.requests()[1];
        let images = second.last_images();
        assert_eq!(images.len(), 1, "openai={openai}: {:?}", second.messages());
        assert_eq!(images[0].0, "image/png");
        let png = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &images[0].1)
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a real PNG reached the model");
        // The text of the result still names where the image was saved.
        let result = second.last_tool_result().unwrap();
        assert!(result.contains("image saved to"), "{result}");
    }
}

/// A tool that only runs as a task (server-everything's `simulate-research-query`,
/// `execution.taskSupport: "required"`) works like any other: from the terminal, and for the
/// agent with each stage of the task shown as progress while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_needs_a_task_runs_as_one() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    user_server(&env, "every");
    env.start_daemon();
    let direct = env.cli(&[
        "mcp",
        "call",
        "every",
        "simulate-research-query",
        "--topic",
        "bees",
    ]);
    assert!(direct.success(), "{direct:?}");
    assert!(
        direct.stdout.contains("Research Report: bees"),
        "{direct:?}"
    );

    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:every:simulate-research-query --topic ants")
            .text("done"),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["run", "go", "--output-format", "stream-json"]);
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("Research Report: ants"), "{result}");
    let stages: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["subtype"] == "tool_progress")
        .filter_map(|e| e["tail"].as_str().map(str::to_string))
        .collect();
    assert!(
        stages
            .iter()
            .any(|t| t.contains("every: task") && t.contains("Analyzing content")),
        "{stages:?}"
    );
}

/// A command in the sandboxed shell cannot make the daemon write a tool's image elsewhere by
/// naming another scratch folder: the daemon uses the one of the shell it runs under.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_redirect_where_images_are_saved() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    user_server(&env, "every");
    env.start_daemon();
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let wrapper = env.home().join("bin/mcp:every:get-tiny-image");
    wait_until(DEADLINE, "the tool's wrapper", || wrapper.exists());
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!(
                "SYNAPSE_SCRATCH={} mcp:every:get-tiny-image | cat",
                elsewhere.display()
            ))
            .text("seen"),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["run", "show me"]);
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("image saved to"), "{result}");
    assert!(
        !result.contains(&elsewhere.display().to_string()),
        "{result}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// Issue 27: the user's filesystem server, shared while two projects are up, keeps the folder
/// it was configured with — it is never told a project as a root, so it cannot be steered into
/// writing one project's files from another's session.
#[test]
fn a_shared_filesystem_server_keeps_its_configured_folder_with_two_projects_up() {
    let env = TestEnv::new();
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"fs": {"command": "node", "args": [crate::mcp_support::fs_server_js(), &served]}}})
            .to_string(),
    )
    .unwrap();
    env.start_daemon();
    let mut up = Vec::new();
    for name in ["alpha", "beta"] {
        let p = env.workdir().join(name);
        std::fs::create_dir_all(p.join(".git")).unwrap();
        let mut cmd = env.synapse();
        cmd.current_dir(&p).args(["mcp", "list"]);
        assert!(run(&mut cmd).success());
        up.push(p);
    }
    let served_real = served.canonicalize().unwrap();
    let allowed = || {
        let mut cmd = env.synapse();
        cmd.current_dir(&up[0])
            .args(["mcp", "call", "fs", "list_allowed_directories"]);
        run(&mut cmd)
    };
    wait_until(DEADLINE, "the fs server answers", || allowed().success());
    let out = allowed();
    assert!(
        out.stdout.contains(&served_real.display().to_string()),
        "{out:?}"
    );
    for p in &up {
        assert!(!out.stdout.contains(&p.display().to_string()), "{out:?}");
    }
}

/// Issue 27: a user's server marked `"followProject": true` is not shared: each project up gets
/// its own connection, started in and told only its own root — no trust of the folder needed,
/// since the entry is the user's own.
#[test]
fn a_following_user_server_gets_one_connection_per_project_told_its_own_root() {
    let env = TestEnv::new();
    let mut entry = everything();
    entry["followProject"] = json!(true);
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"here": entry}}).to_string(),
    )
    .unwrap();
    env.start_daemon();
    let mut projects = Vec::new();
    for name in ["alpha", "beta"] {
        let p = env.workdir().join(name);
        std::fs::create_dir_all(p.join(".git")).unwrap();
        projects.push(p);
    }
    let roots_from = |dir: &std::path::Path| {
        let mut cmd = env.synapse();
        cmd.current_dir(dir)
            .args(["mcp", "call", "here", "get-roots-list"]);
        run(&mut cmd)
    };
    for (i, p) in projects.iter().enumerate() {
        let other = &projects[1 - i];
        wait_until(DEADLINE, "the project's own connection answers", || {
            roots_from(p).stdout.contains(&uri(p))
        });
        let out = roots_from(p);
        assert!(!out.stdout.contains(&uri(other)), "{out:?}");
    }
    // (One connection could not tell two different root lists: each project has its own.)
}
