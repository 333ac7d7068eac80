//! Issue 15, MCP part: one daemon, several projects. Each project's `.mcp.json` servers belong to
//! that project's workspace: same-named servers of two projects and of the user never answer for
//! each other, a project server starts in its project root (`./srv.py` works) with `${VAR}` from
//! the opening client's environment, two sessions of one project share one server process, and
//! the project's servers stop once its last session has been gone for `mcp.projectIdleStopSec`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::mcp_support::{processes_with, py_server, unique_tag, venv_python};
use serde_json::json;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

/// A project folder whose `.mcp.json` runs a copy of the Python fixture by a relative path
/// (`./<script>`, unique per project so its processes can be counted) with `TAG` from the
/// opening client's `PROJ_TAG`.
fn project(env: &TestEnv, name: &str) -> (PathBuf, String) {
    let dir = env.workdir().join(name);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let script = format!("{}.py", unique_tag(&format!("srv-{name}")));
    std::fs::copy(py_server(), dir.join(&script)).unwrap();
    std::fs::write(
        dir.join(".mcp.json"),
        json!({"mcpServers": {"proj": {
            "command": venv_python(),
            "args": [format!("./{script}"), "stdio"],
            "env": {"TAG": "${PROJ_TAG}"},
        }}})
        .to_string(),
    )
    .unwrap();
    let trusted = env.cli(&["trust", "--yes", dir.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    (dir, script)
}

fn user_server(env: &TestEnv) {
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp_servers.json"),
        json!({"mcpServers": {"proj": {
            "command": venv_python(),
            "args": [py_server(), "stdio"],
            "env": {"TAG": "user"},
        }}})
        .to_string(),
    )
    .unwrap();
}

/// `synapse <args>` in `cwd` with `PROJ_TAG=tag`.
fn cli_in(env: &TestEnv, cwd: &Path, tag: &str, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.current_dir(cwd).env("PROJ_TAG", tag).args(args);
    run(&mut cmd)
}

fn approve(env: &TestEnv, dir: &Path, tag: &str) {
    let approved = cli_in(env, dir, tag, &["mcp", "approve", "proj"]);
    assert!(approved.success(), "{approved:?}");
}

/// `synapse run` in `cwd` (with `PROJ_TAG=tag`) whose model runs `command` once.
fn agent_runs(env: &TestEnv, fake: &FakeLlm, cwd: &Path, tag: &str, command: &str) -> String {
    fake.push(Reply::new().tool_call(command));
    fake.push(Reply::new().text("done"));
    let before = fake.requests().len();
    let mut cmd = env.synapse_with_model(fake);
    cmd.current_dir(cwd)
        .env("PROJ_TAG", tag)
        .args(["run", "go"]);
    let out = run(&mut cmd);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    requests[before..]
        .iter()
        .find_map(|r| r.last_tool_result())
        .expect("the command's result reached the model")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_project_sees_its_own_servers_and_the_user_keeps_theirs() {
    let env = TestEnv::new();
    user_server(&env);
    let (alpha, _) = project(&env, "alpha");
    let (beta, _) = project(&env, "beta");
    let elsewhere = env.workdir().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    env.start_daemon();
    approve(&env, &alpha, "from-alpha");
    approve(&env, &beta, "from-beta");

    // From the user's terminal: the project's server in its project (started in the project
    // root, so `./srv.py` ran; `${PROJ_TAG}` from this client), the user's anywhere else.
    let a = cli_in(
        &env,
        &alpha.join(".git"),
        "from-alpha",
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(a.stdout.trim(), "from-alpha", "{a:?}");
    let b = cli_in(
        &env,
        &beta,
        "from-beta",
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(b.stdout.trim(), "from-beta", "{b:?}");
    let u = cli_in(
        &env,
        &elsewhere,
        "x",
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(u.stdout.trim(), "user", "{u:?}");

    // `mcp list` in a project says its server hides the user's; elsewhere it is the user's.
    let list = cli_in(&env, &alpha, "from-alpha", &["mcp", "list"]);
    assert!(
        list.stdout.contains(".mcp.json") || list.stderr.contains(".mcp.json"),
        "{list:?}"
    );
    assert!(
        format!("{}{}", list.stdout, list.stderr).contains("shadows your user server"),
        "{list:?}"
    );
    let list = cli_in(&env, &elsewhere, "x", &["mcp", "list"]);
    assert!(
        !format!("{}{}", list.stdout, list.stderr).contains("shadows"),
        "{list:?}"
    );

    // The agent in each project: the in-process path and the wrapper on its PATH (a pipeline)
    // both reach its own project's server, even after `cd` out of the project.
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let got = agent_runs(&env, &fake, &alpha, "from-alpha", "mcp:proj:env TAG");
    assert_eq!(got.trim(), "from-alpha");
    let got = agent_runs(
        &env,
        &fake,
        &beta,
        "from-beta",
        "cd / && mcp:proj:env TAG | cat",
    );
    assert_eq!(got.trim(), "from-beta");
    let got = agent_runs(&env, &fake, &elsewhere, "x", "mcp:proj:env TAG | cat");
    assert_eq!(got.trim(), "user");
    // The user's own wrapper is the user's server's, not a project's.
    let user_wrapper = std::fs::read_to_string(env.home().join("bin/mcp:proj:env")).unwrap();
    assert!(!user_wrapper.contains("--workspace"), "{user_wrapper}");
    // `tools search` in a session finds the command; the description is the one server's.
    let got = agent_runs(
        &env,
        &fake,
        &alpha,
        "from-alpha",
        "tools search mcp:proj:env",
    );
    assert_eq!(got.matches("mcp:proj:env").count(), 1, "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_one_project_share_its_server_which_stops_when_idle() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        json!({"mcp": {"projectIdleStopSec": 600}}).to_string(),
    )
    .unwrap();
    let (alpha, script) = project(&env, "alpha");
    let sub = alpha.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    env.start_daemon();
    approve(&env, &alpha, "t");
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let first = agent_runs(&env, &fake, &alpha, "t", "mcp:proj:env TAG");
    assert_eq!(first.trim(), "t");
    let second = agent_runs(&env, &fake, &sub, "t", "mcp:proj:env TAG | cat");
    assert_eq!(second.trim(), "t");
    // One process served both sessions.
    wait_until(DEADLINE, "one server process for the project", || {
        processes_with(&script).len() == 1
    });
    // `daemon status` lists the project: nobody holds it now, its server connected.
    let alpha_root = alpha.canonicalize().unwrap().display().to_string();
    let project_line = |env: &TestEnv| {
        let status = env.cli(&["daemon", "status"]);
        assert!(status.success(), "{status:?}");
        status
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&alpha_root))
            .map(str::to_string)
    };
    let mut line = String::new();
    wait_until(DEADLINE, "alpha listed as idle under projects", || {
        line = project_line(&env).unwrap_or_default();
        line.contains("idle, stops in 9m")
    });
    assert!(line.contains("MCP servers 1/1 connected"), "{line}");

    // A hand edit shortens the idle period: with no session left, the server stops.
    std::fs::write(
        env.paths().settings_file(),
        json!({"mcp": {"projectIdleStopSec": 1}}).to_string(),
    )
    .unwrap();
    wait_until(DEADLINE, "the idle project's server stopped", || {
        processes_with(&script).is_empty()
    });
    wait_until(DEADLINE, "the stopped project leaves the status", || {
        project_line(&env).is_none()
    });
    // The next use starts it again.
    let again = agent_runs(&env, &fake, &alpha, "t", "mcp:proj:env TAG");
    assert_eq!(again.trim(), "t");
    // A `synapse exec` shell in the project holds it (until the shell is closed).
    let exec = run(env.synapse().current_dir(&sub).args(["exec", "true"]));
    assert!(exec.success(), "{exec:?}");
    wait_until(DEADLINE, "the exec shell holds the project", || {
        project_line(&env).is_some_and(|l| l.contains("1 session;"))
    });
}

/// `${VAR}` in a project's config comes from the user's own clients, never from a command the
/// agent runs in its sandboxed shell: `PROJ_TAG=evil synapse mcp list` there does not restart
/// the project's server with the value it chose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_refill_a_projects_variables() {
    let env = TestEnv::new();
    let (alpha, _) = project(&env, "alpha");
    env.start_daemon();
    approve(&env, &alpha, "good");
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let client = synapse_tests::bin("synapse");
    let tricked = agent_runs(
        &env,
        &fake,
        &alpha,
        "good",
        &format!(
            "PROJ_TAG=evil {} mcp list >/dev/null 2>&1; mcp:proj:env TAG",
            client.display()
        ),
    );
    assert_eq!(tricked.trim(), "good");
}

/// A command in the agent's sandboxed shell reaches its own project's servers only: naming
/// another project with `--workspace` is refused, and `cd` into another project still answers
/// with its own project's server (the daemon knows the shell it runs under, not the folder it
/// claims).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_reaches_only_its_own_projects_servers() {
    let env = TestEnv::new();
    let (alpha, _) = project(&env, "alpha");
    let (beta, _) = project(&env, "beta");
    env.start_daemon();
    approve(&env, &alpha, "from-alpha");
    approve(&env, &beta, "from-beta");
    // Beta's server is up (its user used it).
    let b = cli_in(
        &env,
        &beta,
        "from-beta",
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(b.stdout.trim(), "from-beta", "{b:?}");

    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let client = synapse_tests::bin("synapse");
    let named = agent_runs(
        &env,
        &fake,
        &alpha,
        "from-alpha",
        &format!(
            "{} mcp call --workspace {} proj env TAG",
            client.display(),
            beta.display()
        ),
    );
    assert!(
        named.contains("only reach its own workspace") && !named.contains("from-beta"),
        "{named}"
    );
    let moved = agent_runs(
        &env,
        &fake,
        &alpha,
        "from-alpha",
        &format!(
            "cd {} && {} mcp call proj env TAG",
            beta.display(),
            client.display()
        ),
    );
    assert_eq!(moved.trim(), "from-alpha", "{moved}");
    // `daemon status` from there lists its own project, not the other one that is up.
    let status = agent_runs(
        &env,
        &fake,
        &alpha,
        "from-alpha",
        &format!("{} daemon status", client.display()),
    );
    let named = |p: &Path| status.contains(&p.canonicalize().unwrap().display().to_string());
    assert!(named(&alpha) && !named(&beta), "{status}");
    // The user's own terminal sees both.
    let mine = env.cli(&["daemon", "status"]);
    assert!(
        mine.stdout
            .contains(&beta.canonicalize().unwrap().display().to_string()),
        "{mine:?}"
    );
}

/// A deny rule of a trusted project's own `.synapse/settings.json` stops its MCP tool even when
/// the call reaches the daemon from a script in the sandboxed shell, where the session's router
/// never saw the command (the daemon judges it by the same rules as the session's gate) — and
/// keeps stopping it after the file is changed or broken, and after a daemon restart, until the
/// user trusts it again; with the trusted copy tampered with, the call is refused outright.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_deny_rule_stops_a_tool_called_from_a_script() {
    let env = TestEnv::new();
    let (alpha, _) = project(&env, "alpha");
    let rules = alpha.join(".synapse/settings.json");
    std::fs::create_dir_all(alpha.join(".synapse")).unwrap();
    std::fs::write(
        &rules,
        json!({"permissions": {"mcp": {"deny": ["mcp:proj:env"]}}}).to_string(),
    )
    .unwrap();
    // The user trusts the folder as it is now (rules included).
    let trusted = env.cli(&["trust", "--yes", alpha.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    std::fs::write(alpha.join("call.sh"), "mcp:proj:env TAG\n").unwrap();
    env.start_daemon();
    approve(&env, &alpha, "t");
    // A session whose command runs the tool from a script; its stderr and the tool's result.
    let script_calls_the_tool = || async {
        let fake = FakeLlm::start(Script::new()).await.unwrap();
        fake.push(Reply::new().tool_call("bash call.sh; echo \"exit=$?\""));
        fake.push(Reply::new().text("done"));
        let mut cmd = env.synapse_with_model(&fake);
        cmd.current_dir(&alpha)
            .env("PROJ_TAG", "t")
            .args(["run", "--yes", "go"]);
        let out = run(&mut cmd);
        assert!(out.success(), "{out:?}");
        let result = fake
            .requests()
            .iter()
            .find_map(|r| r.last_tool_result())
            .expect("the command's result reached the model");
        (out.stderr, result)
    };
    let denied = |result: &str| {
        assert!(
            result.contains("denied by the rule `mcp:proj:env`") && !result.contains("exit=0"),
            "{result}"
        );
    };
    let (_, result) = script_calls_the_tool().await;
    denied(&result);

    // The rule taken out of the file (as the agent could from a script, or a `git pull`): the
    // changed file does not count until trusted again, and the rules that were trusted stay.
    let take_the_rule_out = || {
        std::fs::write(
            &rules,
            json!({"permissions": {"mcp": {"deny": []}}}).to_string(),
        )
        .unwrap()
    };
    take_the_rule_out();
    let (stderr, result) = script_calls_the_tool().await;
    assert!(
        stderr.contains("changed since the folder was trusted")
            && stderr.contains("the rules it had when you trusted it stay in force"),
        "{stderr}"
    );
    denied(&result);

    // A file that no longer parses at all: the same.
    std::fs::write(&rules, "{\"permissions\": ").unwrap();
    let (_, result) = script_calls_the_tool().await;
    denied(&result);

    // A restarted daemon never read the file while it matched: the trusted content it keeps
    // still holds the rule.
    take_the_rule_out();
    env.stop_daemon();
    env.start_daemon();
    let (_, result) = script_calls_the_tool().await;
    denied(&result);

    // The kept copy altered (it no longer has the hash the user trusted) and the daemon
    // restarted: what was trusted is not known, so the call is refused rather than let through.
    for copy in std::fs::read_dir(env.home().join("trusted_settings")).unwrap() {
        std::fs::write(copy.unwrap().path(), r#"{"permissions": {}}"#).unwrap();
    }
    env.stop_daemon();
    env.start_daemon();
    let (stderr, result) = script_calls_the_tool().await;
    assert!(
        stderr.contains("the rules it had when you trusted it are not known"),
        "{stderr}"
    );
    assert!(
        result.contains("is refused: the permission rules cannot be read")
            && !result.contains("exit=0"),
        "{result}"
    );
}
