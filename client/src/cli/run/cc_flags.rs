//! The `claude -p` flags whose values the client reads before it opens the session, each with
//! Claude Code's value syntax: `--mcp-config` (files or JSON strings, several), `--settings` (a
//! file or a JSON string), `--add-dir` (folders, several), `--session-id` (a UUID) and
//! `--fallback-model` (comma-separated). A bad value stops the run before anything is sent,
//! naming the flag and the value; the daemon checks what it is given again.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};
use synapse_shared::proto::SessionMcpServer;

/// A flag's value that is JSON rather than a file name (Claude Code's test too: it starts `{`).
fn is_inline_json(value: &str) -> bool {
    value.trim_start().starts_with('{')
}

/// Reads a flag's value as a JSON object: inline JSON, else the file it names (relative to
/// `cwd`). `flag` names the flag in errors.
fn json_object(flag: &str, value: &str, cwd: &Path) -> anyhow::Result<Map<String, Value>> {
    let (text, origin) = if is_inline_json(value) {
        (value.to_string(), format!("{flag} {value:?}"))
    } else {
        let path = cwd.join(value);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{flag}: cannot read {}: give a JSON file or a JSON object string",
                path.display()
            )
        })?;
        (text, format!("{flag} {}", path.display()))
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => bail!("{origin}: expected a JSON object, got {}", kind(&other)),
        Err(e) => bail!(
            "{origin}: not valid JSON ({e}); write it as {}",
            if flag == "--settings" {
                r#"'{"model": "…"}'"#
            } else {
                r#"'{"mcpServers": {"name": {"command": "…", "args": []}}}'"#
            }
        ),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `--mcp-config`: every server of every value, in order (a later value's server replaces an
/// earlier one of the same name, as Claude Code merges them).
pub fn mcp_servers(values: &[String], cwd: &Path) -> anyhow::Result<Vec<SessionMcpServer>> {
    let mut servers: Vec<SessionMcpServer> = Vec::new();
    for value in values {
        let map = json_object("--mcp-config", value, cwd)?;
        let Some(list) = map.get("mcpServers").or_else(|| map.get("servers")) else {
            bail!(
                "--mcp-config {value}: no \"mcpServers\" object; write \
                 {{\"mcpServers\": {{\"name\": {{\"command\": \"…\"}}}}}}"
            );
        };
        let Value::Object(list) = list else {
            bail!(
                "--mcp-config {value}: \"mcpServers\" must be an object of servers, got {}",
                kind(list)
            );
        };
        for (name, config) in list {
            let Value::Object(entry) = config else {
                bail!(
                    "--mcp-config {value}: server {name:?} must be an object such as \
                     {{\"command\": \"…\", \"args\": []}}, got {}",
                    kind(config)
                );
            };
            if let Err(why) = check_entry(entry) {
                bail!("--mcp-config {value}: server {name:?}: {why}");
            }
            servers.retain(|s| &s.name != name);
            servers.push(SessionMcpServer {
                name: name.clone(),
                config_json: config.to_string(),
            });
        }
    }
    Ok(servers)
}

/// What a server entry must have before it is sent: a program to start or an address (the
/// daemon reads the rest as it reads `.mcp.json`, and says what it cannot use).
fn check_entry(entry: &Map<String, Value>) -> Result<(), String> {
    let field = |key: &str| match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(format!("\"{key}\" must be a string, got {}", kind(other))),
    };
    let transport = field("type")?.unwrap_or("");
    match (field("command")?, field("url")?) {
        (Some(command), _) if command.trim().is_empty() => Err("\"command\" is empty".into()),
        (Some(_), _) | (None, Some(_)) => Ok(()),
        (None, None)
            if matches!(
                transport,
                "http" | "sse" | "streamable-http" | "streamableHttp"
            ) =>
        {
            Err(format!("a {transport} server needs \"url\""))
        }
        (None, None) => Err(
            "missing \"command\": give the program to start (\"command\": \"npx\", \"args\": […]) \
             or the \"url\" of an http server"
                .into(),
        ),
    }
}

/// `--settings`: the settings object as JSON text.
pub fn settings(value: &str, cwd: &Path) -> anyhow::Result<String> {
    Ok(Value::Object(json_object("--settings", value, cwd)?).to_string())
}

/// `--session-id`: must be a UUID, as in Claude Code.
pub fn session_id(id: &str) -> anyhow::Result<()> {
    if !synapse_shared::uuid_text::is_uuid(id) {
        bail!(
            "--session-id {id:?}: invalid session ID, it must be a valid UUID \
             (such as 123e4567-e89b-12d3-a456-426614174000)"
        );
    }
    Ok(())
}

/// `--add-dir`: each folder made absolute (relative to `cwd`); one that is not a folder stops
/// the run.
pub fn add_dirs(values: &[String], cwd: &Path) -> anyhow::Result<Vec<String>> {
    values
        .iter()
        .map(|value| {
            let path: PathBuf = cwd.join(value);
            match std::fs::canonicalize(&path) {
                Ok(dir) if dir.is_dir() => Ok(dir.display().to_string()),
                Ok(_) => bail!("--add-dir {}: not a directory", path.display()),
                Err(e) => bail!("--add-dir {}: {e}", path.display()),
            }
        })
        .collect()
}

/// `--fallback-model a,b`: the models in order, empty names dropped.
pub fn fallback_models(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn mcp_configs_come_from_json_strings_and_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.json"),
            r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#,
        )
        .unwrap();
        let servers = mcp_servers(
            &[
                "m.json".into(),
                r#"{"mcpServers": {"a": {"command": "z"}}}"#.into(),
            ],
            dir.path(),
        )
        .unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(servers[1].config_json, r#"{"command":"z"}"#);
    }

    #[test]
    fn bad_values_name_the_flag_and_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let e = mcp_servers(&["missing.json".into()], dir.path()).unwrap_err();
        assert!(format!("{e:#}").contains("missing.json"), "{e:#}");
        let e = mcp_servers(&["{bad".into()], dir.path()).unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
        let e = mcp_servers(&[r#"{"mcpServers": {"a": 1}}"#.into()], dir.path()).unwrap_err();
        assert!(e.to_string().contains("server \"a\""), "{e}");
        let e = mcp_servers(
            &[r#"{"mcpServers": {"a": {"args": []}}}"#.into()],
            dir.path(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("server \"a\": missing \"command\""),
            "{e}"
        );
        let e = mcp_servers(
            &[r#"{"mcpServers": {"a": {"type": "http"}}}"#.into()],
            dir.path(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("needs \"url\""), "{e}");
        let e = settings("[1]", dir.path()).unwrap_err();
        assert!(format!("{e:#}").contains("--settings"), "{e:#}");
        let e = settings("{", dir.path()).unwrap_err();
        assert!(e.to_string().contains("--settings"), "{e}");
        assert!(session_id("nope").is_err());
        let e = add_dirs(&["nowhere".into()], dir.path()).unwrap_err();
        assert!(e.to_string().contains("nowhere"), "{e}");
    }

    #[test]
    fn fallback_models_split_on_commas() {
        assert_eq!(
            fallback_models(&["a, b".into(), "c".into()]),
            ["a", "b", "c"]
        );
    }
}
