use super::*;
use std::collections::HashMap;

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn load(text: &str, vars: &[(&str, &str)]) -> McpConfig {
    let mut c = McpConfig::default();
    c.merge_text(Path::new("/p/mcp_servers.json"), text, &env(vars));
    c
}

#[test]
fn stdio_and_http_entries_with_expansion() {
    let c = load(
        r#"{"mcpServers": {
            "fs": {"command": "node", "args": ["${ROOT:-/srv}", "x"], "env": {"K": "${TOKEN}"}, "cwd": "sub"},
            "web": {"type": "http", "url": "http://127.0.0.1:${PORT:-8080}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "bare": {"url": "https://example.invalid/mcp", "disabled": true, "toolTimeoutSec": 0.5}
        }}"#,
        &[("TOKEN", "t0k")],
    );
    assert!(c.problems.is_empty() && c.invalid.is_empty(), "{c:?}");
    let fs = &c.servers["fs"];
    assert_eq!(
        fs.transport,
        Transport::Stdio {
            command: "node".into(),
            args: vec!["/srv".into(), "x".into()],
            env: [("K".to_string(), "t0k".to_string())].into(),
            cwd: Some(PathBuf::from("/p/sub")),
        }
    );
    assert!(fs.enabled);
    assert_eq!(fs.startup_timeout, STARTUP_TIMEOUT_DEFAULT);
    let web = &c.servers["web"];
    assert_eq!(
        web.transport,
        Transport::Http {
            url: "http://127.0.0.1:8080/mcp".into(),
            headers: [("Authorization".to_string(), "Bearer t0k".to_string())].into(),
        }
    );
    assert!(!c.servers["bare"].enabled);
    assert_eq!(c.servers["bare"].call_timeout, Duration::from_millis(500));
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let c = load(
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
        &[],
    );
    assert_eq!(c.problems.len(), 1);
    let msg = c.problems[0].to_string();
    assert!(msg.starts_with("/p/mcp_servers.json:3:"), "{msg}");
    assert!(msg.contains("invalid JSON"), "{msg}");
}

#[test]
fn one_bad_entry_never_stops_the_others() {
    let c = load(
        r#"{"servers": {
  "good": {"command": "a"},
  "unset": {"command": "${MISSING}"},
  "sse": {"type": "sse", "url": "http://x/sse"},
  "both": {"command": "a", "url": "http://x"},
  "args": {"command": "a", "args": "not-a-list"},
  "glob": {"command": "a", "allowedTools": ["[x"]}
}}"#,
        &[],
    );
    assert_eq!(c.servers.keys().collect::<Vec<_>>(), vec!["good"]);
    assert_eq!(c.invalid.len(), 5);
    let unset = c.invalid["unset"].to_string();
    assert!(unset.starts_with("/p/mcp_servers.json:3: "), "{unset}");
    assert!(unset.contains("MISSING is not set"), "{unset}");
    assert!(
        c.invalid["sse"]
            .message
            .contains("unsupported transport \"sse\"")
    );
    assert!(
        c.invalid["args"]
            .message
            .contains("expected an array of strings for \"args\"")
    );
}

#[test]
fn later_files_win_by_name_and_missing_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("home");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        user.join(USER_CONFIG_FILE),
        r#"{"mcpServers":{"a":{"command":"user-a"},"b":{"command":"user-b"}}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers":{"a":{"command":"proj-a"}}}"#,
    )
    .unwrap();
    let files = config_files(&user, Some(&project));
    let c = McpConfig::load(&files, &env(&[]));
    assert_eq!(c.files.len(), 2);
    let cmd = |n: &str| match &c.servers[n].transport {
        Transport::Stdio { command, .. } => command.clone(),
        Transport::Http { url, .. } => url.clone(),
    };
    assert_eq!(cmd("a"), "proj-a");
    assert_eq!(cmd("b"), "user-b");
}

#[test]
fn reconnect_only_when_the_connection_changes() {
    let c1 = load(
        r#"{"mcpServers":{"a":{"command":"x","allowedTools":["r*"]}}}"#,
        &[],
    );
    let c2 = load(r#"{"mcpServers":{"a":{"command":"x"}}}"#, &[]);
    let c3 = load(r#"{"mcpServers":{"a":{"command":"y"}}}"#, &[]);
    assert!(!c1.servers["a"].needs_reconnect(&c2.servers["a"]));
    assert!(c2.servers["a"].needs_reconnect(&c3.servers["a"]));
}

#[test]
fn a_legacy_sse_entry_is_refused_with_both_ways_out() {
    let c = load(
        r#"{"mcpServers":{"old":{"type":"sse","url":"https://x.example.com/sse"}}}"#,
        &[],
    );
    let msg = &c.invalid["old"].message;
    assert!(msg.contains("has no client for it"), "{msg}");
    assert!(msg.contains("set \"type\": \"http\""), "{msg}");
    assert!(
        msg.contains("mcp-remote") && msg.contains("sse-only"),
        "{msg}"
    );
}

#[test]
fn the_oauth_object_is_read_expanded_and_part_of_the_connection() {
    let c1 = load(
        r#"{"mcpServers":{"a":{"type":"http","url":"https://x.example.com/mcp",
            "oauth":{"clientId":"${CID}","callbackPort":8123}}}}"#,
        &[("CID", "client-7")],
    );
    let oauth = c1.servers["a"].oauth.clone().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("client-7"));
    assert_eq!(oauth.callback_port, Some(8123));
    let c2 = load(
        r#"{"mcpServers":{"a":{"type":"http","url":"https://x.example.com/mcp"}}}"#,
        &[],
    );
    assert!(c1.servers["a"].needs_reconnect(&c2.servers["a"]));
    let bad = load(
        r#"{"mcpServers":{"a":{"type":"http","url":"https://x.example.com/mcp","oauth":{"callbackPort":"x"}}}}"#,
        &[],
    );
    assert!(
        bad.invalid["a"].message.contains("oauth.callbackPort"),
        "{:?}",
        bad.invalid
    );
}

#[test]
fn add_json_entries_are_checked_naming_the_field() {
    let env = |_: &str| None;
    let bad = |v: serde_json::Value| validate_entry("x", &v, &env).unwrap_err();
    assert!(bad(serde_json::json!({"command": 5})).contains("\"command\""));
    assert!(bad(serde_json::json!({"command": "n", "env": {"A": []}})).contains("env.A"));
    assert!(
        bad(serde_json::json!({"url": "http://h/mcp", "headers": "x"})).contains("\"headers\"")
    );
    assert!(bad(serde_json::json!({"command": "n", "args": ["${NOPE}"]})).starts_with("args: "));
    let ok = validate_entry(
        "x",
        &serde_json::json!({"command": "n", "args": ["a"]}),
        &env,
    );
    assert_eq!(ok.unwrap().transport.kind(), "stdio");
}
