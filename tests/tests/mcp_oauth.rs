//! Issue 19, OAuth 2.1 for remote MCP servers, end to end: the real daemon and client against
//! `tests/fixtures/oauth_server.py` (an authorization server and a Streamable HTTP MCP server in
//! one Python process), with `$BROWSER` set to `oauth_browser.py`, which plays the browser of a
//! user who consents. Before login the server needs login (listing and calls say how); after
//! `synapse mcp login` the token file is private and the tool works; tokens are refreshed before
//! they expire, after a 401, and across a daemon restart; no token reaches a log; logout brings
//! "needs login" back. A forged state, a code minted for another PKCE challenge and an
//! unfinished login are refused; a sandboxed agent shell may not log in or out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use synapse_tests::{DEADLINE, TestEnv, run, wait_until};

use crate::mcp_support::oauth::*;
#[test]
fn login_refresh_and_logout_against_a_local_authorization_server() {
    let fx = Fixture::start("3600");
    let env = TestEnv::new();
    configure(
        &env,
        json!({
            "srv": {"type": "http", "url": fx.url("/mcp")},
            "bare": {"type": "http", "url": fx.url("/bare/mcp")},
        }),
    );
    let mut outputs = String::new();

    // Before login: both need login (with and without a WWW-Authenticate challenge).
    wait_until(DEADLINE, "both servers to need login", || {
        list_line(&env, "srv").contains("needs-login")
            && list_line(&env, "bare").contains("needs-login")
    });
    let line = list_line(&env, "srv");
    assert!(line.contains("run `synapse mcp login srv`"), "{line}");
    assert!(list_line(&env, "bare").contains("run `synapse mcp login bare`"));
    let refused = echo(&env, "hi");
    assert_eq!(refused.code, Some(3), "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("MCP server srv needs login: run `synapse mcp login srv`"),
        "{refused:?}"
    );

    // The agent's short-cut says the same, though the server has no commands yet.
    let shortcut = env.cli(&["exec", "mcp:srv:echo --text hi"]);
    assert!(
        shortcut
            .stdout
            .contains("MCP server srv needs login: run `synapse mcp login srv`"),
        "{shortcut:?}"
    );

    // Login: the URL is printed, the browser comes back, the server connects.
    let done = login(&env, "srv", "follow", &[]);
    assert!(done.success(), "{done:?}");
    assert!(
        done.stdout
            .contains(&fx.url("/authorize?response_type=code")),
        "{done:?}"
    );
    assert!(
        done.stdout.contains("Logged in to srv: connected, 1 tool."),
        "{done:?}"
    );
    assert!(
        browser_log(&env, "follow").starts_with("200 "),
        "{}",
        browser_log(&env, "follow")
    );
    assert!(browser_log(&env, "follow").contains("You can close this tab"));
    outputs.push_str(&format!("{done:?}"));
    assert_eq!(fx.count("/registrations"), 1);
    assert_eq!(fx.count("/grants/authorization_code"), 1);

    // The token file: one, private, in a private folder, holding the issued token.
    let files = token_files(&env);
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("srv-") && name.ends_with(".json"),
        "{name}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&env.home().join("mcp/oauth")), 0o700);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        stored.contains(&fx.tokens()[0]),
        "the issued token is not stored"
    );

    let called = echo(&env, "hello");
    assert!(called.success(), "{called:?}");
    assert_eq!(called.stdout.trim(), "hello");
    outputs.push_str(&format!("{called:?}"));

    // A token the server stopped accepting: refreshed after the 401, the call retried. The
    // tokens issued from now on live 5 s: short enough to wait out, long enough that a daemon
    // start and a call on a loaded machine fit in one token's life.
    let unauthorized = fx.count("/mcp_unauthorized");
    fx.request("POST", "/_lifetime?secs=5");
    fx.request("POST", "/_revoke");
    let called = echo(&env, "after revoke");
    assert_eq!(called.stdout.trim(), "after revoke", "{called:?}");
    assert_eq!(fx.count("/grants/refresh_token"), 1);
    assert!(fx.count("/mcp_unauthorized") > unauthorized);

    // An expired token is refreshed before the request: the server sees no 401.
    wait_until(
        Duration::from_secs(20),
        "the access token to expire",
        || fx.state()["newest_access_valid"] == json!(false),
    );
    let unauthorized = fx.count("/mcp_unauthorized");
    let called = echo(&env, "after expiry");
    assert_eq!(called.stdout.trim(), "after expiry", "{called:?}");
    assert_eq!(fx.count("/grants/refresh_token"), 2);
    assert_eq!(fx.count("/mcp_unauthorized"), unauthorized);

    // A new daemon reads the rotated refresh token from the file.
    env.stop_daemon();
    wait_until(
        Duration::from_secs(20),
        "the access token to expire",
        || fx.state()["newest_access_valid"] == json!(false),
    );
    let called = echo(&env, "after restart");
    assert_eq!(called.stdout.trim(), "after restart", "{called:?}");
    assert_eq!(fx.count("/grants/refresh_token"), 3);
    assert_eq!(fx.count("/refused/refresh"), 0);

    // No token in any log, session or output.
    let mut files = Vec::new();
    files_below(env.home(), &mut files);
    let tokens = fx.tokens();
    assert!(tokens.len() >= 8, "{tokens:?}");
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for token in &tokens {
            assert!(
                !text.contains(token.as_str()),
                "a token is in {}",
                file.display()
            );
        }
    }
    assert!(
        files.iter().any(|f| f.starts_with(env.home().join("logs"))),
        "{files:?}"
    );
    for token in &tokens {
        assert!(!outputs.contains(token.as_str()), "a token was printed");
    }

    // Logout: the file goes, the server needs login again.
    let out = env.cli(&["mcp", "logout", "srv"]);
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("Logged out of srv"), "{out:?}");
    assert!(token_files(&env).is_empty());
    wait_until(DEADLINE, "srv to need login again", || {
        list_line(&env, "srv").contains("needs-login")
    });
    let refused = echo(&env, "hi");
    assert_eq!(refused.code, Some(3), "{refused:?}");
    assert!(
        refused.stderr.contains("synapse mcp login srv"),
        "{refused:?}"
    );
    let again = env.cli(&["mcp", "logout", "srv"]);
    assert!(
        again.stdout.contains("srv had no OAuth tokens"),
        "{again:?}"
    );

    // A server without resource metadata: the origin's authorization server is found and the
    // login completes, but a server that refuses even a fresh token still needs login.
    let bare = login(&env, "bare", "follow", &[]);
    assert_eq!(bare.code, Some(1), "{bare:?}");
    assert!(
        bare.stdout.contains(
            "Logged in to bare, but it did not connect: run `synapse mcp login bare` \
             (the server refused a fresh token)"
        ),
        "{bare:?}"
    );
}

#[test]
fn forged_redirects_and_unfinished_logins_are_refused() {
    let fx = Fixture::start("3600");
    let env = TestEnv::new();
    configure(
        &env,
        json!({"srv": {"type": "http", "url": fx.url("/mcp")}}),
    );
    env.start_daemon();

    // A redirect whose state is not this login's: nothing is exchanged or stored.
    let forged = login(&env, "srv", "bad-state", &[]);
    assert_eq!(forged.code, Some(1), "{forged:?}");
    assert!(
        forged
            .stderr
            .contains("carried a state that does not match this login"),
        "{forged:?}"
    );
    assert!(browser_log(&env, "bad-state").starts_with("400 "));
    assert_eq!(fx.count("/grants/authorization_code"), 0);

    // A code minted for another PKCE challenge: the token endpoint refuses the verifier.
    let swapped = login(&env, "srv", "swap-code", &[]);
    assert_eq!(swapped.code, Some(1), "{swapped:?}");
    assert!(
        swapped
            .stderr
            .contains("refused the authorization code: invalid_grant"),
        "{swapped:?}"
    );
    assert_eq!(fx.count("/refused/pkce"), 1);
    assert_eq!(fx.count("/grants/authorization_code"), 0);
    assert!(token_files(&env).is_empty());

    // Nobody comes back: the login gives up at its timeout and says what to do.
    let started = Instant::now();
    let mut cmd = env.synapse();
    cmd.env("BROWSER", "true")
        .args(["mcp", "login", "srv", "--timeout", "2"]);
    let unfinished = run(&mut cmd);
    assert_eq!(unfinished.code, Some(1), "{unfinished:?}");
    assert!(
        unfinished
            .stderr
            .contains("the login was not completed within 2 s")
            && unfinished
                .stderr
                .contains("run `synapse mcp login srv` again"),
        "{unfinished:?}"
    );
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert!(
        unfinished.stdout.contains(&fx.url("/authorize?")),
        "{unfinished:?}"
    );

    // The daemon is fine after all that: a real login works.
    let done = login(&env, "srv", "follow", &[]);
    assert!(done.success(), "{done:?}");
    assert_eq!(echo(&env, "ok").stdout.trim(), "ok");
}

#[test]
fn login_explains_servers_it_cannot_log_in_to() {
    let env = TestEnv::new();
    configure(
        &env,
        json!({
            "local": {"command": "cat"},
            "keyed": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                      "headers": {"Authorization": "Bearer ${TOKEN:-x}"}},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        }),
    );
    let stdio = env.cli(&["mcp", "login", "local"]);
    assert!(
        stdio.stderr.contains("local is a stdio server"),
        "{stdio:?}"
    );
    let keyed = env.cli(&["mcp", "login", "keyed"]);
    assert!(
        keyed
            .stderr
            .contains("which wins over OAuth: remove that header"),
        "{keyed:?}"
    );
    let unknown = env.cli(&["mcp", "login", "nope"]);
    assert!(
        unknown.stderr.contains("no MCP server named \"nope\""),
        "{unknown:?}"
    );
    let legacy = env.cli(&["mcp", "login", "legacy"]);
    assert!(legacy.stderr.contains("mcp-remote"), "{legacy:?}");
    let listed = list_line(&env, "legacy");
    assert!(
        listed.contains("\"type\": \"http\"") && listed.contains("sse-only"),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_agent_shell_may_not_log_in_or_out() {
    let probe = Command::new(synapse_tests::bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!("Landlock is not available here: no sandboxed shell to test from");
        return;
    }
    let fx = Fixture::start("3600");
    let env = TestEnv::new();
    configure(
        &env,
        json!({"srv": {"type": "http", "url": fx.url("/mcp")}}),
    );
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    let synapse = synapse_tests::bin("synapse").display().to_string();
    let browser = browser(&env).display().to_string();
    let fake = synapse_tests::fake_llm::FakeLlm::start(
        synapse_tests::fake_llm::Script::new()
            .tool_call(format!(
                "S={synapse}; BROWSER={browser} $S mcp login srv --timeout 5; $S mcp logout srv; echo tried"
            ))
            .text("tried"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", env.root().join("tmp"))
        .args(["run", "--yes", "log in"]);
    let run = synapse_tests::run_async(cmd).await;
    assert!(run.success(), "{run:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains(
            "logging in to an MCP server is not available from inside a sandboxed agent shell"
        ),
        "{result}"
    );
    assert!(
        result.contains(
            "logging out of an MCP server is not available from inside a sandboxed agent shell"
        ),
        "{result}"
    );
    assert_eq!(fx.count("/authorize_requests"), 0);
    assert!(token_files(&env).is_empty());
}
