//! The agent's tool calls go to a named session of the daemon's shell layer: the one real
//! [`ToolExecutor`], for chat sessions and sub-agents alike. What differs between them is its
//! policy — the gate every command passes (a session's permission rules, or a sub-agent's
//! `PolicyGate`) and who is there to ask, to show progress to, to answer a server's forms.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::executor::{BashCall, ToolExecutor, ToolFuture, ToolOutcome};
use crate::shell::{GateHandle, SessionOrigin, ShellSessions, ToolCall};
use synapse_command::ApproverHandle;

pub struct ShellToolExecutor {
    pub sessions: Arc<ShellSessions>,
    /// The shell session's name (the chat session id).
    pub name: String,
    pub origin: SessionOrigin,
    /// Who answers approval requests (the chat session's client).
    pub approver: Option<ApproverHandle>,
    /// The session's permission gate.
    pub gate: Option<GateHandle>,
    /// The output cap sized from the session model's context window (`None`: the default).
    pub output_cap: Option<usize>,
    /// Where the live tail of a running command goes (the session's event stream).
    pub progress: Option<crate::shell::ProgressSink>,
    /// Who answers an MCP server's forms and sampling requests during a call (the session).
    pub asker: Option<crate::shell::AskerHandle>,
    /// The session's editor front end, when one offered its files (read at each call: editors
    /// come and go).
    pub editor: Option<super::editor_link::EditorSlot>,
}

impl ToolExecutor for ShellToolExecutor {
    fn execute(&self, call: BashCall, cancel: CancellationToken) -> ToolFuture<'_> {
        Box::pin(async move {
            let call = ToolCall {
                command: call.command,
                restart: call.restart,
                timeout: None,
                approver: self.approver.clone(),
                gate: self.gate.clone(),
                output_cap: self.output_cap,
                progress: self.progress.clone(),
                asker: self.asker.clone(),
                hook: call.hook,
                editor: self.editor.as_ref().and_then(|slot| slot.current()),
            };
            match self
                .sessions
                .execute(&self.name, &self.origin, &call, &cancel)
                .await
            {
                Ok(result) => ToolOutcome {
                    output: result.output,
                    exit_code: result.exit_code,
                    images: result.images,
                    changes: result.changes,
                },
                Err(e) => ToolOutcome {
                    output: format!("cannot run the command: {e}"),
                    exit_code: 126,
                    images: Vec::new(),
                    changes: Vec::new(),
                },
            }
        })
    }
}
