//! Session-scoped MCP servers (`synapse run --mcp-config`, `--strict-mcp-config`), through the
//! real daemon and client, the real npm `server-memory` / `server-everything` and the scripted
//! model: the session's servers answer its model (in-process and through their wrappers in a
//! pipeline) and are listed in its first request; another session in the same folder does not
//! have them; `synapse mcp list` and the config files never show them; their processes are gone
//! when the run ends; a resumed session has them only when given again; strict mode hides the
//! user's servers; a bad entry is named; a server that cannot start is named while the others
//! work; a same-named user server is replaced for the session, with a notice.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};
use synapse_tests::{Run, TestEnv, processes_matching, run_async, wait_until};

use crate::mcp_support::{fixtures_dir, unique_tag};

const GONE_DEADLINE: Duration = Duration::from_secs(30);

fn memory_js() -> PathBuf {
    fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

fn everything_js() -> PathBuf {
    fixtures_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// A session config with the memory server as `name`: `tag` in its command line (to find its
/// process), its graph in `$MEM_FILE` (expanded from the client's environment).
fn memory_config(name: &str, tag: &str) -> Value {
    json!({"mcpServers": {name: {
        "command": "node",
        "args": [memory_js(), tag],
        "env": {"MEMORY_FILE_PATH": "${MEM_FILE}"}
    }}})
}

/// `synapse <args>` against `fake`, with `$MEM_FILE` set.
async fn synapse(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("MEM_FILE", env.root().join("graph.jsonl"));
    cmd.args(args);
    run_async(cmd).await
}

fn tool_result(fake: &FakeLlm, request: usize) -> String {
    let results = fake.requests()[request].tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    results[0].1.clone()
}

fn wait_gone(tag: &str) {
    wait_until(GONE_DEADLINE, "the session's MCP server to stop", || {
        processes_matching(tag).is_empty()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_servers_answer_its_model_and_leave_with_the_run() {
    let env = TestEnv::new();
    let tag = unique_tag("session-mem");
    let cfg = env.workdir().join("cfg.json");
    std::fs::write(&cfg, memory_config("scratchpad", &tag).to_string()).unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(
                r#"mcp:scratchpad:create_entities --entities '[{"name":"Ada","entityType":"person","observations":["writes code"]}]'"#,
            )
            .tool_call("mcp:scratchpad:read_graph | grep -c writes")
            .text("done"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "remember Ada",
            "--mcp-config",
            "cfg.json",
            "--output-format",
            "json",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(
        system.contains("scratchpad") && system.contains("`mcp:scratchpad:read_graph`"),
        "{system}"
    );
    // In-process, then through the session's own wrapper in a pipeline.
    assert!(
        tool_result(&fake, 1).contains("Ada"),
        "{}",
        tool_result(&fake, 1)
    );
    assert_eq!(tool_result(&fake, 2).trim(), "1");
    let session_id = serde_json::from_str::<Value>(&out.stdout).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Gone with the run: the process, the wrappers; never in a listing or a config file.
    wait_gone(&tag);
    let session_dir = env.home().join("mcp/sessions").join(&session_id);
    wait_until(GONE_DEADLINE, "the session's wrappers to go", || {
        !session_dir.exists()
    });
    let list = env.cli(&["mcp", "list"]);
    assert!(list.success(), "{list:?}");
    assert!(!list.stdout.contains("scratchpad"), "{}", list.stdout);
    for file in [
        env.home().join("mcp/mcp_servers.json"),
        env.workdir().join(".mcp.json"),
    ] {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains("scratchpad"), "{}: {text}", file.display());
    }

    // Resumed without --mcp-config: the command is gone. With it: back, with its data.
    fake.push(Reply::new().tool_call("mcp:scratchpad:read_graph"));
    fake.push(Reply::new().text("gone"));
    let out = synapse(&env, &fake, &["run", "again", "--resume", &session_id]).await;
    assert!(out.success(), "{out:?}");
    assert!(
        tool_result(&fake, 4).contains("command not found"),
        "{}",
        tool_result(&fake, 4)
    );
    fake.push(Reply::new().tool_call("mcp:scratchpad:read_graph"));
    fake.push(Reply::new().text("back"));
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "again",
            "--resume",
            &session_id,
            "--mcp-config",
            "cfg.json",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(
        tool_result(&fake, 6).contains("writes code"),
        "{}",
        tool_result(&fake, 6)
    );
    wait_gone(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_session_in_the_same_folder_does_not_have_them() {
    let env = TestEnv::new();
    let tag = unique_tag("session-own");
    let config = memory_config("scratchpad", &tag).to_string();
    let gate = env.workdir().join("b-done");
    // A keeps its session open (its command waits for B) while B runs in the same folder.
    let fake_a = FakeLlm::start(
        Script::new()
            .tool_call(format!(
                "mcp:scratchpad:read_graph >/dev/null && until [ -e {} ]; do sleep 0.05; done && echo a-saw-b",
                gate.display()
            ))
            .text("a done"),
    )
    .await
    .unwrap();
    let mut a = env.synapse_with_model(&fake_a);
    a.env("MEM_FILE", env.root().join("graph.jsonl")).args([
        "run",
        "wait for b",
        "--mcp-config",
        &config,
    ]);
    let a = tokio::spawn(run_async(a));
    wait_until(GONE_DEADLINE, "A's server and first command", || {
        !processes_matching(&tag).is_empty() && !fake_a.requests().is_empty()
    });

    let fake_b = FakeLlm::start(
        Script::new()
            .tool_call("mcp:scratchpad:read_graph")
            .text("b done"),
    )
    .await
    .unwrap();
    let out = synapse(&env, &fake_b, &["run", "look"]).await;
    assert!(out.success(), "{out:?}");
    let system = fake_b.requests()[0].system_text().unwrap();
    assert!(!system.contains("scratchpad"), "{system}");
    assert!(
        tool_result(&fake_b, 1).contains("command not found"),
        "{}",
        tool_result(&fake_b, 1)
    );

    std::fs::write(&gate, "").unwrap();
    let out = a.await.unwrap();
    assert!(out.success(), "{out:?}");
    assert!(
        tool_result(&fake_a, 1).contains("a-saw-b"),
        "{}",
        tool_result(&fake_a, 1)
    );
    wait_gone(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_hides_the_users_servers_and_a_same_name_is_replaced() {
    let env = TestEnv::new();
    let add = env.cli(&[
        "mcp",
        "add",
        "memory",
        "--",
        "node",
        &memory_js().display().to_string(),
    ]);
    assert!(add.success(), "{add:?}");
    let wrapper = env.home().join("bin/mcp:memory:read_graph");
    wait_until(GONE_DEADLINE, "the user's memory server's wrappers", || {
        wrapper.exists()
    });
    let tag = unique_tag("session-every");
    let config = json!({"mcpServers": {"every": {
        "command": "node", "args": [everything_js(), "stdio", tag]
    }}})
    .to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:memory:read_graph")
            .tool_call("mcp:memory:read_graph | cat")
            .tool_call("mcp:every:echo --message hi")
            .text("strict done"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &["run", "go", "--strict-mcp-config", "--mcp-config", &config],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(system.contains("`mcp:every:echo`"), "{system}");
    assert!(!system.contains("mcp:memory:"), "{system}");
    // Refused in-process and through the user's wrapper alike, saying why.
    for request in [1, 2] {
        let result = tool_result(&fake, request);
        assert!(result.contains("--strict-mcp-config"), "{result}");
    }
    assert!(
        tool_result(&fake, 3).contains("Echo: hi"),
        "{}",
        tool_result(&fake, 3)
    );
    wait_gone(&tag);

    // Not strict, same name as the user's server: the session's wins for it, with a notice.
    let tag = unique_tag("session-shadow");
    let config = json!({"mcpServers": {"memory": {
        "command": "node", "args": [everything_js(), "stdio", tag]
    }}})
    .to_string();
    fake.push(Reply::new().tool_call("mcp:memory:echo --message shadow"));
    fake.push(Reply::new().text("ok"));
    let out = synapse(&env, &fake, &["run", "go", "--mcp-config", &config]).await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr
            .contains("this session's server \"memory\" replaces your user server"),
        "{}",
        out.stderr
    );
    assert!(
        tool_result(&fake, 5).contains("Echo: shadow"),
        "{}",
        tool_result(&fake, 5)
    );
    wait_gone(&tag);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_entries_are_named_and_a_dead_server_leaves_the_others_working() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("mcp:scratchpad:read_graph")
            .text("fine"),
    )
    .await
    .unwrap();
    for (value, says) in [
        (
            r#"{"mcpServers": {"broken": {"args": ["x"]}}}"#,
            r#"server "broken": missing "command""#,
        ),
        (r#"{"mcpServers": {"broken": "#, "not valid JSON"),
    ] {
        let out = synapse(&env, &fake, &["run", "x", "--mcp-config", value]).await;
        assert_eq!(out.code, Some(1), "{value}: {out:?}");
        assert!(out.stderr.contains(says), "{value}: {}", out.stderr);
    }
    assert!(fake.requests().is_empty());

    // One server cannot start: named with why; the session opens and the other one works.
    let tag = unique_tag("session-alive");
    let mut config = memory_config("scratchpad", &tag);
    config["mcpServers"]["ghost"] = json!({"command": "/nonexistent/ghost-server"});
    let out = synapse(
        &env,
        &fake,
        &["run", "go", "--mcp-config", &config.to_string()],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr
            .contains("this session's server \"ghost\" did not start"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("ghost-server"), "{}", out.stderr);
    assert!(
        tool_result(&fake, 1).contains("entities"),
        "{}",
        tool_result(&fake, 1)
    );
    wait_gone(&tag);
}

/// A command in the session's sandboxed shell cannot name another session to reach that one's
/// servers: `--session` is the caller's own or refused (the peer's sandbox state decides, not
/// anything the command says).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_reach_another_sessions_servers() {
    let env = TestEnv::new();
    let tag = unique_tag("session-mem-peer");
    let cfg = env.workdir().join("cfg.json");
    std::fs::write(&cfg, memory_config("scratchpad", &tag).to_string()).unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!(
                "{} mcp call --session 20260101-000000-abcdef scratchpad read_graph",
                synapse_tests::bin("synapse").display()
            ))
            .text("done"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &["run", "look", "--mcp-config", "cfg.json", "--yes"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let result = tool_result(&fake, 1);
    assert!(
        result.contains("may only reach its own session's MCP servers"),
        "{result}"
    );
    wait_gone(&tag);
}

/// The stream-json `init` event of `stdout`.
fn init_line(stdout: &str) -> Value {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "system" && v["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init line in {stdout}"))
}

fn server_names(init: &Value) -> Vec<String> {
    init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

/// What a session's own servers are to the rest of Synapse: `tools search` (the agent's and
/// `synapse tools search` from its shell) finds their commands, a hook sees their calls under
/// Claude Code's `mcp__<server>__<tool>` name with the tool's arguments, stream-json's `init`
/// lists them; and a resume that brings another `--mcp-config` has those servers instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_servers_are_searched_hooked_listed_and_replaced_on_resume() {
    let env = TestEnv::new();
    let (tag_a, tag_b) = (unique_tag("own-notes"), unique_tag("own-pad"));
    std::fs::write(
        env.workdir().join("a.json"),
        memory_config("notes", &tag_a).to_string(),
    )
    .unwrap();
    std::fs::write(
        env.workdir().join("b.json"),
        memory_config("pad", &tag_b).to_string(),
    )
    .unwrap();
    let seen = env.root().join("hook-input.json");
    let settings = json!({"hooks": {"PreToolUse": [{
        "matcher": "mcp__notes__create_entities",
        "hooks": [{"type": "command", "command": format!("cat > {}", seen.display())}]
    }]}});
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.home().join("settings.json"), settings.to_string()).unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("tools search create entities")
            .tool_call(format!(
                "{} tools search create entities",
                synapse_tests::bin("synapse").display()
            ))
            .tool_call(
                r#"mcp:notes:create_entities --entities '[{"name":"Ada","entityType":"person","observations":["writes"]}]'"#,
            )
            .text("done"),
    )
    .await
    .unwrap();
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "remember Ada",
            "--mcp-config",
            "a.json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let init = init_line(&out.stdout);
    assert!(server_names(&init).contains(&"notes".to_string()), "{init}");
    for request in [1, 2] {
        let found = tool_result(&fake, request);
        assert!(found.contains("mcp:notes:create_entities"), "{found}");
    }
    let hook: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(hook["tool_name"], "mcp__notes__create_entities", "{hook}");
    assert_eq!(hook["tool_input"]["entities"][0]["name"], "Ada", "{hook}");
    let session_id = init["session_id"].as_str().unwrap().to_string();

    // Resumed with another config: its servers, not the first run's.
    fake.push(Reply::new().tool_call("tools search create entities"));
    fake.push(Reply::new().text("swapped"));
    let out = synapse(
        &env,
        &fake,
        &[
            "run",
            "again",
            "--resume",
            &session_id,
            "--mcp-config",
            "b.json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let names = server_names(&init_line(&out.stdout));
    assert!(names.contains(&"pad".to_string()), "{names:?}");
    assert!(!names.contains(&"notes".to_string()), "{names:?}");
    let found = tool_result(&fake, 5);
    assert!(found.contains("mcp:pad:create_entities"), "{found}");
    assert!(!found.contains("mcp:notes:"), "{found}");
    wait_gone(&tag_a);
    wait_gone(&tag_b);
}
