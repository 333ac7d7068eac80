//! A client attaching to a chat session (`Chat.Attach`), as one entry point: the session is
//! opened or resumed, the client's permission choices applied, what the user should know at once
//! gathered (problems in the rules, project MCP servers waiting for approval), and its shell
//! warmed; and a `synapse run` client that leaves releases its session ([`ChatSessions::release_run`]).
//! The gRPC service only translates messages.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::AgentError;
use super::session::{ChatSession, RunOptions};
use super::sessions::{ChatError, ChatSessions, OpenRequest, Resume};
use crate::shell::ShellSessions;

/// How long a released `synapse run` session waits for its cancelled turn to stop.
pub const RUN_RELEASE_GRACE: Duration = Duration::from_secs(30);

/// What an attaching client asks for.
pub struct Attach {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    pub model: Option<String>,
    pub resume: Resume,
    /// "" keeps the session's mode.
    pub permission_mode: String,
    pub allow: Vec<String>,
    /// `--allowedTools` / `--disallowedTools` in Claude Code's syntax.
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub non_interactive: bool,
    pub approve_all: bool,
    /// `synapse run`'s prompt and request limit for this client's turns.
    pub run: RunOptions,
    /// Opened by the REPL's `/clear`.
    pub cleared: bool,
}

/// The attached session and what to tell the client first.
pub struct Attached {
    pub session: Arc<ChatSession>,
    pub resumed: bool,
    pub warnings: Vec<String>,
    /// Notices for the user: problems with the permission patterns, project servers waiting.
    pub notices: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(transparent)]
    Chat(#[from] ChatError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A `--allowedTools`/`--disallowedTools` rule that cannot be read exactly.
    #[error("{0}")]
    ToolRules(String),
}

impl ChatSessions {
    /// Opens (or resumes) the session a client asks for and applies its choices;
    /// `project_notices` says what is waiting in the session's project (its MCP servers).
    pub fn attach(
        &self,
        a: Attach,
        project_notices: &dyn Fn(&Path) -> Vec<String>,
    ) -> Result<Attached, AttachError> {
        let (tool_rules, tool_notices) =
            super::gate::tool_rules::tool_rule_set(&a.allowed_tools, &a.disallowed_tools)
                .map_err(AttachError::ToolRules)?;
        let opened = self.open(OpenRequest {
            cwd: a.cwd,
            env: a.env,
            model: a.model,
            resume: a.resume,
        })?;
        let session = opened.session;
        let mut notices = session.configure_permissions(
            &a.permission_mode,
            a.allow,
            tool_rules,
            a.non_interactive,
            a.approve_all,
        )?;
        notices.extend(tool_notices);
        session.configure_run(a.run);
        if let Some(root) = session.workspace_root() {
            notices.extend(project_notices(root));
        }
        notices.extend(session.instruction_notices());
        // Its sandbox is known now: start the shell while the client sends its first input.
        session.warm_shell();
        session.hooks_session_start(match (opened.resumed, a.cleared) {
            (true, _) => "resume",
            (false, true) => "clear",
            (false, false) => "startup",
        });
        Ok(Attached {
            session,
            resumed: opened.resumed,
            warnings: opened.warnings,
            notices,
        })
    }

    /// A `synapse run` whose client left frees its shell (bash and its fds) and its place in
    /// memory at once; the session file stays resumable. Another client still attached (a REPL
    /// that reattached) keeps it loaded; the idle reaper unloads it later.
    pub async fn release_run(&self, session: &Arc<ChatSession>, shell: &ShellSessions) {
        if session.client_count() > 0 {
            return;
        }
        if self.release_finished(session, RUN_RELEASE_GRACE).await {
            if let Some(cwd) = shell.cwd_of(&session.id) {
                self.remember_cwd(&session.id, cwd);
            }
            shell.close(&session.id).await;
            tracing::debug!(session = %session.id, "released a finished run session");
        }
    }
}
