//! One live MCP session over rmcp: connect (spawn or HTTP, `initialize`, first `tools/list`
//! with pagination) within the start-up timeout, call tools within the call timeout, re-list on
//! `notifications/tools/list_changed`, and close, killing the server's process group.
//!
//! Notifications and process exits are reported as [`ConnectionEvent`]s tagged with the
//! connection id, so the manager can ignore events from a connection it already replaced.
//! The rmcp client handler (roots, progress, list-changed) is [`handler`]; a server's forms and
//! sampling requests go to the session whose call they serve ([`asks`]); a change of roots is
//! announced with `notifications/roots/list_changed` ([`McpConnection::roots_changed`]). An HTTP
//! server's transport ([`http`]) carries its OAuth bearer; a refusal it cannot answer makes the
//! connection fail with [`ConnectionError::NeedsLogin`].

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ProtocolVersion, ServerNotification, SubscriptionFilter, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};

/// How long a failed start waits for the server's exit to be seen, to report it.
const EXIT_SEEN_GRACE: Duration = Duration::from_millis(500);

mod asks;
mod handler;
mod http;
mod progress;
mod queries;
mod tasks;

use asks::CallAskers;
use handler::{Events, ProgressWatchers};

use super::config::{ServerConfig, Transport};
use super::process::{ServerProcess, StdioCommand};

/// Largest message a stdio server may send (one JSON line). rmcp's own limit is 16 MiB, which
/// a big tool result passes; a larger line is dropped and its call fails by its timeout.
pub const STDIO_MESSAGE_MAX_BYTES: usize = 512 * 1024 * 1024;

/// The folders announced to servers as roots: a project server's own workspace root. `None` for
/// the user's servers, which serve every project at once: they are not told any project (a
/// shared server told every open project would act in one project for another), keep the folders
/// they were configured with, and the roots capability is not declared to them.
pub type Roots = Option<Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>>;

/// What a connection reports to its manager and asks of it.
#[derive(Clone)]
pub struct Link {
    pub events: mpsc::UnboundedSender<ConnectionEvent>,
    pub roots: Roots,
    /// OAuth tokens for HTTP servers.
    pub oauth: super::oauth::OAuthVault,
}

/// Something a connection noticed on its own.
#[derive(Debug, Clone)]
pub enum ConnectionEvent {
    /// The server sent `notifications/tools/list_changed`.
    ToolsChanged { server: String, conn_id: u64 },
    /// The stdio server process exited.
    Exited {
        server: String,
        conn_id: u64,
        reason: String,
    },
}

/// Why a connection could not be made or used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectionError {
    #[error("cannot start {command:?}: {reason}")]
    Spawn { command: String, reason: String },
    #[error("invalid header {name:?}: {reason}")]
    Header { name: String, reason: String },
    #[error("initialize failed: {0}")]
    Initialize(String),
    #[error("no answer within the start-up timeout of {0:?}")]
    StartupTimeout(Duration),
    #[error("tools/list failed: {0}")]
    ListTools(String),
    #[error(
        "no answer within the call timeout of {:.1} s; the request was cancelled \
         (notifications/cancelled) and the server stays connected; raise toolTimeoutSec in the \
         server's config for slow tools",
        .0.as_secs_f64()
    )]
    CallTimeout(Duration),
    #[error("connection lost: {0}")]
    Lost(String),
    /// A JSON-RPC error answer: the server is fine, the request was not.
    #[error("server answered with an error: {0}")]
    Rejected(String),
    /// The server wants OAuth authorization the daemon does not have (or could not refresh).
    #[error("{}", super::oauth::needs_login_reason(server, why))]
    NeedsLogin { server: String, why: String },
    /// Authorization failed in a way a login does not fix (a configured header was refused, a
    /// refresh could not reach the authorization server).
    #[error("{0}")]
    Unauthorized(String),
}

impl ConnectionError {
    /// True when the server itself is unusable (as opposed to one request being refused). A
    /// slow request is not evidence of that: rmcp cancels it on the wire when the call is dropped
    /// and the session (with the server's state) is kept; a crashed process is noticed by its
    /// exit watch, a lost transport by the next request.
    pub fn breaks_connection(&self) -> bool {
        !matches!(
            self,
            ConnectionError::Rejected(_) | ConnectionError::CallTimeout(_)
        )
    }
}

/// A connected server.
pub struct McpConnection {
    pub conn_id: u64,
    progress: ProgressWatchers,
    askers: CallAskers,
    service: RunningService<RoleClient, Events>,
    /// What the HTTP transport learned about authorization (None for stdio).
    auth: Option<http::Auth>,
    process: Mutex<Option<ServerProcess>>,
    pid: Option<u32>,
    exited: Option<watch::Receiver<Option<String>>>,
    call_timeout: Duration,
    /// The server's name (for progress lines).
    server_name: String,
    /// Tools known to run only as tasks ([`tasks`]).
    task_tools: Mutex<std::collections::HashSet<String>>,
    /// Whether the server listed at least one resource or template when it connected: only then
    /// does it get `mcp:<server>:resources` and `mcp:<server>:read`.
    lists_resources: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("conn_id", &self.conn_id)
            .field("pid", &self.pid)
            .finish()
    }
}

impl McpConnection {
    /// Tells the server its roots changed (`notifications/roots/list_changed`); it asks for
    /// them again. Sent in the background; a server that is gone is not waited for.
    pub fn roots_changed(&self) {
        let peer = self.service.peer().clone();
        synapse_command::tasks::spawn(async move {
            #[allow(deprecated)]
            let _ = peer.notify_roots_list_changed().await;
        });
    }

    /// Connects and lists the tools, all within `config.startup_timeout`. On failure nothing is
    /// left running.
    pub async fn connect(
        config: &ServerConfig,
        conn_id: u64,
        link: Link,
    ) -> Result<(McpConnection, Vec<Tool>), ConnectionError> {
        let events = link.events.clone();
        let progress = ProgressWatchers::default();
        let askers = CallAskers::default();
        let handler = Events {
            server: config.name.clone(),
            conn_id,
            tx: events.clone(),
            roots: link.roots,
            progress: progress.clone(),
            askers: askers.clone(),
        };
        let startup = config.startup_timeout;
        let attempt = async {
            let (service, process, auth) = match &config.transport {
                Transport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    let spec = StdioCommand {
                        server: config.name.clone(),
                        command: command.clone(),
                        args: args.clone(),
                        env: env.clone(),
                        cwd: cwd.clone(),
                    };
                    let (process, stdout, stdin) =
                        ServerProcess::spawn(&spec).map_err(|e| ConnectionError::Spawn {
                            command: command.clone(),
                            reason: e.to_string(),
                        })?;
                    watch_exit(&process, &config.name, conn_id, events.clone());
                    // rmcp drops a line over 16 MiB and the call then waits out its timeout;
                    // big results are capped and spilled after parsing (`render_result`).
                    let transport = AsyncRwTransport::new_client(stdout, stdin)
                        .with_max_line_length(STDIO_MESSAGE_MAX_BYTES);
                    match handler.serve(transport).await {
                        Ok(s) => (s, Some(process), None),
                        Err(e) => {
                            // A server that quit says why better than the closed pipe does: give
                            // its exit a moment to be seen.
                            let mut exited = process.exit_watch();
                            let reason = tokio::time::timeout(
                                EXIT_SEEN_GRACE,
                                exited.wait_for(Option::is_some),
                            )
                            .await
                            .ok()
                            .and_then(|r| r.ok().and_then(|v| v.clone()))
                            .unwrap_or_else(|| super::error_words::in_words(&e, None));
                            process.terminate().await;
                            return Err(ConnectionError::Initialize(reason));
                        }
                    }
                }
                Transport::Http { url, headers } => {
                    let (transport, auth) =
                        http::transport(&config.name, url, headers, &link.oauth).await?;
                    let service = handler.serve(transport).await.map_err(|e| {
                        auth.refused().unwrap_or_else(|| {
                            ConnectionError::Initialize(super::error_words::in_words(&e, Some(url)))
                        })
                    })?;
                    (service, None, Some(auth))
                }
            };
            listen_for_tool_changes(&service, &config.name, conn_id, events.clone());
            let conn = McpConnection {
                conn_id,
                progress,
                askers,
                service,
                auth,
                pid: process.as_ref().map(ServerProcess::server_pid),
                exited: process.as_ref().map(ServerProcess::exit_watch),
                process: Mutex::new(process),
                call_timeout: config.call_timeout,
                server_name: config.name.clone(),
                task_tools: Mutex::default(),
                lists_resources: std::sync::atomic::AtomicBool::new(false),
            };
            match conn.list_tools_now().await {
                Ok(tools) => {
                    conn.note_listed_resources().await;
                    Ok((conn, tools))
                }
                Err(e) => {
                    conn.close().await;
                    Err(e)
                }
            }
        };
        // Dropping the attempt on timeout drops the process handle, which kills the group.
        tokio::time::timeout(startup, attempt)
            .await
            .map_err(|_| ConnectionError::StartupTimeout(startup))?
    }

    /// `tools/list` with every page, bounded by the call timeout.
    pub async fn list_tools_now(&self) -> Result<Vec<Tool>, ConnectionError> {
        match tokio::time::timeout(self.call_timeout, self.service.list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::ListTools)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }

    /// `tools/call`; the result is returned as its wire JSON.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        ctx: &synapse_command::CallContext,
    ) -> Result<Value, ConnectionError> {
        let sink = ctx.progress.clone();
        if self.needs_task(tool) {
            return self.call_task_bounded(tool, arguments, sink).await;
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments.clone());
        // A call someone watches (a session's tool call) has its progress shown, and the
        // server's questions while it runs go to that session's user.
        let call = async {
            let (sink, asker) = (ctx.progress.clone(), ctx.asker.clone());
            if sink.is_none() && asker.is_none() {
                // Registered without an asker: the server's questions during it reach nobody.
                let _call = self.askers.register(None, None);
                self.service.call_tool(params).await
            } else {
                self.call_watched(params, sink, asker).await
            }
        };
        let value = match tokio::time::timeout(self.call_timeout, call).await {
            Ok(Ok(result)) => {
                serde_json::to_value(&result).map_err(|e| ConnectionError::Lost(e.to_string()))?
            }
            Ok(Err(e)) if tasks::error_refuses_plain_call(&e) => {
                return self.call_task_bounded(tool, arguments, sink).await;
            }
            Ok(Err(e)) => return Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => return Err(ConnectionError::CallTimeout(self.call_timeout)),
        };
        if tasks::refuses_plain_call(&value) {
            return self.call_task_bounded(tool, arguments, sink).await;
        }
        Ok(value)
    }

    /// [`tasks`]: `tool` as a task, within the call timeout.
    async fn call_task_bounded(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        sink: Option<synapse_command::progress::ProgressSink>,
    ) -> Result<Value, ConnectionError> {
        let task = self.call_as_task(tool, arguments, sink);
        match tokio::time::timeout(self.call_timeout, task).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }

    fn classify(
        &self,
        e: rmcp::ServiceError,
        other: fn(String) -> ConnectionError,
    ) -> ConnectionError {
        if let Some(refused) = self.auth.as_ref().and_then(http::Auth::refused) {
            return refused;
        }
        match e {
            rmcp::ServiceError::McpError(data) => {
                ConnectionError::Rejected(data.message.to_string())
            }
            rmcp::ServiceError::Timeout { timeout } => ConnectionError::CallTimeout(timeout),
            e => match self.exited.as_ref().and_then(|w| w.borrow().clone()) {
                Some(reason) => ConnectionError::Lost(reason),
                None => other(super::error_words::in_words(&e, None)),
            },
        }
    }

    /// The server's `instructions` from `initialize`, if it sent any.
    pub fn instructions(&self) -> Option<String> {
        self.service
            .peer_info()
            .and_then(|i| i.instructions.clone())
    }

    /// What the server says it is (`serverInfo.description`, else its title), if anything.
    pub fn description(&self) -> Option<String> {
        let peer = self.service.peer_info()?;
        let info = peer.server_info.as_ref()?;
        info.description
            .clone()
            .or_else(|| info.title.clone())
            .filter(|d| !d.trim().is_empty())
    }

    /// The stdio server's pid (None for HTTP).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Kills the server's process group (waiting until it is reaped) and cancels the session,
    /// while in-flight callers may still hold this connection.
    pub async fn kill_process(&self) {
        let process = self.process.lock().take();
        if let Some(process) = process {
            process.terminate().await;
        }
        self.service.cancellation_token().cancel();
    }

    /// Ends the session and kills the server's process group; waits until it is reaped.
    pub async fn close(mut self) {
        // Kill first: a hung server would otherwise hold up rmcp's graceful close.
        self.kill_process().await;
        let _ = self
            .service
            .close_with_timeout(Duration::from_secs(2))
            .await;
    }
}

/// On a 2026-07-28 session, list-changed notifications only come through a
/// `subscriptions/listen` stream; older sessions deliver them to [`Events`] unasked.
fn listen_for_tool_changes(
    service: &RunningService<RoleClient, Events>,
    server: &str,
    conn_id: u64,
    tx: mpsc::UnboundedSender<ConnectionEvent>,
) {
    let Some(info) = service.peer_info() else {
        return;
    };
    if info.protocol_version.to_string().as_str()
        < ProtocolVersion::V_2026_07_28.to_string().as_str()
    {
        return;
    }
    let peer = service.peer().clone();
    let server = server.to_string();
    synapse_command::tasks::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match peer.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(server = %server, "no tools/list_changed subscription: {e}");
                return;
            }
        };
        while let Ok(Some(notification)) = subscription.next().await {
            if matches!(
                notification,
                ServerNotification::ToolListChangedNotification(_)
            ) {
                let _ = tx.send(ConnectionEvent::ToolsChanged {
                    server: server.clone(),
                    conn_id,
                });
            }
        }
    });
}

/// Forwards the process exit as an event.
fn watch_exit(
    process: &ServerProcess,
    server: &str,
    conn_id: u64,
    tx: mpsc::UnboundedSender<ConnectionEvent>,
) {
    let mut exited = process.exit_watch();
    let server = server.to_string();
    synapse_command::tasks::spawn(async move {
        if let Ok(reason) = exited.wait_for(Option::is_some).await {
            let reason = reason.clone().unwrap_or_default();
            let _ = tx.send(ConnectionEvent::Exited {
                server,
                conn_id,
                reason,
            });
        }
    });
}
