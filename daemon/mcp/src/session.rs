//! Session-scoped MCP servers: the servers a session was opened with (`synapse run
//! --mcp-config`, an editor's `mcpServers`), each entry in Claude Code's `.mcp.json` shape.
//!
//! They run for that session alone, through the same machinery as any server: their own
//! [`McpManager`] (scope [`Scope::Session`]) whose config is the entries it was given (never a
//! file, so never in the user's or a project's config and never in `synapse mcp list`), with
//! wrappers in the session's own folder `$SYNAPSE_HOME/mcp/sessions/<id>/bin` — first on that
//! session's PATH only, each naming the session (`synapse mcp call --session <id>`). No
//! approval: whoever opened the session named them; they still run under the MCP sandbox like
//! any server. `${VAR}` expands from the opening client's environment (the daemon's for unset
//! names); a stdio server starts in the session's folder unless it names its own `cwd`, and is
//! told the session's workspace as its root. [`super::McpHub::open_session`] starts them and
//! [`super::McpHub::close_session`] stops them ([`super::hub`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::config::{ConfigProblem, McpConfig};
use super::manager::{EnvLookup, McpManager, McpOptions, Scope};
use super::wrappers::WrapperWriter;

/// What a session server's entry names as its source (in listings and problems).
pub const SESSION_SOURCE: &str = "(session MCP config)";

/// One server a session was opened with: its name and its entry as JSON text.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionServerEntry {
    pub name: String,
    /// The entry's object (`{"command": …, "args": […]}`, `{"type": "http", "url": …}`).
    pub config_json: String,
}

/// The config of one session's own servers.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionScope {
    /// The session's id (also the name of its folder).
    pub id: String,
    /// The session's folder: stdio servers start there.
    pub cwd: PathBuf,
    pub servers: Vec<SessionServerEntry>,
    /// The opening client's environment, for `${VAR}`.
    pub env: HashMap<String, String>,
}

impl std::fmt::Debug for SessionScope {
    // The environment may hold secrets: never in a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionScope")
            .field("id", &self.id)
            .field("cwd", &self.cwd)
            .field(
                "servers",
                &self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What opening a session asks of the MCP layer.
#[derive(Clone)]
pub struct SessionMcpRequest {
    pub id: String,
    pub cwd: PathBuf,
    /// The session's workspace root, told to its servers as their root (else `cwd`).
    pub root: Option<PathBuf>,
    pub servers: Vec<SessionServerEntry>,
    pub env: HashMap<String, String>,
    /// Only these servers: the user's and the project's are not offered to the session.
    pub strict: bool,
}

/// The folder of session `id`'s wrappers (`bin/`) and their manifest.
pub fn session_dir(mcp_dir: &Path, id: &str) -> PathBuf {
    mcp_dir.join("sessions").join(id)
}

/// True when `id` can name a folder: a session id as the daemon makes them.
pub(crate) fn is_folder_name(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The session's entries as a config: each parsed as a config file's entry would be; one that
/// is not JSON or not a valid entry is listed as invalid with why, the others still load.
pub(crate) fn load(scope: &SessionScope, daemon_env: &EnvLookup) -> McpConfig {
    let lookup = |k: &str| scope.env.get(k).cloned().or_else(|| daemon_env(k));
    let source = PathBuf::from(SESSION_SOURCE);
    let mut config = McpConfig::default();
    for entry in &scope.servers {
        let parsed = serde_json::from_str::<Value>(&entry.config_json)
            .map_err(|e| format!("not valid JSON ({e})"))
            .and_then(|value| {
                super::config::parse_entry(&entry.name, &value, Some(&scope.cwd), &source, &lookup)
            });
        match parsed {
            Ok(server) => {
                config.invalid.remove(&entry.name);
                config.servers.insert(
                    entry.name.clone(),
                    super::project_config::in_project(server, &scope.cwd),
                );
            }
            Err(message) => {
                config.servers.remove(&entry.name);
                config.invalid.insert(
                    entry.name.clone(),
                    ConfigProblem {
                        path: source.clone(),
                        line: 0,
                        column: 0,
                        server: Some(entry.name.clone()),
                        message,
                    },
                );
            }
        }
    }
    config
}

impl McpManager {
    /// The manager of one session's own servers: wrappers (naming the session) in its folder
    /// below `$SYNAPSE_HOME/mcp/sessions/`, servers told `root` (else the session's folder).
    pub(crate) fn for_session(
        opts: McpOptions,
        scope: SessionScope,
        root: Option<PathBuf>,
    ) -> McpManager {
        let dir = session_dir(&opts.mcp_dir, &scope.id);
        let writer = WrapperWriter::new(dir.join("bin"), &dir, opts.client_bin.clone())
            .for_session(&scope.id);
        let announced = root.unwrap_or_else(|| scope.cwd.clone());
        let roots: super::connection::Roots = Some(Arc::new(move || vec![announced.clone()]));
        Self::with_scope(opts, Scope::Session(Arc::new(scope)), writer, roots)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::config::Transport;

    fn scope(entries: &[(&str, &str)]) -> SessionScope {
        SessionScope {
            id: "s1".into(),
            cwd: PathBuf::from("/work/app"),
            servers: entries
                .iter()
                .map(|(n, j)| SessionServerEntry {
                    name: (*n).into(),
                    config_json: (*j).into(),
                })
                .collect(),
            env: HashMap::from([("TOKEN".to_string(), "from-client".to_string())]),
        }
    }

    #[test]
    fn entries_expand_from_the_client_and_start_in_the_session_folder() {
        let daemon: EnvLookup = Arc::new(|k| (k == "HOME").then(|| "/home/u".to_string()));
        let config = load(
            &scope(&[(
                "mem",
                r#"{"command": "./srv", "args": ["${TOKEN}", "${HOME}"]}"#,
            )]),
            &daemon,
        );
        let Transport::Stdio {
            command, args, cwd, ..
        } = &config.servers["mem"].transport
        else {
            panic!("stdio expected");
        };
        assert_eq!(command, "/work/app/./srv");
        assert_eq!(args, &["from-client", "/home/u"]);
        assert_eq!(cwd.as_deref(), Some(Path::new("/work/app")));
    }

    #[test]
    fn a_bad_entry_is_named_and_the_others_load() {
        let daemon: EnvLookup = Arc::new(|_| None);
        let config = load(
            &scope(&[
                ("broken", r#"{"args": []}"#),
                ("notjson", "{"),
                ("ok", r#"{"type": "http", "url": "http://127.0.0.1:1/mcp"}"#),
            ]),
            &daemon,
        );
        assert!(config.servers.contains_key("ok"));
        assert!(
            config.invalid["broken"].message.contains("\"command\""),
            "{}",
            config.invalid["broken"].message
        );
        assert!(config.invalid["notjson"].message.contains("not valid JSON"));
    }

    #[test]
    fn only_plain_ids_name_a_folder() {
        assert!(is_folder_name("0f9c2a-11_x"));
        assert!(!is_folder_name("../x"));
        assert!(!is_folder_name(""));
    }
}
