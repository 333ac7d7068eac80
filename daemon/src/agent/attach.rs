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
use super::flag_settings::FlagSettings;
use super::session::{ChatSession, RunOptions};
use super::sessions::{ChatError, ChatSessions, OpenRequest, OwnMcpServers, Resume};
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
    /// `--add-dir`: more folders the session writes as its own.
    pub add_dirs: Vec<String>,
    /// `--session-id`: the new session's id ("" = generated).
    pub session_id: String,
    /// `--settings` as a JSON object's text ("" = none).
    pub settings_json: String,
    /// `--fallback-model`, in order.
    pub fallback_models: Vec<String>,
    /// `--dangerously-skip-permissions`.
    pub bypass_permissions: bool,
    /// Session-scoped MCP servers (`--mcp-config`, an editor's), and `--strict-mcp-config`.
    pub own_mcp: OwnMcpServers,
}

/// The attached session and what to tell the client first.
pub struct Attached {
    pub session: Arc<ChatSession>,
    pub resumed: bool,
    pub warnings: Vec<String>,
    /// Notices for the user: problems with the permission patterns, project servers waiting,
    /// the session's own MCP servers that did not start.
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
    /// `--settings` that cannot be read, naming the key.
    #[error("{0}")]
    Settings(String),
    /// An `--add-dir` that is not an existing folder.
    #[error("--add-dir {0}: no such directory; give an existing folder")]
    AddDir(String),
}

impl ChatSessions {
    /// Opens (or resumes) the session a client asks for and applies its choices;
    /// `project_notices` says what is waiting in the session's project (its MCP servers).
    pub fn attach(
        &self,
        a: Attach,
        project_notices: &dyn Fn(&Path) -> Vec<String>,
    ) -> Result<Attached, AttachError> {
        // Everything the client asks for is checked before a session file is made for it.
        let flag = FlagSettings::read(&a.settings_json).map_err(AttachError::Settings)?;
        let allowed: Vec<String> = a
            .allowed_tools
            .into_iter()
            .chain(flag.allow.clone())
            .collect();
        let disallowed: Vec<String> = a
            .disallowed_tools
            .into_iter()
            .chain(flag.deny.clone())
            .collect();
        let (tool_rules, tool_notices) =
            super::gate::tool_rules::tool_rule_set(&allowed, &disallowed)
                .map_err(AttachError::ToolRules)?;
        let added_dirs = checked_dirs(
            &a.cwd,
            a.add_dirs.iter().chain(&flag.additional_directories),
        )?;
        let id = match (&a.resume, a.session_id.is_empty()) {
            (Resume::New, false) => Some(a.session_id),
            _ => None,
        };
        let permission_mode = match (a.permission_mode.trim(), &flag.default_mode) {
            ("", Some(mode)) => mode.clone(),
            _ => a.permission_mode,
        };
        let opened = self.open(OpenRequest {
            cwd: a.cwd,
            env: a.env,
            model: a.model.or_else(|| flag.model()),
            resume: a.resume,
            id,
            own_mcp: a.own_mcp,
        })?;
        let session = opened.session;
        let mut notices = opened.notices;
        notices.extend(session.configure_permissions(
            &permission_mode,
            a.allow,
            tool_rules,
            a.non_interactive,
            a.approve_all,
        )?);
        session.set_added_dirs(&added_dirs)?;
        session.set_bypass(a.bypass_permissions);
        notices.extend(tool_notices);
        notices.extend(flag.notices.iter().cloned());
        session.configure_run(RunOptions {
            no_tool: removes_the_tool(&disallowed),
            fallback_models: a.fallback_models,
            settings: flag,
            ..a.run
        });
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
        // Another front end still attached, or a detached turn going on: it stays.
        if session.client_count() > 0 || session.is_detached() {
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

/// `--add-dir`'s folders, absolute (relative ones from the session's folder), each an existing
/// folder.
fn checked_dirs<'a>(
    cwd: &Path,
    dirs: impl Iterator<Item = &'a String>,
) -> Result<Vec<String>, AttachError> {
    dirs.map(|dir| {
        let path = cwd.join(dir);
        match std::fs::canonicalize(&path) {
            Ok(real) if real.is_dir() => Ok(real.display().to_string()),
            _ => Err(AttachError::AddDir(path.display().to_string())),
        }
    })
    .collect()
}

/// `--disallowedTools Bash` (the bare tool name): the session's requests carry no tool. A
/// pattern such as `Bash(rm:*)` only denies what it matches.
fn removes_the_tool(disallowed: &[String]) -> bool {
    synapse_permissions::split_tool_list(disallowed)
        .iter()
        .any(|rule| rule == synapse_llm::BASH_TOOL_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bare_tool_name_removes_the_tool() {
        assert!(removes_the_tool(&["Read Bash".into()]));
        assert!(removes_the_tool(&["Bash".into()]));
        assert!(!removes_the_tool(&["Bash(rm:*)".into()]));
        assert!(!removes_the_tool(&["Edit,Write".into()]));
    }

    #[test]
    fn a_missing_added_dir_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = checked_dirs(dir.path(), ["nowhere".to_string()].iter()).unwrap_err();
        assert!(e.to_string().contains("nowhere"), "{e}");
        let ok = checked_dirs(dir.path(), [".".to_string()].iter()).unwrap();
        assert_eq!(ok.len(), 1);
    }
}
