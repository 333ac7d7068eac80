//! `Tools` service: `Exec` runs one Bash-tool command string through the shell router in a
//! named session, for scripting, tests and benchmarks. A client that goes away cancels the
//! command (its processes are killed), because the call runs in a task the handler only awaits.

use std::sync::Arc;
use std::time::Duration;

use crate::lifecycle::peer::refuse_confined;
use synapse_shared::proto::tools_server::Tools;
use synapse_shared::proto::{ExecRequest, ExecResponse};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

use crate::agent::gate::shell_state::TrackedShell;
use crate::shell::{SessionError, SessionOrigin, ToolCall};
use crate::state::DaemonState;

/// The prefix of the session a request without a name runs in (one per workspace).
pub const DEFAULT_SESSION: &str = "default";

pub struct ToolsService {
    state: Arc<DaemonState>,
    /// What each gated exec session's shell has defined, across calls.
    exec_shells: parking_lot::Mutex<
        std::collections::HashMap<String, Arc<parking_lot::Mutex<TrackedShell>>>,
    >,
}

impl ToolsService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self {
            state,
            exec_shells: Default::default(),
        }
    }

    fn exec_shell(&self, session: &str) -> Arc<parking_lot::Mutex<TrackedShell>> {
        let mut shells = self.exec_shells.lock();
        shells.entry(session.to_string()).or_default().clone()
    }
}

/// The session `synapse exec` uses when none is named: one per workspace, so a shell started in
/// one project (its cwd, its project's commands on PATH) never answers a call from another.
fn default_session(cwd: &std::path::Path) -> String {
    if !cwd.is_absolute() {
        return DEFAULT_SESSION.to_owned();
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let root = crate::workspace::project_root(cwd, home.as_deref());
    format!(
        "{DEFAULT_SESSION}-{}",
        synapse_command::workspaces::workspace_id(&root)
    )
}

#[tonic::async_trait]
impl Tools for ToolsService {
    /// → `ShellSessions::execute` (daemon/src/shell/sessions.rs).
    async fn exec(&self, request: Request<ExecRequest>) -> Result<Response<ExecResponse>, Status> {
        refuse_confined(&request, "synapse exec")?;
        let req = request.into_inner();
        let name = if req.session.is_empty() {
            default_session(std::path::Path::new(&req.cwd))
        } else {
            req.session
        };
        let mode = match req.permission_mode.as_str() {
            "" if !req.settings_mode => None,
            // The folder's settings choose the mode (`synapse mcp serve`'s calls).
            "" => Some(None),
            m => Some(Some(
                m.parse::<synapse_permissions::Mode>()
                    .map_err(|e| Status::invalid_argument(e.to_string()))?,
            )),
        };
        let (name, exec_gate) = match mode {
            None => (name, None),
            Some(mode) => {
                let cwd = std::path::PathBuf::from(&req.cwd);
                let gated = crate::agent::gate::exec_gate::gated_session(&name);
                let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                let root = crate::workspace::project_root(&cwd, home.as_deref());
                let gate = crate::agent::gate::exec_gate::exec_gate(
                    self.state.gate_env(Some(root)),
                    cwd,
                    mode,
                    &gated,
                    self.exec_shell(&gated),
                );
                (gated, Some(gate))
            }
        };
        let cwd = std::path::PathBuf::from(req.cwd);
        // A new shell joins the caller's workspace (its project's commands on PATH).
        let workspace = (cwd.is_absolute() && cwd.is_dir()).then(|| {
            self.state
                .bind_workspace(&cwd, req.env.clone().into_iter().collect())
        });
        let origin = SessionOrigin {
            cwd,
            env: req
                .env
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            sandbox: exec_gate.as_ref().and_then(|g| g.sandbox.clone()),
            workspace,
            private_tmp: None,
            spare_tmp: None,
        };
        let call = ToolCall {
            command: req.command,
            restart: req.restart,
            timeout: (req.timeout_ms > 0).then(|| Duration::from_millis(req.timeout_ms)),
            approver: None,
            gate: exec_gate
                .as_ref()
                .map(|g| crate::agent::gate::handle(g.gate.clone())),
            output_cap: None,
            progress: None,
            // `synapse exec` has nobody to ask: a server's forms and sampling are declined.
            asker: None,
            hook: Default::default(),
            editor: None,
        };
        let cancel = CancellationToken::new();
        // Dropped with this handler when the client disconnects: cancels the command.
        let on_disconnect = cancel.clone().drop_guard();
        let sessions = self.state.shell.clone();
        let task = synapse_command::tasks::spawn(async move {
            sessions.execute(&name, &origin, &call, &cancel).await
        });
        let outcome = task.await;
        on_disconnect.disarm();
        let result = outcome
            .map_err(|e| Status::internal(format!("the command task failed: {e}")))?
            .ok_or_else(|| Status::unavailable("the daemon is stopping"))?
            .map_err(|e| match e {
                SessionError::EmptyName
                | SessionError::BadName(_)
                | SessionError::BadCwd(_)
                | SessionError::RelativeCwd(_) => Status::invalid_argument(e.to_string()),
                SessionError::ShuttingDown => Status::unavailable(e.to_string()),
            })?;
        let mut output = result.output;
        if let Some(notices) = exec_gate.map(|g| g.notices.lock().clone()) {
            // Refusals are already in the output; other notices (a broken rules file) are not.
            for n in notices.iter().filter(|n| !n.starts_with("denied:")) {
                output.push_str(&format!("\n[{n}]"));
            }
        }
        Ok(Response::new(ExecResponse {
            output,
            exit_code: result.exit_code,
            restarted: result.restarted,
            timed_out: result.timed_out,
            cwd: result.cwd.display().to_string(),
        }))
    }
}
