//! The sessions' own MCP servers in the hub ([`crate::session`]): one manager per session that
//! was opened with servers of its own (or strict), started when it opens
//! ([`McpHub::open_session`], waiting until each server is up or has failed, so the session's
//! first prompt lists their tools and its user hears which did not start) and stopped when it
//! ends ([`McpHub::close_session`]). Nobody else sees them: only a caller naming the session
//! does (the session's router through its `CallContext`, a wrapper through `--session`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::McpHub;
use crate::manager::McpManager;
use crate::names::{COMMAND_PREFIX, safe_part};
use crate::server::StateKind;
use crate::session::{SESSION_SOURCE, SessionMcpRequest, SessionScope, is_folder_name};

/// One session's servers as the hub keeps them.
#[derive(Clone)]
pub(super) struct SessionServers {
    pub(super) manager: McpManager,
    /// `--strict-mcp-config`: the session sees only these servers.
    pub(super) strict: bool,
    names: Arc<[String]>,
    /// Which opening started them ([`SessionOpened::token`]).
    token: u64,
}

/// Numbers the openings, so a late close of an earlier one leaves a later one running.
static OPENINGS: AtomicU64 = AtomicU64::new(1);

/// What opening a session's servers gave.
#[derive(Debug, Default)]
pub struct SessionOpened {
    /// The folder of the session's own wrappers, to put first on its shell's PATH (`None`: the
    /// session has no servers of its own).
    pub bin_dir: Option<PathBuf>,
    /// For the session's user: each server that did not start and why, and each that replaces
    /// a user or project server of the same name.
    pub notices: Vec<String>,
    /// Names this opening for [`McpHub::close_session_opened`] (0: nothing was started).
    pub token: u64,
}

impl SessionServers {
    /// The message refusing `command` in a strict session when it is not one of the session's
    /// own servers' commands; `None` when it may run.
    pub(super) fn refusal_of_command(&self, command: &str) -> Option<String> {
        if !self.strict {
            return None;
        }
        let own = self
            .names
            .iter()
            .any(|name| command.starts_with(&format!("{COMMAND_PREFIX}{}:", safe_part(name))));
        (!own).then(|| self.refusal(command))
    }

    /// [`refusal_of_command`](Self::refusal_of_command) for a call that names its server.
    pub(super) fn refusal_of_server(&self, server: &str, tool: &str) -> Option<String> {
        if !self.strict || self.names.iter().any(|n| n == server) {
            return None;
        }
        Some(self.refusal(&crate::names::base_command(server, tool)))
    }

    fn refusal(&self, command: &str) -> String {
        let own = if self.names.is_empty() {
            "none".to_string()
        } else {
            self.names.join(", ")
        };
        format!(
            "{command}: not available in this session: it was opened with --strict-mcp-config, \
             so it uses only the MCP servers it was given ({own}); the user's and the project's \
             servers are not offered to it"
        )
    }
}

impl McpHub {
    /// `synapse mcp list` for a caller in `root` of chat session `session`: the session's own
    /// servers, then the project's and the user's that none of them shadows ([`McpHub::list`]);
    /// a strict session's own only. Outside a session with servers of its own, `list(root)`.
    pub fn list_for(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
    ) -> (Vec<crate::manager::ServerStatus>, Vec<String>) {
        let Some(own) = self.session(session) else {
            return self.list(root);
        };
        let mut servers = own.manager.list();
        let mut problems = own.manager.config_problems();
        if !own.strict {
            let (others, other_problems) = self.list(root);
            servers.extend(others.into_iter().filter(|s| !own.names.contains(&s.name)));
            problems.extend(other_problems);
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        (servers, problems)
    }

    /// Session `id`'s own servers, when it has any (or is strict).
    pub(super) fn session(&self, id: Option<&str>) -> Option<SessionServers> {
        self.inner.sessions.lock().get(id?).cloned()
    }

    /// Why a call to `server`'s `tool` is refused for a caller of `session` (a strict session
    /// and not one of its own servers); `None` when it may run.
    pub fn session_refusal(
        &self,
        session: Option<&str>,
        server: &str,
        tool: &str,
    ) -> Option<String> {
        self.session(session)?.refusal_of_server(server, tool)
    }

    /// Starts the servers session `req.id` was opened with (replacing any it had, as a resumed
    /// session starts what it is given again) and waits until each is up or has failed. A
    /// session with no servers of its own and not strict gets nothing (and loses any it had).
    pub async fn open_session(&self, req: SessionMcpRequest) -> SessionOpened {
        self.close_session(&req.id).await;
        if req.servers.is_empty() && !req.strict {
            return SessionOpened::default();
        }
        if !is_folder_name(&req.id) {
            return SessionOpened {
                bin_dir: None,
                token: 0,
                notices: vec![format!(
                    "MCP: the session id {:?} cannot name a folder, so its own MCP servers were \
                     not started",
                    req.id
                )],
            };
        }
        let opts = self.inner.opts.clone();
        let dir = crate::session::session_dir(&opts.mcp_dir, &req.id);
        // What a daemon that died left of an earlier run of this session.
        let _ = std::fs::remove_dir_all(&dir);
        let names: Arc<[String]> = req.servers.iter().map(|s| s.name.clone()).collect();
        let mut notices = if req.strict {
            Vec::new()
        } else {
            self.clash_notices(req.root.as_deref(), &names)
        };
        let manager = McpManager::for_session(
            opts,
            SessionScope {
                id: req.id.clone(),
                cwd: req.cwd,
                servers: req.servers,
                env: req.env,
            },
            req.root,
        );
        let token = OPENINGS.fetch_add(1, Ordering::Relaxed);
        self.inner.sessions.lock().insert(
            req.id.clone(),
            SessionServers {
                manager: manager.clone(),
                strict: req.strict,
                names,
                token,
            },
        );
        manager.refresh().await;
        for status in manager.list() {
            if matches!(status.state, StateKind::Failed | StateKind::NeedsLogin) {
                let prefix = format!("{SESSION_SOURCE}: ");
                let reason = status
                    .reason
                    .strip_prefix(&prefix)
                    .unwrap_or(&status.reason);
                notices.push(format!(
                    "MCP: this session's server {:?} did not start: {reason}",
                    status.name
                ));
            }
        }
        tracing::info!(session = %req.id, strict = req.strict, "session MCP servers started");
        SessionOpened {
            bin_dir: Some(manager.bin_dir().to_path_buf()),
            notices,
            token,
        }
    }

    /// [`close_session`](Self::close_session) when its servers are still those the opening
    /// `token` started (a session resumed since has newer ones, which stay).
    pub async fn close_session_opened(&self, id: &str, token: u64) {
        let current = self.inner.sessions.lock().get(id).map(|s| s.token);
        if current == Some(token) {
            self.close_session(id).await;
        }
    }

    /// Stops session `id`'s own servers (waiting until their processes are gone) and removes
    /// their wrappers; nothing when it has none.
    pub async fn close_session(&self, id: &str) {
        let Some(own) = self.inner.sessions.lock().remove(id) else {
            return;
        };
        own.manager.shutdown().await;
        let dir = crate::session::session_dir(&self.inner.opts.mcp_dir, id);
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(folder = %dir.display(), error = %e, "cannot remove a session's MCP wrappers");
        }
        tracing::info!(session = %id, "session MCP servers stopped");
    }

    /// One notice per session server whose name a project or user server has too: the
    /// session's wins for the session.
    fn clash_notices(&self, root: Option<&std::path::Path>, names: &[String]) -> Vec<String> {
        let project = root.map(|r| self.workspace(r, None));
        names
            .iter()
            .filter_map(|name| {
                let whose = if project.as_ref().is_some_and(|p| p.has_server(name)) {
                    "the project's"
                } else if self.inner.user.has_server(name) {
                    "your user"
                } else {
                    return None;
                };
                Some(format!(
                    "MCP: this session's server {name:?} replaces {whose} server of the same \
                     name for this session"
                ))
            })
            .collect()
    }
}
