//! Issue 37, `synapse mcp serve`: Synapse as an MCP server over stdio, driven by clients nobody
//! here wrote — Claude Code itself (`--mcp-config`, the scripted model calling a skill script and
//! a re-offered MCP tool) and the Python `mcp` SDK's client (listing, calls, roots, errors) —
//! against a real daemon whose one MCP server process serves every agent; and a call that would
//! ask, refused with the rule that allows it, which then does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mcp_support::{fixtures_dir, processes_with, py_server, venv_python};
use serde_json::{Value, json};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, ToolCall};
use synapse_tests::{DEADLINE, Run, TestEnv, bin, run_async, wait_until};

/// A daemon with the user skill `greeter` (one documented script) and the user MCP server `py`
/// (a private copy of the Python fixture, so its processes can be counted), connected.
struct Served {
    env: TestEnv,
    /// The copy of the MCP server's script: its path names its processes.
    py_script: PathBuf,
}

fn served() -> Served {
    let env = TestEnv::new();
    env.write_skill(
        "greeter",
        "Greets people by name. Use when someone should be greeted.",
        "Greet with `skill:greeter:greet NAME`; the greeting names the folder it ran in.\n",
    );
    let script = env.home().join("skills/greeter/scripts/greet.sh");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(
        &script,
        "#!/bin/sh\n# Greets someone by name.\n#\n# Usage: greet.sh <name>\necho \"hello, $1 from $(pwd)\"\n",
    )
    .unwrap();
    make_executable(&script);
    let py_script = env.root().join("py_serve_fixture.py");
    std::fs::copy(py_server(), &py_script).unwrap();
    let mcp_dir = env.home().join("mcp");
    std::fs::create_dir_all(&mcp_dir).unwrap();
    let config =
        json!({"mcpServers": {"py": {"command": venv_python(), "args": [&py_script, "stdio"]}}});
    std::fs::write(mcp_dir.join("mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:py:echo");
    wait_until(DEADLINE, "the daemon's py server to connect", || {
        wrapper.exists()
    });
    Served { env, py_script }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl Served {
    /// The running processes of the daemon's `py` server.
    fn py_processes(&self) -> Vec<u32> {
        processes_with(&self.py_script.display().to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_calls_a_skill_script_and_a_reoffered_mcp_tool_through_one_server_process() {
    let s = served();
    let claude = fixtures_dir().join("node_modules/.bin/claude");
    assert!(
        claude.exists(),
        "{} is missing: run tests/fixtures/install.sh",
        claude.display()
    );
    let before = s.py_processes();
    assert_eq!(before.len(), 1, "one py server before: {before:?}");

    let fake = FakeLlm::start(
        Script::new()
            .reply(
                Reply::new().call(
                    ToolCall::raw(
                        "mcp__synapse__skill__greeter__greet",
                        json!({"args": ["Ada"]}),
                    )
                    .id("toolu_greet"),
                ),
            )
            .reply(
                Reply::new().call(
                    ToolCall::raw("mcp__synapse__py__echo", json!({"text": "warm connection"}))
                        .id("toolu_echo"),
                ),
            )
            .text("both tools answered"),
    )
    .await
    .unwrap();
    let config = s.env.root().join("claude-mcp.json");
    let entry = json!({"mcpServers": {"synapse": {
        "command": bin("synapse"),
        "args": ["mcp", "serve"],
    }}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let mut cmd = Command::new(&claude);
    s.env.apply_env(&mut cmd);
    cmd.args([
        "-p",
        "greet Ada, then echo",
        "--output-format",
        "stream-json",
    ])
    .args(["--verbose", "--strict-mcp-config", "--mcp-config"])
    .arg(&config)
    .args(["--allowedTools", "mcp__synapse"])
    .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
    .env("ANTHROPIC_API_KEY", "sk-test")
    .env("DISABLE_TELEMETRY", "1")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    // MCP tools go to the model as tools, not behind Claude Code's deferred tool search.
    .env("ENABLE_TOOL_SEARCH", "false");
    let out = run_async(cmd).await;
    assert!(out.success(), "{out:?}");

    // Claude Code offered the model Synapse's tools under its own mcp__synapse__ names.
    let offered = fake.requests()[0].tool_names();
    for name in [
        "mcp__synapse__skill__greeter__greet",
        "mcp__synapse__py__echo",
        "mcp__synapse__skills_search",
        "mcp__synapse__skill_load",
        "mcp__synapse__task",
    ] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    // Both results came back to the model and into Claude Code's output.
    let results = tool_results(&out.stdout);
    let workdir = s.env.workdir().display().to_string();
    let greet = results.get("toolu_greet").cloned().unwrap_or_default();
    assert!(
        greet.contains(&format!("hello, Ada from {workdir}")),
        "{greet:?} in {}",
        out.stdout
    );
    assert_eq!(
        results.get("toolu_echo").map(String::as_str),
        Some("warm connection"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("both tools answered"), "{}", out.stdout);

    // The daemon's one server process answered Claude Code, and answers Synapse's own agent.
    assert_eq!(
        s.py_processes(),
        before,
        "Claude Code started no server of its own"
    );
    let own = s.env.cli(&["exec", "mcp:py:echo --text again"]);
    assert_eq!(own.stdout.trim(), "again", "{own:?}");
    assert_eq!(s.py_processes(), before);
}

/// `tool_use_id` → the text of its result, from Claude Code's stream-json `user` messages.
fn tool_results(stdout: &str) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(blocks) = v["message"]["content"].as_array() else {
            continue;
        };
        for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            out.insert(b["tool_use_id"].as_str().unwrap_or("").to_string(), text);
        }
    }
    out
}

/// The Python SDK client: starts `synapse mcp serve` in `cwd` (offering `root` as its MCP root
/// when given), runs `calls` (a JSON list of [tool, arguments]) after listing the tools, and
/// prints one JSON line per step.
const PY_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

async def main():
    spec = json.loads(sys.argv[1])
    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=spec["root"])])
    params = StdioServerParameters(command=spec["synapse"], args=["mcp", "serve"], env=spec["env"], cwd=spec["cwd"])
    async with stdio_client(params) as (read, write):
        kwargs = {"list_roots_callback": roots} if spec.get("root") else {}
        async with ClientSession(read, write, **kwargs) as session:
            await session.initialize()
            listed = await session.list_tools()
            print(json.dumps({"tools": [t.model_dump(mode="json", by_alias=True) for t in listed.tools]}), flush=True)
            for name, arguments in spec["calls"]:
                try:
                    r = await session.call_tool(name, arguments)
                    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
                    print(json.dumps({"tool": name, "text": text, "is_error": bool(r.is_error)}), flush=True)
                except Exception as e:
                    print(json.dumps({"tool": name, "exception": str(e)}), flush=True)

asyncio.run(main())
"#;

/// Runs [`PY_CLIENT`] and returns its JSON lines.
async fn python_client(
    env: &TestEnv,
    cwd: &Path,
    root: Option<&Path>,
    calls: Value,
) -> (Run, Vec<Value>) {
    python_client_with(env, cwd, root, calls, json!({})).await
}

/// [`python_client`] with `extra` variables for the server (a model endpoint).
async fn python_client_with(
    env: &TestEnv,
    cwd: &Path,
    root: Option<&Path>,
    calls: Value,
    extra: Value,
) -> (Run, Vec<Value>) {
    // The SDK hands the server only a few safe variables; Synapse needs its own.
    let mut vars = json!({"SYNAPSE_HOME": env.home(), "HOME": env.user_home(), "PATH": std::env::var("PATH").unwrap_or_default()});
    if let (Some(vars), Some(extra)) = (vars.as_object_mut(), extra.as_object()) {
        vars.extend(extra.clone());
    }
    let spec = json!({
        "synapse": bin("synapse"),
        "cwd": cwd,
        "root": root.map(|r| format!("file://{}", r.display())),
        "env": vars,
        "calls": calls,
    });
    let mut cmd = Command::new(venv_python());
    env.apply_env(&mut cmd);
    cmd.args(["-c", PY_CLIENT]).arg(spec.to_string());
    let out = run_async(cmd).await;
    let lines = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, lines)
}

fn call_result<'a>(lines: &'a [Value], tool: &str, nth: usize) -> &'a Value {
    lines
        .iter()
        .filter(|l| l["tool"] == tool)
        .nth(nth)
        .unwrap_or_else(|| panic!("no result {nth} of {tool} in {lines:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_lists_calls_in_its_root_and_sees_errors_as_errors() {
    let s = served();
    let project = s.env.root().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let calls = json!([
        ["skill__greeter__greet", {"args": ["Grace"]}],
        ["py__echo", {"text": "through the daemon"}],
        ["py__fail", {"message": "the tool said no"}],
        ["skill__greeter__greet", {"args": "Grace"}],
        ["skill_load", {"name": "greeter"}],
        ["skills_search", {"query": "greet someone by name"}],
        ["no_such_tool", {}],
    ]);
    let (out, lines) = python_client(&s.env, &s.env.workdir(), Some(&project), calls).await;
    assert!(out.success(), "{out:?}");

    let tools = lines[0]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{out:?}"));
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not offered: {tools:?}"))
    };
    let greet = tool("skill__greeter__greet");
    let about = greet["description"].as_str().unwrap();
    assert!(
        about.starts_with("Greets someone by name.")
            && about.contains("skill:greeter:greet <name>"),
        "{about}"
    );
    assert_eq!(greet["inputSchema"]["properties"]["args"]["type"], "array");
    let echo = tool("py__echo");
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .contains("useful to check argument passing"),
        "the server's whole description: {echo}"
    );
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    for fixed in ["skills_search", "skill_load", "task"] {
        tool(fixed);
    }

    // The call ran in the client's root, not where the server was started.
    let r = call_result(&lines, "skill__greeter__greet", 0);
    assert_eq!(
        (r["text"].as_str().unwrap().trim(), &r["is_error"]),
        (
            format!("hello, Grace from {}", project.display()).as_str(),
            &json!(false)
        ),
        "{r}"
    );
    let r = call_result(&lines, "py__echo", 0);
    assert_eq!(
        (&r["text"], &r["is_error"]),
        (&json!("through the daemon"), &json!(false))
    );
    let r = call_result(&lines, "py__fail", 0);
    assert_eq!(r["is_error"], json!(true), "{r}");
    assert!(
        r["text"].as_str().unwrap().contains("the tool said no"),
        "{r}"
    );
    let r = call_result(&lines, "skill__greeter__greet", 1);
    assert_eq!(r["is_error"], json!(true), "{r}");
    assert_eq!(
        r["text"],
        json!(r#"`args` must be an array of strings (got "Grace")"#)
    );
    let r = call_result(&lines, "skill_load", 0);
    assert!(
        r["text"].as_str().unwrap().contains("# Skill: greeter")
            && r["text"]
                .as_str()
                .unwrap()
                .contains("the greeting names the folder"),
        "{r}"
    );
    let r = call_result(&lines, "skills_search", 0);
    let found = r["text"].as_str().unwrap();
    assert!(
        found.contains("greeter — Greets people by name.")
            && found.contains("tools: skill__greeter__greet"),
        "{found}"
    );
    let r = call_result(&lines, "no_such_tool", 0);
    assert!(
        r["exception"]
            .as_str()
            .is_some_and(|e| e.contains("offers no tool \"no_such_tool\"")),
        "{r}"
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_would_ask_is_refused_with_the_rule_that_allows_it() {
    let s = served();
    let settings = s.env.paths().settings_file();
    std::fs::write(&settings, r#"{"permissions": {"defaultMode": "ask"}}"#).unwrap();
    let greet = || json!([["skill__greeter__greet", {"args": ["Lin"]}]]);
    let (out, lines) = python_client(&s.env, &s.env.workdir(), None, greet()).await;
    assert!(out.success(), "{out:?}");
    let r = call_result(&lines, "skill__greeter__greet", 0);
    assert_eq!(r["is_error"], json!(true), "{r}");
    let why = r["text"].as_str().unwrap();
    let prefix = "to permissions.bash.allow in ";
    assert!(
        why.starts_with("Permission denied: ")
            && why.contains(&format!("{prefix}{}", settings.display())),
        "{why}"
    );
    assert!(!why.contains("hello, Lin"), "it must not have run: {why}");

    // The rule it names, added where it says, lets the same call run.
    let rule = why
        .split("by adding \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no rule named in {why}"));
    let with_rule = json!({"permissions": {"defaultMode": "ask", "bash": {"allow": [rule]}}});
    std::fs::write(&settings, with_rule.to_string()).unwrap();
    let (out, lines) = python_client(&s.env, &s.env.workdir(), None, greet()).await;
    let r = call_result(&lines, "skill__greeter__greet", 0);
    assert_eq!(r["is_error"], json!(false), "{r} {out:?}");
    assert!(r["text"].as_str().unwrap().contains("hello, Lin"), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_runs_a_sub_agent_in_the_callers_folder_and_answers_its_result() {
    let s = served();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("pwd")
            .text("The folder is the project; nothing else to report."),
    )
    .await
    .unwrap();
    let project = s.env.root().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let calls =
        json!([["task", {"prompt": "Say which folder you are in.", "description": "where am I"}]]);
    let model =
        json!({"ANTHROPIC_BASE_URL": fake.anthropic_base_url(), "ANTHROPIC_API_KEY": "sk-test"});
    let (out, lines) = python_client_with(&s.env, &project, None, calls, model).await;
    assert!(out.success(), "{out:?}");
    let r = call_result(&lines, "task", 0);
    assert_eq!(r["is_error"], json!(false), "{r}");
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .contains("The folder is the project; nothing else to report."),
        "{r}"
    );
    // The sub-agent's shell ran in the caller's folder.
    let results: Vec<String> = fake
        .requests()
        .iter()
        .flat_map(|q| q.tool_results())
        .map(|(_, text)| text)
        .collect();
    assert!(
        results
            .iter()
            .any(|t| t.contains(&project.display().to_string())),
        "{results:?}"
    );
}

#[test]
fn help_says_what_it_offers_and_how_claude_code_and_codex_add_it() {
    let env = TestEnv::new();
    let out = env.cli(&["mcp", "serve", "--help"]);
    assert!(out.success(), "{out:?}");
    for line in [
        "claude mcp add synapse -- synapse mcp serve",
        "[mcp_servers.synapse]",
        "command = \"synapse\"",
        "args = [\"mcp\", \"serve\"]",
        "skill__<skill>__<script>",
        "<server>__<tool>",
        "task",
        "refused, naming the permission rule that allows it",
    ] {
        assert!(
            out.stdout.contains(line),
            "{line:?} missing from:\n{}",
            out.stdout
        );
    }
    assert_eq!(env.daemon_pid(), None, "help must not start the daemon");
}
