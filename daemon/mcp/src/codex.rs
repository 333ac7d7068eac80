//! Codex CLI's MCP servers: the `[mcp_servers.<name>]` tables of `~/.codex/config.toml` (or
//! `$CODEX_HOME/config.toml`), turned into Synapse's own entry shape so a Codex user finds their
//! servers without copying them. Ranked below Synapse's and Claude Code's files.
//!
//! Mapping: `command`/`args`/`env`/`cwd` as they are; `url` → an HTTP server with `http_headers`,
//! `env_http_headers` (header → variable, as `${VAR}`) and `bearer_token_env_var` (an
//! `Authorization: Bearer ${VAR}` header); `startup_timeout_sec`/`tool_timeout_sec`;
//! `enabled_tools`/`disabled_tools`; `enabled = false` keeps it listed but disabled.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Codex's config file for `home` (the user's home folder) and the client's `CODEX_HOME`.
pub fn config_file(home: &Path, codex_home: Option<String>) -> PathBuf {
    match codex_home.filter(|h| !h.is_empty()) {
        Some(h) => PathBuf::from(h).join("config.toml"),
        None => home.join(".codex").join("config.toml"),
    }
}

/// The `mcpServers` JSON document equivalent to `text` (a config.toml), or why it cannot be read.
pub fn to_servers_json(text: &str) -> Result<Value, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut servers = Map::new();
    let Some(table) = doc.get("mcp_servers") else {
        return Ok(json!({ "mcpServers": servers }));
    };
    let table = table
        .as_table()
        .ok_or("`mcp_servers` must be a table of [mcp_servers.<name>] entries")?;
    for (name, entry) in table {
        let Some(entry) = entry.as_table() else {
            return Err(format!("[mcp_servers.{name}] must be a table"));
        };
        servers.insert(name.clone(), convert(entry));
    }
    Ok(json!({ "mcpServers": servers }))
}

fn convert(entry: &toml::Table) -> Value {
    let json_of = |v: &toml::Value| serde_json::to_value(v).unwrap_or(Value::Null);
    let mut out = Map::new();
    if let Some(url) = entry.get("url") {
        out.insert("type".into(), json!("http"));
        out.insert("url".into(), json_of(url));
        let mut headers = Map::new();
        if let Some(h) = entry.get("http_headers").and_then(toml::Value::as_table) {
            for (k, v) in h {
                headers.insert(k.clone(), json_of(v));
            }
        }
        if let Some(h) = entry
            .get("env_http_headers")
            .and_then(toml::Value::as_table)
        {
            for (k, v) in h {
                if let Some(var) = v.as_str() {
                    headers.insert(k.clone(), json!(format!("${{{var}}}")));
                }
            }
        }
        if let Some(var) = entry
            .get("bearer_token_env_var")
            .and_then(toml::Value::as_str)
        {
            headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
        }
        if !headers.is_empty() {
            out.insert("headers".into(), Value::Object(headers));
        }
    }
    for (from, to) in [
        ("command", "command"),
        ("args", "args"),
        ("env", "env"),
        ("cwd", "cwd"),
        ("startup_timeout_sec", "startupTimeoutSec"),
        ("tool_timeout_sec", "toolTimeoutSec"),
        ("enabled_tools", "allowedTools"),
        ("disabled_tools", "disabledTools"),
        ("enabled", "enabled"),
    ] {
        if let Some(v) = entry.get(from) {
            out.insert(to.into(), json_of(v));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn codex_tables_become_entries() {
        let text = r#"
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]
env = { "API_KEY" = "k" }
startup_timeout_sec = 20
enabled_tools = ["search"]

[mcp_servers.remote]
url = "https://example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "KEY_VAR" }
enabled = false
"#;
        let v = to_servers_json(text).unwrap();
        assert_eq!(
            v["mcpServers"]["docs"],
            json!({"command": "npx", "args": ["-y", "docs-server"], "env": {"API_KEY": "k"},
                   "startupTimeoutSec": 20, "allowedTools": ["search"]})
        );
        assert_eq!(
            v["mcpServers"]["remote"],
            json!({"type": "http", "url": "https://example.com/mcp",
                   "headers": {"X-Team": "core", "X-Key": "${KEY_VAR}",
                               "Authorization": "Bearer ${REMOTE_TOKEN}"},
                   "enabled": false})
        );
        assert!(
            to_servers_json("model = \"x\"\n").unwrap()["mcpServers"]
                .as_object()
                .unwrap()
                .is_empty()
        );
        assert!(to_servers_json("[mcp_servers\n").is_err());
    }
}
