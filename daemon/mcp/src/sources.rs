//! MCP servers other clients already configured, read beside Synapse's own files so a Claude
//! Code or VS Code user finds their servers without copying them:
//!
//! - `~/.claude.json`: the user-level `mcpServers` map and the `mcpServers` of the entry under
//!   `projects` whose key is the current project folder (as Claude Code writes it);
//! - `<project>/.vscode/mcp.json`: the `servers` map (`${workspaceFolder}` is the project);
//! - Codex's `~/.codex/config.toml` (`$CODEX_HOME`): its `[mcp_servers.*]` tables ([`super::codex`]).
//!
//! They rank below Synapse's own files: a server named in `mcp_servers.json` or `.mcp.json`
//! wins. Each entry keeps the file it came from as its source, which `synapse mcp list` shows.
//! A file that does not parse is reported as a problem with its path, like Synapse's own.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::config::McpConfig;

/// Claude Code's user file, relative to the home folder.
pub const CLAUDE_JSON: &str = ".claude.json";
/// VS Code's workspace MCP file, relative to the project folder.
pub const VSCODE_MCP_JSON: &str = ".vscode/mcp.json";

/// Adds the servers of the other clients' files to `config`, below every server it has: with
/// `project`, that project's layer (its `~/.claude.json` entry, its `.vscode/mcp.json`);
/// without, the user's layer (`~/.claude.json`'s own map, Codex).
pub fn add_foreign(
    config: &mut McpConfig,
    home: Option<&Path>,
    project: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
) {
    let mut foreign = McpConfig::default();
    if let Some(home) = home {
        merge_claude_json(&mut foreign, &home.join(CLAUDE_JSON), project, lookup);
        if project.is_none() {
            merge_codex_toml(
                &mut foreign,
                &super::codex::config_file(home, lookup("CODEX_HOME")),
                lookup,
            );
        }
    }
    if let Some(project) = project {
        let path = project.join(VSCODE_MCP_JSON);
        let root = project.to_string_lossy().into_owned();
        let vscode_lookup = |k: &str| match k {
            "workspaceFolder" => Some(root.clone()),
            other => lookup(other),
        };
        if let Some(text) = read_optional(&path, &mut foreign) {
            foreign.files.push(path.clone());
            foreign.merge_text(&path, &text, &vscode_lookup);
        }
    }
    for (name, server) in foreign.servers {
        if !config.servers.contains_key(&name) && !config.invalid.contains_key(&name) {
            config.servers.insert(name, server);
        }
    }
    for (name, problem) in foreign.invalid {
        if !config.servers.contains_key(&name) && !config.invalid.contains_key(&name) {
            config.invalid.insert(name, problem);
        }
    }
    config.problems.extend(foreign.problems);
    config.files.extend(foreign.files);
}

/// `~/.claude.json`: its user-level servers, or (with `project`) that project's own entry.
fn merge_claude_json(
    config: &mut McpConfig,
    path: &Path,
    project: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
) {
    let Some(text) = read_optional(path, config) else {
        return;
    };
    let doc: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(_) => {
            // Let the shared reader report the position of the syntax error.
            config.merge_text(path, &text, lookup);
            return;
        }
    };
    let mut servers = Map::new();
    match project {
        None => {
            if let Some(user) = doc.get("mcpServers").and_then(Value::as_object) {
                servers.extend(user.clone());
            }
        }
        Some(project) => {
            if let Some(entry) = project_entry(&doc, project)
                && let Some(own) = entry.get("mcpServers").and_then(Value::as_object)
            {
                servers.extend(own.clone());
            }
        }
    }
    if servers.is_empty() {
        return;
    }
    config.files.push(path.to_path_buf());
    // Only the server maps are handed on: the rest of the file (history, settings) is not ours.
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap_or_default();
    config.merge_text(path, &text, lookup);
}

/// Codex's `config.toml`: its `[mcp_servers.*]`, below the servers already found.
fn merge_codex_toml(config: &mut McpConfig, path: &Path, lookup: &dyn Fn(&str) -> Option<String>) {
    let Some(text) = read_optional(path, config) else {
        return;
    };
    let doc = match super::codex::to_servers_json(&text) {
        Ok(doc) => doc,
        Err(message) => {
            config.problems.push(super::config::ConfigProblem {
                path: path.to_path_buf(),
                line: 0,
                column: 0,
                server: None,
                message,
            });
            return;
        }
    };
    let mut fresh = Map::new();
    for (name, entry) in doc["mcpServers"].as_object().into_iter().flatten() {
        if !config.servers.contains_key(name) && !config.invalid.contains_key(name) {
            fresh.insert(name.clone(), entry.clone());
        }
    }
    if fresh.is_empty() {
        return;
    }
    config.files.push(path.to_path_buf());
    let text = serde_json::to_string_pretty(&json!({ "mcpServers": fresh })).unwrap_or_default();
    config.merge_text(path, &text, lookup);
}

/// The `projects` entry for `project`, by exact key or by the same folder after resolving links.
fn project_entry<'a>(doc: &'a Value, project: &Path) -> Option<&'a Value> {
    let projects = doc.get("projects")?.as_object()?;
    if let Some(entry) = projects.get(project.to_string_lossy().as_ref()) {
        return Some(entry);
    }
    let wanted = canonical(project);
    projects
        .iter()
        .find(|(key, _)| canonical(Path::new(key)) == wanted)
        .map(|(_, entry)| entry)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The file's text; `None` when it is missing (silently) or unreadable (reported).
fn read_optional(path: &Path, config: &mut McpConfig) -> Option<String> {
    match synapse_shared::bounded::read_text(path, None, synapse_shared::bounded::CONFIG_MAX_BYTES)
    {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            config.problems.push(super::config::ConfigProblem {
                path: path.to_path_buf(),
                line: 0,
                column: 0,
                server: None,
                message: format!("cannot read: {e}"),
            });
            None
        }
    }
}
