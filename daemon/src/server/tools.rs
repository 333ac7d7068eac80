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

use crate::shell::{SessionError, SessionOrigin, ToolCall};
use crate::state::DaemonState;

/// The session a request without a name runs in.
pub const DEFAULT_SESSION: &str = "default";

pub struct ToolsService {
    state: Arc<DaemonState>,
}

impl ToolsService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }
}

#[tonic::async_trait]
impl Tools for ToolsService {
    /// → `ShellSessions::execute` (daemon/src/shell/sessions.rs).
    async fn exec(&self, request: Request<ExecRequest>) -> Result<Response<ExecResponse>, Status> {
        refuse_confined(&request, "synapse exec")?;
        let req = request.into_inner();
        let name = if req.session.is_empty() {
            DEFAULT_SESSION.to_owned()
        } else {
            req.session
        };
        let origin = SessionOrigin {
            cwd: req.cwd.into(),
            env: req
                .env
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            sandbox: None,
        };
        let call = ToolCall {
            command: req.command,
            restart: req.restart,
            timeout: (req.timeout_ms > 0).then(|| Duration::from_millis(req.timeout_ms)),
            approver: None,
            gate: None,
            output_cap: None,
            progress: None,
        };
        let cancel = CancellationToken::new();
        // Dropped with this handler when the client disconnects: cancels the command.
        let on_disconnect = cancel.clone().drop_guard();
        let sessions = self.state.shell.clone();
        let task =
            tokio::spawn(async move { sessions.execute(&name, &origin, &call, &cancel).await });
        let outcome = task.await;
        on_disconnect.disarm();
        let result = outcome
            .map_err(|e| Status::internal(format!("the command task failed: {e}")))?
            .map_err(|e| match e {
                SessionError::EmptyName
                | SessionError::BadName(_)
                | SessionError::BadCwd(_)
                | SessionError::RelativeCwd(_) => Status::invalid_argument(e.to_string()),
                SessionError::ShuttingDown => Status::unavailable(e.to_string()),
            })?;
        Ok(Response::new(ExecResponse {
            output: result.output,
            exit_code: result.exit_code,
            restarted: result.restarted,
            timed_out: result.timed_out,
            cwd: result.cwd.display().to_string(),
        }))
    }
}
