//! End to end through the real binaries: `synapsed` connects the configured servers at start and
//! writes wrappers; the wrappers exec the real `synapse mcp call`; `synapse mcp list` and
//! `synapse tools refresh mcp` report; daemon restarts leave no server process behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use mcp_support::{bad_mcp, fs_server_js, py_server, unique_tag, venv_python};
use serde_json::{Value, json};
use synapse_tests::{DEADLINE, Run, TestEnv, processes_matching, run, wait_until};

fn write_config(env: &TestEnv, doc: &Value) {
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp_servers.json"),
        serde_json::to_string_pretty(doc).unwrap(),
    )
    .unwrap();
}

fn wrapper(env: &TestEnv, command: &str) -> Command {
    let mut cmd = Command::new(env.home().join("bin").join(command));
    env.apply_env(&mut cmd);
    cmd
}

fn wait_for_wrapper(env: &TestEnv, command: &str) {
    let path = env.home().join("bin").join(command);
    wait_until(DEADLINE, &format!("wrapper {command}"), || path.exists());
}

fn fs_and_py(root: &Path) -> Value {
    json!({"mcpServers": {
        "fs": {"command": "node", "args": [fs_server_js(), root]},
        "py": {"command": venv_python(), "args": [py_server(), "stdio"], "env": {"FIXTURE_TOKEN": "${FIXTURE_TOKEN:-e2e-default}"}},
    }})
}

#[test]
fn wrappers_call_tools_through_the_real_client() {
    let env = TestEnv::new();
    let file = env.workdir().join("note.txt");
    std::fs::write(&file, "first\nsecond\n").unwrap();
    write_config(&env, &fs_and_py(&env.workdir()));
    env.start_daemon();
    wait_for_wrapper(&env, "mcp:fs:read_text_file");
    wait_for_wrapper(&env, "mcp:py:typed");

    let r = run(wrapper(&env, "mcp:fs:read_text_file").arg(&file));
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (Some(0), "first\nsecond\n"),
        "{}",
        r.stderr
    );
    let r = run(wrapper(&env, "mcp:fs:read_text_file").args([
        "--path",
        file.to_str().unwrap(),
        "--head",
        "1",
    ]));
    assert_eq!(r.stdout, "first\n");

    // --json - reads stdin through the client.
    let mut child = wrapper(&env, "mcp:py:typed")
        .args(["--json", "-", "--verbose"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"count": 4, "ratio": 0.5}"#)
        .unwrap();
    let r = Run::from(child.wait_with_output().unwrap());
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    assert_eq!(
        (v["count"].clone(), v["verbose"].clone()),
        (json!(4), json!(true))
    );

    // Exit codes: tool error 1 (stderr), usage 2 (signature shown).
    let r = run(wrapper(&env, "mcp:py:fail").arg("nope"));
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (Some(1), "", "nope\n")
    );
    let r = run(wrapper(&env, "mcp:py:typed").arg("--count=x"));
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("--count: expected an integer")
            && r.stderr.contains("Usage: mcp:py:typed <count> <ratio>"),
        "{}",
        r.stderr
    );
    let r = run(wrapper(&env, "mcp:py:env").arg("FIXTURE_TOKEN"));
    assert_eq!(r.stdout, "e2e-default\n");

    // In a pipeline, with bin/ on PATH as in the agent's shell.
    let path = format!(
        "{}:{}",
        env.home().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut sh = Command::new("bash");
    env.apply_env(&mut sh);
    let r = run(sh.env("PATH", path).args([
        "-c",
        &format!("mcp:fs:read_text_file {} | wc -l", file.display()),
    ]));
    assert_eq!(r.stdout.trim(), "2", "{r:?}");

    let r = env.cli(&["mcp", "list"]);
    assert!(r.success(), "{r:?}");
    let fs_line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("fs "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        fs_line.contains("ready") && fs_line.contains("stdio"),
        "{fs_line}"
    );
    let r = env.cli(&[
        "mcp",
        "call",
        "fs",
        "read_text_file",
        "--path",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.stdout, "first\nsecond\n");
    let r = env.cli(&["mcp", "call", "fs", "read_text_file", "-h"]);
    assert!(
        r.stdout.starts_with("Usage: mcp:fs:read_text_file <path>"),
        "{r:?}"
    );
}

#[test]
fn help_works_without_the_daemon() {
    let env = TestEnv::new();
    write_config(&env, &fs_and_py(&env.workdir()));
    env.start_daemon();
    wait_for_wrapper(&env, "mcp:fs:list_directory");
    env.stop_daemon();
    let r = run(wrapper(&env, "mcp:fs:list_directory").arg("-h"));
    assert!(
        r.success() && r.stdout.starts_with("Usage: mcp:fs:list_directory <path>"),
        "{r:?}"
    );
    let r = run(wrapper(&env, "mcp:fs:list_directory").arg("--help"));
    assert!(
        r.stdout
            .contains("Parameters:\n  --path (string, required)"),
        "{}",
        r.stdout
    );
    assert_eq!(env.daemon_pid(), None, "help must not start the daemon");
}

#[test]
fn refresh_after_config_edit_adds_and_removes_wrappers() {
    let env = TestEnv::new();
    write_config(&env, &fs_and_py(&env.workdir()));
    env.start_daemon();
    wait_for_wrapper(&env, "mcp:py:echo");
    write_config(
        &env,
        &json!({"mcpServers": {
            "fs": {"command": "node", "args": [fs_server_js(), env.workdir()]},
            "bad": {"command": bad_mcp(), "args": ["--extra-tools", "2"], "disabledTools": ["grow"]},
        }}),
    );
    let r = env.cli(&["tools", "refresh", "mcp"]);
    assert!(r.success(), "{r:?}");
    assert!(
        r.stdout
            .contains("1 added (bad), 1 removed (py), 0 reconnected, 1 unchanged"),
        "{}",
        r.stdout
    );
    let names: Vec<String> = std::fs::read_dir(env.home().join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n == "mcp:bad:tool_1")
            && names.iter().any(|n| n == "mcp:fs:read_text_file")
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mcp:py:") || n == "mcp:bad:grow"),
        "{names:?}"
    );
    let r = run(wrapper(&env, "mcp:bad:echo").arg("refreshed"));
    assert_eq!(r.stdout, "refreshed\n");

    // A broken entry is reported with its file and line; the others keep working.
    let cfg = env.home().join("mcp/mcp_servers.json");
    std::fs::write(
        &cfg,
        "{\"mcpServers\": {\n  \"bad\": {\"command\": \"${NOT_SET_ANYWHERE}\"}\n}}",
    )
    .unwrap();
    let r = env.cli(&["tools", "refresh", "mcp"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains(&format!(
            "{}:2: command: environment variable NOT_SET_ANYWHERE is not set",
            cfg.display()
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn daemon_restarts_leave_no_server_processes() {
    let env = TestEnv::new();
    let tag = unique_tag("e2e-restart");
    write_config(
        &env,
        &json!({"mcpServers": {
            "a": {"command": bad_mcp(), "args": ["--spawn-child", "--tag", &tag]},
            "b": {"command": bad_mcp(), "args": ["--tag", &tag]},
        }}),
    );
    for cycle in 0..10 {
        env.start_daemon();
        wait_until(DEADLINE, "both servers running", || {
            processes_matching(&tag).len() == 2
        });
        let r = env.cli(&["mcp", "call", "a", "echo", &format!("cycle {cycle}")]);
        assert_eq!(r.stdout, format!("cycle {cycle}\n"), "{r:?}");
        env.stop_daemon();
        assert_eq!(
            processes_matching(&tag),
            Vec::<u32>::new(),
            "cycle {cycle}: servers outlived the daemon"
        );
    }
}

#[test]
fn the_agents_bash_tool_calls_mcp_in_process_and_pipelines_use_the_wrapper() {
    let env = TestEnv::new();
    let file = env.workdir().join("note.txt");
    std::fs::write(&file, "alpha\nbeta\n").unwrap();
    write_config(&env, &fs_and_py(&env.workdir()));
    env.start_daemon();
    wait_for_wrapper(&env, "mcp:fs:read_text_file");

    // In a pipeline the command is the wrapper executable on PATH.
    let piped = env.cli(&["exec", "mcp:fs:read_text_file note.txt | tr a-z A-Z"]);
    assert_eq!(piped.stdout.trim_end(), "ALPHA\nBETA", "{piped:?}");

    // As a simple command it goes straight to the warm connection: it still works with the
    // wrapper gone, which a spawned process could not.
    std::fs::remove_file(env.home().join("bin/mcp:fs:read_text_file")).unwrap();
    let direct = env.cli(&[
        "exec",
        &format!("mcp:fs:read_text_file --path {}", file.display()),
    ]);
    assert_eq!(
        (direct.code, direct.stdout.as_str()),
        (Some(0), "alpha\nbeta\n"),
        "{direct:?}"
    );
    let usage = env.cli(&["exec", "mcp:fs:read_text_file --no-such-flag 1"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_a_project_folder_brings_its_project_servers() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    let project = env.workdir().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"proj": {"command": venv_python(), "args": [py_server(), "stdio"]}}})
            .to_string(),
    )
    .unwrap();
    // A project's servers run only once the user trusted its folder.
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    env.start_daemon();
    assert!(!env.home().join("bin/mcp:proj:echo").exists());
    // ... and approved the server's entry.
    let mut approve = env.synapse();
    approve
        .current_dir(&project)
        .args(["mcp", "approve", "proj"]);
    let approved = Run::from(approve.output().unwrap());
    assert!(approved.success(), "{approved:?}");
    let fake = FakeLlm::start(Script::new().text("hi")).await.unwrap();
    let mut cmd = env.synapse();
    cmd.current_dir(&project)
        .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", "hello"])
        .stdin(Stdio::null());
    let out = Run::from(tokio::process::Command::from(cmd).output().await.unwrap());
    assert!(out.success(), "{out:?}");
    // The project's commands belong to the project: its wrappers are not in the user's bin
    // folder, and from the user's terminal in the project folder the server answers.
    assert!(!env.home().join("bin/mcp:proj:echo").exists());
    let mut call = env.synapse();
    call.current_dir(&project)
        .args(["mcp", "call", "proj", "echo", "from the project"]);
    let r = run(&mut call);
    assert_eq!(r.stdout, "from the project\n", "{r:?}");
}
