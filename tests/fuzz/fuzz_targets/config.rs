//! The config loaders: settings.json, trusted_folders.json, mcp_servers.json / .mcp.json and
//! the permission rules inside settings. No input may panic, and every refusal names its file.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use synapse_mcp::config::McpConfig;
use synapse_permissions::{Pattern, RuleSet, default_mode, writable_dirs};
use synapse_shared::{settings, trust};

fuzz_target!(|text: &str| {
    if let Err(e) = settings::parse(Path::new("/h/settings.json"), text) {
        assert!(e.to_string().starts_with("/h/settings.json"), "{e}");
    }
    if let Err(e) = trust::parse(Path::new("/h/trusted_folders.json"), text) {
        assert!(e.to_string().starts_with("/h/trusted_folders.json"), "{e}");
    }
    let mut mcp = McpConfig::default();
    mcp.merge_text(Path::new("/p/.mcp.json"), text, &|name| {
        (name == "HOME").then(|| "/home/u".to_string())
    });
    for problem in mcp.problems.iter().chain(mcp.invalid.values()) {
        assert!(problem.to_string().starts_with("/p/.mcp.json"), "{problem}");
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let permissions = value.get("permissions").unwrap_or(&value);
        let (_, mut problems) = RuleSet::from_json(permissions, "fuzz");
        let _ = default_mode(permissions, &mut problems);
        let _ = writable_dirs(permissions, Path::new("/home/u"), &mut problems);
        assert!(problems.iter().all(|p| p.starts_with("permissions")));
    }
    let _ = Pattern::parse(text);
});
