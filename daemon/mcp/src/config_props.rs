//! Properties of the MCP config loader (`mcp_servers.json`, `.mcp.json`): any text is answered
//! without a panic; every entry is either a usable server or one problem that names the file,
//! the entry's line and what was wrong; a bad entry never takes a good one down; a usable
//! server always has a command or an http(s) URL and a name that can be part of a command.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

const FILE: &str = "/p/mcp_servers.json";

fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/u".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec![0.0, -1.0, 0.5, 30.0, 1e12]).prop_map(Value::from),
        prop::sample::select(vec![
            "node",
            "",
            " ",
            "stdio",
            "http",
            "sse",
            "streamable-http",
            "ws",
            "http://127.0.0.1:1/mcp",
            "https://example.invalid/mcp",
            "ftp://x",
            "${HOME}/srv",
            "${NOPE}",
            "${NOPE:-d}",
            "${",
            "${a b}",
            "read_*",
            "[",
            "**",
        ])
        .prop_map(Value::from),
        Just(json!(["a", 1, "${HOME}"])),
        Just(json!([{"x": 1}])),
        Just(json!({"K": "v", "N": 2})),
        Just(json!({"K": ["v"]})),
    ]
}

fn entry() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "disabled",
        "enabled",
        "allowedTools",
        "disabledTools",
        "startupTimeoutSec",
        "toolTimeoutSec",
        "other",
    ]);
    prop_oneof![
        8 => prop::collection::vec((key, field_value()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        1 => field_value(),
    ]
}

fn server_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_-]{0,10}",
        Just(String::new()),
        Just("a/b".to_string()),
        Just("a:b".to_string()),
        Just("tab\there".to_string()),
        Just("x".repeat(65)),
        "\\PC{1,8}",
    ]
}

fn document() -> impl Strategy<Value = String> {
    let servers = prop::collection::vec((server_name(), entry()), 0..5)
        .prop_map(|s| Value::Object(s.into_iter().collect::<Map<_, _>>()));
    prop_oneof![
        6 => (servers, prop::sample::select(vec!["mcpServers", "servers"]), any::<bool>()).prop_map(|(s, key, pretty)| {
            let doc = json!({ key: s });
            if pretty { serde_json::to_string_pretty(&doc).unwrap_or_default() } else { doc.to_string() }
        }),
        1 => Just(json!({"mcpServers": []}).to_string()),
        1 => Just("[]".to_string()),
        1 => "\\PC{0,60}",
    ]
}

proptest! {
    #[test]
    fn any_file_is_answered_and_every_entry_accounted_for(text in document()) {
        let mut config = McpConfig::default();
        config.merge_text(Path::new(FILE), &text, &lookup);
        for p in config.problems.iter().chain(config.invalid.values()) {
            let shown = p.to_string();
            prop_assert!(shown.starts_with(FILE), "{}", shown);
            prop_assert!(!p.message.trim().is_empty(), "{}", shown);
        }
        for (name, problem) in &config.invalid {
            prop_assert!(!config.servers.contains_key(name));
            prop_assert_eq!(problem.server.as_deref(), Some(name.as_str()));
            if problem.line > 0 {
                let line = text.lines().nth(problem.line - 1).unwrap_or_default();
                let quoted = serde_json::to_string(name).unwrap_or_default();
                prop_assert!(line.contains(&quoted), "line {} of {:?} is not entry {}", problem.line, text, name);
            }
        }
        for (name, server) in &config.servers {
            let usable = !name.is_empty() && !name.contains(['/', ':']) && !name.chars().any(char::is_control);
            prop_assert!(usable, "server name {:?}", name);
            match &server.transport {
                Transport::Stdio { command, .. } => prop_assert!(!command.trim().is_empty(), "{:?}", server),
                Transport::Http { url, .. } => {
                    prop_assert!(url.starts_with("http://") || url.starts_with("https://"), "{}", url);
                }
            }
            prop_assert!(!server.startup_timeout.is_zero() && !server.call_timeout.is_zero());
        }
    }

    #[test]
    fn a_bad_entry_never_takes_a_good_one_down(bad in entry(), bad_name in server_name()) {
        prop_assume!(bad_name != "good");
        let doc = json!({"mcpServers": {"good": {"command": "node", "args": ["s.js"]}, bad_name.clone(): bad}});
        let mut config = McpConfig::default();
        config.merge_text(Path::new(FILE), &serde_json::to_string_pretty(&doc).unwrap_or_default(), &lookup);
        prop_assert!(config.servers.contains_key("good"), "{:?}", config);
        prop_assert!(config.problems.is_empty(), "{:?}", config.problems);
        prop_assert_eq!(config.servers.len() + config.invalid.len(), 2);
    }
}
