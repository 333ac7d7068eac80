//! `Mcp` service: thin mapping between the wire types and [`synapse_mcp::McpHub`]. Every request
//! is answered for the caller's workspace (the project root above its cwd, or the one a project
//! wrapper names): that project's servers first, then the user's.

use std::path::PathBuf;
use std::sync::Arc;

use crate::lifecycle::peer::{from_confined_client, session_for, workspace_for};
use serde_json::Value;
use synapse_shared::proto::mcp_server::Mcp;
use synapse_shared::proto::{
    McpApproveRequest, McpApproveResponse, McpCallToolRequest, McpCallToolResponse, McpEditRequest,
    McpEditResponse, McpListRequest, McpListResponse, McpLoginRequest, McpLogoutRequest,
    McpLogoutResponse, McpQueryRequest, McpRefreshRequest, McpRefreshResponse, McpServer,
    McpServerState, McpTool,
};
use tonic::{Request, Response, Status};

use crate::state::DaemonState;
use synapse_mcp::{McpCallOutput, ServerStatus, StateKind};

pub struct McpService {
    state: Arc<DaemonState>,
}

impl McpService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }

    /// Where the images of this call go: the calling shell's scratch folder (so its session's
    /// result carries them), when that can be established — a sandboxed caller's own shell's,
    /// or a folder inside the daemon's output folder for any other caller.
    fn scratch_for(&self, request: &Request<McpCallToolRequest>) -> Option<PathBuf> {
        let peer = request
            .extensions()
            .get::<crate::lifecycle::peer::PeerInfo>();
        if from_confined_client(request) {
            return peer.and_then(|p| p.scratch.as_deref().map(std::path::Path::to_path_buf));
        }
        let claimed = std::path::Path::new(&request.get_ref().scratch)
            .canonicalize()
            .ok()?;
        let output = self.state.paths.home().join("output").canonicalize().ok()?;
        (claimed.starts_with(&output) && claimed.is_dir()).then_some(claimed)
    }

    /// A tool called from inside a sandboxed session shell (a wrapper the router could not see
    /// in the command line) still obeys the permission rules:
    /// `agent::gate::mcp_call::McpCallGate` decides, by the tool's command name — known only
    /// once its server is connected, so a call that arrives while it connects waits for it.
    async fn check_rules(
        &self,
        workspace: Option<&std::path::Path>,
        session: Option<&str>,
        server: &str,
        tool: &str,
    ) -> Result<(), Status> {
        let command = self
            .state
            .mcp
            .command_of(workspace, session, server, tool)
            .await;
        self.state
            .mcp_call_gate
            .check(workspace, &command)
            .map_err(|e| Status::permission_denied(e.to_string()))
    }
}

/// The project root above `cwd` (an absolute path), the caller's workspace.
fn root_of(cwd: &str) -> Option<PathBuf> {
    let cwd = std::path::Path::new(cwd);
    if !cwd.is_absolute() {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    Some(crate::workspace::project_root(cwd, home.as_deref()))
}

pub(super) fn wire_server(s: ServerStatus, include_tools: bool) -> McpServer {
    let state = match s.state {
        StateKind::Connecting => McpServerState::Connecting,
        StateKind::Ready => McpServerState::Ready,
        StateKind::Failed => McpServerState::Failed,
        StateKind::Disabled => McpServerState::Disabled,
        StateKind::NeedsLogin => McpServerState::NeedsLogin,
        StateKind::Untrusted => McpServerState::Untrusted,
        StateKind::NeedsApproval => McpServerState::NeedsApproval,
        StateKind::Held => McpServerState::Held,
    };
    McpServer {
        name: s.name,
        state: state as i32,
        reason: s.reason,
        transport: s.transport,
        tool_count: s.tool_count,
        source: s.source.display().to_string(),
        pid: s.pid.unwrap_or(0),
        scope: s.scope.to_string(),
        tools: if include_tools {
            s.tools
                .into_iter()
                .map(|t| McpTool {
                    input_schema_json: serde_json::Value::Object(t.input_schema).to_string(),
                    command: t.command,
                    description: t.summary,
                    tool: t.tool,
                    full_description: t.description,
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

fn wire_output(o: McpCallOutput) -> McpCallToolResponse {
    McpCallToolResponse {
        stdout: o.stdout,
        stderr: o.stderr,
        exit_code: o.exit_code,
    }
}

#[tonic::async_trait]
impl Mcp for McpService {
    type LoginStream = super::mcp_auth::LoginStream;

    /// → `McpManager::login` (daemon/mcp/src/manager/auth.rs), streamed by `mcp_auth::login`.
    async fn login(
        &self,
        request: Request<McpLoginRequest>,
    ) -> Result<Response<Self::LoginStream>, Status> {
        // The tokens act for the user: a sandboxed command may not obtain or replace them.
        crate::lifecycle::peer::refuse_confined(&request, "logging in to an MCP server")?;
        let r = request.into_inner();
        // As `list` does: a daemon just started may not have read the configuration yet.
        let root = root_of(&r.cwd);
        self.state.mcp.refresh_if_changed(root.as_deref()).await;
        let manager = self.state.mcp.serving(root.as_deref(), None, &r.server);
        Ok(Response::new(super::mcp_auth::login(manager, r)))
    }

    /// → `McpManager::logout` (daemon/mcp/src/manager/auth.rs).
    async fn logout(
        &self,
        request: Request<McpLogoutRequest>,
    ) -> Result<Response<McpLogoutResponse>, Status> {
        crate::lifecycle::peer::refuse_confined(&request, "logging out of an MCP server")?;
        let r = request.into_inner();
        let root = root_of(&r.cwd);
        self.state.mcp.refresh_if_changed(root.as_deref()).await;
        let manager = self.state.mcp.serving(root.as_deref(), None, &r.server);
        Ok(Response::new(
            super::mcp_auth::logout(manager, &r.server).await?,
        ))
    }

    /// → `McpManager::list` (daemon/mcp/src/manager.rs).
    async fn list(
        &self,
        request: Request<McpListRequest>,
    ) -> Result<Response<McpListResponse>, Status> {
        // A sandboxed command's environment never fills `${VAR}` in a project's config: it would
        // restart the project's servers, outside the sandbox, with values it chose.
        let confined = from_confined_client(&request);
        let root = workspace_for(&request, root_of(&request.get_ref().cwd), false)?;
        let session = crate::lifecycle::peer::session_for(&request, &request.get_ref().session)?;
        let r = request.into_inner();
        let env: Option<std::collections::HashMap<String, String>> =
            (!confined).then(|| r.env.into_iter().collect());
        if let Some(root) = &root {
            self.state.mcp.workspace(root, env.clone());
        }
        // A `synapse trust`, an approval or an edit since the last load counts now.
        self.state.mcp.refresh_if_changed(root.as_deref()).await;
        let (servers, config_problems) =
            self.state.mcp.list_for(root.as_deref(), session.as_deref());
        let notes = self.state.mcp.notes(root.as_deref(), env.as_ref());
        Ok(Response::new(McpListResponse {
            servers: servers
                .into_iter()
                .map(|s| wire_server(s, r.include_tools))
                .collect(),
            config_problems,
            notes,
        }))
    }

    /// → `McpManager::call_argv` (JSON arguments: `call_json`) (daemon/mcp/src/calls.rs).
    async fn call_tool(
        &self,
        request: Request<McpCallToolRequest>,
    ) -> Result<Response<McpCallToolResponse>, Status> {
        let confined = from_confined_client(&request);
        let named = std::path::Path::new(&request.get_ref().workspace).is_absolute();
        let claimed = if named {
            Some(PathBuf::from(&request.get_ref().workspace))
        } else {
            root_of(&request.get_ref().cwd)
        };
        let root = workspace_for(&request, claimed, named)?;
        let session = session_for(&request, &request.get_ref().session)?;
        let scratch = self.scratch_for(&request);
        let r = request.into_inner();
        if let Some(refusal) =
            self.state
                .mcp
                .session_refusal(session.as_deref(), &r.server, &r.tool)
        {
            return Ok(Response::new(wire_output(McpCallOutput::error(
                synapse_mcp::EXIT_UNAVAILABLE,
                refusal,
            ))));
        }
        if confined {
            self.check_rules(root.as_deref(), session.as_deref(), &r.server, &r.tool)
                .await?;
        }
        self.state.mcp.refresh_if_changed(root.as_deref()).await;
        let mcp = self
            .state
            .mcp
            .serving(root.as_deref(), session.as_deref(), &r.server);
        // A call from a terminal or a wrapper: nobody watches its progress or answers its
        // questions here; a session's shell gives its scratch folder for the files it leaves.
        let call = synapse_command::CallContext {
            workspace: root.clone(),
            session: session.clone(),
            scratch,
            ..Default::default()
        };
        if !r.arguments_json.is_empty() {
            let arguments = match serde_json::from_str::<Value>(&r.arguments_json) {
                Ok(Value::Object(map)) => map,
                Ok(_) | Err(_) => {
                    return Err(Status::invalid_argument(
                        "arguments_json must be a JSON object",
                    ));
                }
            };
            let out = mcp.call_json(&r.server, &r.tool, arguments, &call).await;
            return Ok(Response::new(wire_output(out)));
        }
        let stdin = r.has_stdin.then_some(r.stdin.as_slice());
        let out = mcp
            .call_argv(&r.server, &r.tool, &r.argv, stdin, &call)
            .await;
        Ok(Response::new(wire_output(out)))
    }

    /// → `approval::approve_project_servers` (daemon/mcp/src/approval.rs).
    async fn approve(
        &self,
        request: Request<McpApproveRequest>,
    ) -> Result<Response<McpApproveResponse>, Status> {
        crate::lifecycle::peer::refuse_confined(&request, "approving MCP servers")?;
        let r = request.into_inner();
        if !std::path::Path::new(&r.cwd).is_absolute() {
            return Err(Status::invalid_argument(
                "cwd must be the caller's absolute working directory",
            ));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let root = crate::workspace::project_root(std::path::Path::new(&r.cwd), home.as_deref());
        // The approving client stands for the project's opener: its variables fill `${VAR}`.
        let project = self
            .state
            .mcp
            .workspace(&root, Some(r.env.into_iter().collect()));
        // Plugins' servers live in the user's layer (or the workspace's, for a plugin its
        // trusted settings turn on), each keyed by its plugin's root.
        let prefix = synapse_mcp::plugin_servers::PREFIX;
        let plugin = synapse_mcp::plugin_servers::approve(
            self.state.mcp.user(),
            Some(&project),
            &self.state.paths.mcp_dir(),
            &r.servers,
            r.all,
        )
        .await
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
        let others: Vec<String> = r
            .servers
            .iter()
            .filter(|n| !n.starts_with(prefix))
            .cloned()
            .collect();
        if !r.all && others.is_empty() {
            return Ok(Response::new(McpApproveResponse {
                project: String::new(),
                approved: plugin.approved,
                not_waiting: plugin.not_waiting,
            }));
        }
        let outcome = synapse_mcp::approval::approve_project_servers(
            &project,
            &self.state.paths.mcp_dir(),
            &root,
            &others,
            r.all,
        )
        .await
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
        Ok(Response::new(McpApproveResponse {
            project: root.display().to_string(),
            approved: plugin
                .approved
                .into_iter()
                .chain(outcome.approved)
                .collect(),
            not_waiting: plugin
                .not_waiting
                .into_iter()
                .chain(outcome.not_waiting)
                .collect(),
        }))
    }

    /// → `McpManager::refresh` (daemon/mcp/src/manager.rs).
    async fn refresh(
        &self,
        request: Request<McpRefreshRequest>,
    ) -> Result<Response<McpRefreshResponse>, Status> {
        // A refresh reads the project's `.mcp.json` and starts what it names: never for a
        // sandboxed command, which could have written that file.
        crate::lifecycle::peer::refuse_confined(&request, "refreshing MCP servers")?;
        let r = request.into_inner();
        let root = root_of(&r.cwd);
        let env: std::collections::HashMap<String, String> = r.env.into_iter().collect();
        let hub = &self.state.mcp;
        // The user's own refresh: `${VAR}` expands from the caller's environment from now on.
        hub.user().set_user_env(env.clone());
        let mut s = hub.user().refresh().await;
        if let Some(root) = &root {
            let project = hub.workspace(root, None);
            project.replace_client_env(env);
            s.merge(project.refresh().await);
        }
        let (statuses, _) = hub.list(root.as_deref());
        let failed = s
            .failed
            .iter()
            .map(
                |(name, reason)| match statuses.iter().find(|st| &st.name == name) {
                    Some(st) => wire_server(st.clone(), false),
                    None => McpServer {
                        name: name.clone(),
                        reason: reason.clone(),
                        ..Default::default()
                    },
                },
            )
            .collect();
        Ok(Response::new(McpRefreshResponse {
            added: s.added,
            removed: s.removed,
            reconnected: s.reconnected,
            unchanged: s.unchanged,
            failed,
            wrappers_written: s.wrappers.written,
            wrappers_removed: s.wrappers.removed,
            wrappers_unchanged: s.wrappers.unchanged as u32,
            config_problems: s.problems,
        }))
    }

    /// → `mcp::edit::{add, remove}` (daemon/mcp/src/edit.rs), then `McpManager::refresh`.
    async fn edit(
        &self,
        request: Request<McpEditRequest>,
    ) -> Result<Response<McpEditResponse>, Status> {
        // Adding a server runs code: never for a command inside a sandboxed session.
        crate::lifecycle::peer::refuse_confined(&request, "changing MCP servers")?;
        let r = request.into_inner();
        let target = super::mcp_edit::target(&self.state, &r)?;
        let (name, action, file) = (r.name.clone(), r.action.clone(), target.file.clone());
        let hub = &self.state.mcp;
        if action == "add" && target.project.is_none() {
            // The user's own add: `${VAR}` in their config expands from this environment.
            hub.user().set_user_env(r.env.clone().into_iter().collect());
        }
        let state = self.state.clone();
        let edit_target = target.clone();
        tokio::task::spawn_blocking(move || {
            super::mcp_edit::apply(&state, &r, &edit_target, &file)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))??;
        let root = root_of(&target.cwd.to_string_lossy());
        match (&target.project, &root) {
            (Some(_), Some(root)) => {
                hub.workspace(root, None).refresh().await;
            }
            _ => {
                hub.user().refresh().await;
            }
        }
        let note = super::mcp_edit::note(&target, &action, &name, &hub.list(root.as_deref()).0);
        Ok(Response::new(McpEditResponse {
            file: target.file.display().to_string(),
            note,
        }))
    }

    /// → `McpManager::query` (daemon/mcp/src/resources.rs).
    async fn query(
        &self,
        request: Request<McpQueryRequest>,
    ) -> Result<Response<McpCallToolResponse>, Status> {
        use synapse_mcp::resources::Query;
        let root = workspace_for(&request, root_of(&request.get_ref().cwd), false)?;
        let session = session_for(&request, &request.get_ref().session)?;
        let r = request.into_inner();
        if let Some(refusal) =
            self.state
                .mcp
                .session_refusal(session.as_deref(), &r.server, &r.kind)
        {
            return Ok(Response::new(wire_output(McpCallOutput::error(
                synapse_mcp::EXIT_UNAVAILABLE,
                refusal,
            ))));
        }
        let query = match r.kind.as_str() {
            "resources" => Query::Resources,
            "read" => Query::Read(r.target),
            "prompts" => Query::Prompts,
            "prompt" => Query::Prompt {
                name: r.target,
                arguments: r
                    .arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            },
            other => {
                return Err(Status::invalid_argument(format!(
                    "unknown query {other:?}: resources, read, prompts or prompt"
                )));
            }
        };
        Ok(Response::new(wire_output(
            self.state
                .mcp
                .serving(root.as_deref(), session.as_deref(), &r.server)
                .query(&r.server, query)
                .await,
        )))
    }
}
