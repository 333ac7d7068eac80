//! Issue 30's `synapse mcp` additions, through the real daemon: `add-json` writes an entry as a
//! config file holds it (and names the wrong field of a bad one), `${VAR}` in the user's config
//! expands from the terminal of the user's own `add`/`refresh`, `--scope local` servers belong to
//! one project and this user (no trust needed, never seen from another project, understood by
//! `get` and `remove`), and the OAuth client flags are kept — the secret beside the tokens, never
//! in a config file — and used by `synapse mcp login`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

use crate::mcp_support::oauth::{Fixture, files_below};
use crate::mcp_support::{py_server, venv_python};

fn synapse_in(env: &TestEnv, dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.current_dir(dir).args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// The entry of `name` in `synapse mcp list --json` run in `dir`.
fn status(env: &TestEnv, dir: &Path, name: &str) -> Option<Value> {
    let out = synapse_in(env, dir, &[], &["mcp", "list", "--json"]);
    let doc: Value = serde_json::from_str(&out.stdout).ok()?;
    doc["servers"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
}

fn tagged_entry(var: &str) -> String {
    json!({"command": venv_python(), "args": [py_server(), "stdio"], "env": {"TAG": format!("${{{var}}}")}})
        .to_string()
}

#[test]
fn add_json_checks_the_entry_and_user_variables_come_from_the_users_terminal() {
    let env = TestEnv::new();
    let work = env.workdir();
    env.start_daemon();

    let added = synapse_in(
        &env,
        &work,
        &[("USER_TAG", "mine")],
        &["mcp", "add-json", "tagged", &tagged_entry("USER_TAG")],
    );
    assert!(added.success(), "{added:?}");
    let file = std::fs::read_to_string(env.home().join("mcp/mcp_servers.json")).unwrap();
    assert!(file.contains("${USER_TAG}"), "written as given: {file}");
    let got = synapse_in(&env, &work, &[], &["mcp", "call", "tagged", "env", "TAG"]);
    assert_eq!(
        got.stdout.trim(),
        "mine",
        "expanded from the adding terminal: {got:?}"
    );
    let refreshed = synapse_in(&env, &work, &[("USER_TAG", "again")], &["mcp", "refresh"]);
    assert!(refreshed.success(), "{refreshed:?}");
    let got = synapse_in(&env, &work, &[], &["mcp", "call", "tagged", "env", "TAG"]);
    assert_eq!(got.stdout.trim(), "again", "{got:?}");

    for (json, field) in [
        (r#"{"command": 5}"#, r#"expected a string for "command""#),
        (r#"{"command": "x", "args": "-y"}"#, r#""args""#),
        (r#"{"type": "http"}"#, r#"an http server needs "url""#),
        (
            r#"{"url": "ftp://x"}"#,
            "url must start with http:// or https://",
        ),
        (
            r#"{"command": "x", "oauth": {"clientID": "a"}}"#,
            "oauth.clientID",
        ),
        ("{not json", "not JSON"),
    ] {
        let refused = synapse_in(&env, &work, &[], &["mcp", "add-json", "bad", json]);
        assert!(!refused.success(), "{json}: {refused:?}");
        assert!(
            refused.stderr.contains("bad: ") && refused.stderr.contains(field),
            "{json}: {refused:?}"
        );
    }
    let file = std::fs::read_to_string(env.home().join("mcp/mcp_servers.json")).unwrap();
    assert!(!file.contains("\"bad\""), "{file}");

    // A variable this terminal lacks is no error in the entry: written, and listed with why.
    let later = synapse_in(
        &env,
        &work,
        &[],
        &[
            "mcp",
            "add-json",
            "later",
            r#"{"command": "x", "args": ["${NOT_SET_HERE}"]}"#,
        ],
    );
    assert!(later.success(), "{later:?}");
    let s = status(&env, &work, "later").unwrap();
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("NOT_SET_HERE is not set"),
        "{s}"
    );
}

#[test]
fn a_local_server_is_this_projects_and_needs_no_trust() {
    let env = TestEnv::new();
    let here = env.workdir().join("here");
    let there = env.workdir().join("there");
    for p in [&here, &there] {
        std::fs::create_dir_all(p.join(".git")).unwrap();
    }
    env.start_daemon();
    let entry = json!({"command": venv_python(), "args": [py_server(), "stdio"]}).to_string();
    let added = synapse_in(
        &env,
        &here,
        &[],
        &["mcp", "add-json", "--scope", "local", "scratch", &entry],
    );
    assert!(added.success(), "{added:?}");
    assert!(added.stdout.contains("scratch is connected"), "{added:?}");
    let s = status(&env, &here, "scratch").unwrap();
    assert_eq!(
        (s["state"].as_str(), s["scope"].as_str()),
        (Some("ready"), Some("local"))
    );
    let source = PathBuf::from(s["source"].as_str().unwrap());
    assert!(source.starts_with(env.home().join("mcp/local")), "{s}");
    assert!(
        !here.join(".mcp.json").exists(),
        "nothing is written into the project"
    );
    assert!(
        status(&env, &there, "scratch").is_none(),
        "seen from another project"
    );
    assert!(status(&env, &env.workdir(), "scratch").is_none());

    let got = synapse_in(&env, &here, &[], &["mcp", "get", "scratch"]);
    assert!(got.stdout.contains("scope:     local"), "{got:?}");
    let in_subdir = here.join("src");
    std::fs::create_dir_all(&in_subdir).unwrap();
    let called = synapse_in(
        &env,
        &in_subdir,
        &[],
        &["mcp", "call", "scratch", "echo", "hi"],
    );
    assert!(
        called.success() && called.stdout.contains("hi"),
        "{called:?}"
    );

    let removed = synapse_in(&env, &here, &[], &["mcp", "remove", "scratch"]);
    assert!(removed.success(), "{removed:?}");
    assert!(status(&env, &here, "scratch").is_none());

    // `mcp add --scope local` too.
    let added = synapse_in(
        &env,
        &there,
        &[],
        &[
            "mcp",
            "add",
            "--scope",
            "local",
            "other",
            &venv_python().display().to_string(),
            &py_server().display().to_string(),
            "stdio",
        ],
    );
    assert!(added.success(), "{added:?}");
    wait_until(DEADLINE, "the local server to connect", || {
        status(&env, &there, "other").is_some_and(|s| s["state"] == "ready")
    });
    assert!(status(&env, &here, "other").is_none());
}

#[test]
fn oauth_client_flags_are_kept_and_the_secret_never_in_a_config_file() {
    let fx = Fixture::start("3600");
    let env = TestEnv::new();
    env.start_daemon();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let added = synapse_in(
        &env,
        &env.workdir(),
        &[("MCP_CLIENT_SECRET", "s3cret-value")],
        &[
            "mcp",
            "add",
            "--client-id",
            "my-app",
            "--client-secret",
            "--callback-port",
            &port.to_string(),
            "srv",
            &fx.url("/mcp"),
        ],
    );
    assert!(added.success(), "{added:?}");
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join("mcp/mcp_servers.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["mcpServers"]["srv"]["oauth"],
        json!({"clientId": "my-app", "callbackPort": port})
    );
    let mut files = Vec::new();
    files_below(env.home(), &mut files);
    files_below(&env.user_home(), &mut files);
    for f in files {
        let text = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains("s3cret-value"),
            "the secret is in {}",
            f.display()
        );
    }
    let secret = std::fs::read_dir(env.home().join("mcp/oauth"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "secret"))
        .expect("the secret is kept with the tokens");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "s3cret-value");
    assert_eq!(std::fs::metadata(&secret).unwrap().mode() & 0o777, 0o600);

    // A login uses the given client (no registration) and the fixed callback port.
    let login = synapse_in(
        &env,
        &env.workdir(),
        &[],
        &["mcp", "login", "srv", "--no-browser", "--timeout", "1"],
    );
    assert!(
        login.stdout.contains("client_id=my-app")
            && login.stdout.contains(&format!(
                "redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"
            )),
        "{login:?}"
    );
    assert_eq!(fx.count("/registrations"), 0);

    // Removing the server forgets its secret.
    let removed = synapse_in(&env, &env.workdir(), &[], &["mcp", "remove", "srv"]);
    assert!(removed.success(), "{removed:?}");
    assert!(!secret.exists(), "the secret outlived its server");

    // Without the id, a secret has nothing to go with.
    let refused = synapse_in(
        &env,
        &env.workdir(),
        &[("MCP_CLIENT_SECRET", "x")],
        &["mcp", "add", "--client-secret", "srv2", &fx.url("/mcp")],
    );
    assert!(
        !refused.success() && refused.stderr.contains("--client-id"),
        "{refused:?}"
    );
}
