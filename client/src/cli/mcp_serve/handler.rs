//! The MCP server side of `synapse mcp serve` ([`rmcp::ServerHandler`]): `tools/list` answers the
//! daemon's offer as it is now ([`super::catalog`]), `tools/call` runs the tool's action through
//! the daemon ([`super::calls`]) in the caller's folder, and a change of the offer seen after a
//! call is announced with `notifications/tools/list_changed`. The caller's folder is the first
//! `file://` root the client gives (asked again after `notifications/roots/list_changed`), else
//! the folder the server was started in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use tonic::transport::Channel;

use super::calls::{self, Outcome};
use super::catalog::{Action, Offer};

/// What the server says about itself in `initialize`.
const INSTRUCTIONS: &str = "Synapse's skill library, sub-agents and warm MCP connections. \
skills_search finds skills for a need, skill_load reads one, skill__<skill>__<script> runs a \
skill's script, task runs a Synapse sub-agent in this folder, and <server>__<tool> calls a tool \
of an MCP server Synapse keeps connected. Calls run under this folder's permission rules and \
sandbox; what would need a person's approval is refused, naming the rule that allows it.";

/// One `synapse mcp serve` process's state.
pub struct SynapseServer {
    channel: Channel,
    /// Where the server was started (the MCP client's cwd).
    start_dir: PathBuf,
    /// This process's environment, handed to the sessions the calls open.
    env: HashMap<String, String>,
    /// The caller's folder from its roots; `None`: not asked yet (or the roots changed).
    root: Mutex<Option<PathBuf>>,
    /// The last offer seen (listed, or looked at after a call).
    offer: Arc<Mutex<Arc<Offer>>>,
}

impl SynapseServer {
    pub fn new(channel: Channel, start_dir: PathBuf, env: HashMap<String, String>) -> Self {
        Self {
            channel,
            start_dir,
            env,
            root: Mutex::new(None),
            offer: Arc::default(),
        }
    }

    /// The folder calls run in: the client's first `file://` root that is a folder, else where
    /// the server started.
    // Roots are deprecated by SEP-2577 for the next protocol revision, but the clients of today
    // (Claude Code, the Python SDK, editors) still say their folder with them.
    #[allow(deprecated)]
    async fn folder(&self, peer: &Peer<RoleServer>) -> PathBuf {
        if let Some(known) = self.root.lock().clone() {
            return known;
        }
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let chosen = if offers_roots {
            match peer.list_roots().await {
                Ok(list) => list
                    .roots
                    .iter()
                    .find_map(|r| root_folder(&r.uri))
                    .unwrap_or_else(|| self.start_dir.clone()),
                Err(e) => {
                    eprintln!(
                        "synapse mcp serve: the client's roots could not be read ({e}); using {}",
                        self.start_dir.display()
                    );
                    self.start_dir.clone()
                }
            }
        } else {
            self.start_dir.clone()
        };
        *self.root.lock() = Some(chosen.clone());
        chosen
    }

    async fn fresh_offer(&self, folder: &Path) -> Result<Arc<Offer>, ErrorData> {
        let offer = Arc::new(
            calls::offer(&self.channel, folder, &self.env)
                .await
                .map_err(|e| ErrorData::internal_error(e, None))?,
        );
        *self.offer.lock() = offer.clone();
        Ok(offer)
    }

    /// The action of tool `name`: from the last offer, else from a fresh one (the tool may be new).
    async fn action(&self, name: &str, folder: &Path) -> Result<Action, ErrorData> {
        let known = self.offer.lock().action(name).cloned();
        if let Some(a) = known {
            return Ok(a);
        }
        self.fresh_offer(folder)
            .await?
            .action(name)
            .cloned()
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "synapse mcp serve offers no tool {name:?}; tools/list shows what it offers"
                    ),
                    None,
                )
            })
    }
}

/// The folder a `file://` root names, when it is one.
fn root_folder(uri: &str) -> Option<PathBuf> {
    let path = url::Url::parse(uri).ok()?.to_file_path().ok()?;
    path.is_dir().then_some(path)
}

impl ServerHandler for SynapseServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        config.server_info = Implementation::new("synapse", env!("CARGO_PKG_VERSION"));
        config.instructions = Some(INSTRUCTIONS.to_string());
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let folder = self.folder(&context.peer).await;
        let offer = self.fresh_offer(&folder).await?;
        Ok(ListToolsResult::with_all_items(
            offer.tools.iter().map(|t| t.tool.clone()).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let folder = self.folder(&context.peer).await;
        let action = self.action(&request.name, &folder).await?;
        let arguments = request.arguments.unwrap_or_default();
        let offer = self.offer.lock().clone();
        let call = calls::call(
            &self.channel,
            &action,
            &arguments,
            &folder,
            &self.env,
            &offer,
        );
        let outcome = tokio::select! {
            outcome = call => outcome,
            // The client gave up: dropping the call ends the daemon's command (its processes
            // are killed, as when `synapse exec` is interrupted).
            () = context.ct.cancelled() => Outcome::failed("cancelled by the client".to_string()),
        };
        if matches!(action, Action::Task | Action::Script { .. }) {
            self.announce_changes(context.peer.clone(), folder);
        }
        let content = vec![ContentBlock::text(outcome.text)];
        Ok(if outcome.ok {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        }
        .into())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        *self.root.lock() = None;
    }
}

impl SynapseServer {
    /// After a call that may have changed the skills (a script, a sub-agent), looks again and
    /// tells the client when the offer changed. Runs beside the answer, never delaying it.
    fn announce_changes(&self, peer: Peer<RoleServer>, folder: PathBuf) {
        let before = self.offer.lock().names();
        let channel = self.channel.clone();
        let env = self.env.clone();
        let seen = self.offer.clone();
        tokio::spawn(async move {
            let Ok(now) = calls::offer(&channel, &folder, &env).await else {
                return;
            };
            let changed = now.names() != before;
            *seen.lock() = Arc::new(now);
            if changed {
                // A client that went away cannot be told; nothing else to do.
                let _ = peer.notify_tool_list_changed().await;
            }
        });
    }
}
