//! A session's own MCP servers, wired when it opens (part of the assembly, beside `state.rs`).
//!
//! Whoever opens a session may give it MCP servers of its own (`synapse run --mcp-config`, an
//! editor's `mcpServers` through the same `OpenSession` field) and make it strict
//! (`--strict-mcp-config`). When the session's dependencies are built, [`start`] hands them to
//! the MCP hub ([`synapse_mcp::McpHub::open_session`]), waits until each is up or has failed —
//! so the session's first prompt lists their tools and its user hears at once which did not
//! start — and gives back [`SessionTools`]: the folder of their wrappers, first on the
//! session's PATH, and a hold whose last copy, dropped with the session and its shells, stops
//! them. Nothing here depends on which front end opened the session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use synapse_mcp::McpHub;
use synapse_mcp::session::{SessionMcpRequest, SessionServerEntry};

use crate::agent::sessions::OwnMcpServers;
use crate::workspace::binding::SessionTools;

/// Stops a session's own servers when the last copy goes (the session was dropped).
struct StopWhenDropped {
    mcp: McpHub,
    session: String,
    token: u64,
}

impl Drop for StopWhenDropped {
    fn drop(&mut self) {
        if tokio::runtime::Handle::try_current().is_err() {
            // The runtime is gone (daemon shutdown): its shutdown stopped every server.
            return;
        }
        let (mcp, session, token) = (self.mcp.clone(), self.session.clone(), self.token);
        synapse_command::tasks::spawn(async move {
            mcp.close_session_opened(&session, token).await;
        });
    }
}

/// Starts session `id`'s own servers (none: nothing, and any it had are stopped); blocks until
/// each is up or has failed — call it off the runtime's worker threads (opening a session runs
/// on the blocking pool). Gives the session's commands, when it has servers of its own (or is
/// strict), and the notices for its user.
pub fn start(
    mcp: &McpHub,
    id: &str,
    (cwd, root): (&Path, Option<&Path>),
    env: &HashMap<String, String>,
    own: &OwnMcpServers,
) -> (Option<SessionTools>, Vec<String>) {
    let request = SessionMcpRequest {
        id: id.to_string(),
        cwd: cwd.to_path_buf(),
        root: root.map(Path::to_path_buf),
        servers: own
            .servers
            .iter()
            .map(|(name, config_json)| SessionServerEntry {
                name: name.clone(),
                config_json: config_json.clone(),
            })
            .collect(),
        env: env.clone(),
        strict: own.strict,
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return (None, not_started(own));
    };
    let opened = runtime.block_on(mcp.open_session(request));
    let tools = opened.bin_dir.map(|bin_dir: PathBuf| SessionTools {
        session: id.to_string(),
        bin_dir,
        hold: Arc::new(StopWhenDropped {
            mcp: mcp.clone(),
            session: id.to_string(),
            token: opened.token,
        }),
    });
    (tools, opened.notices)
}

/// Without a runtime nothing can start (never so in the daemon): say so rather than run
/// without what was asked for silently.
fn not_started(own: &OwnMcpServers) -> Vec<String> {
    if own.servers.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "MCP: this session's own servers ({}) were not started: the daemon is shutting down",
        own.servers
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )]
}
