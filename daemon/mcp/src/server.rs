//! One configured server inside the manager: its config, its connection state machine, and the
//! reconnect-with-backoff rule.
//!
//! States: `Disabled` → never connects. `Connecting` → a connect is in flight (callers wait on the
//! connect lock). `Ready` → calls go to the live connection. `Failed` → the reason is shown; the
//! next call after `retry_at` reconnects. A server that dropped from `Ready` retries at once; each
//! further failed attempt doubles the wait (1 s … [`BACKOFF_MAX`]). `NeedsLogin` → the server
//! wants OAuth authorization it does not have: no call reconnects it (each says which
//! `synapse mcp login` to run); a login, a logout or a refresh does.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::config::ServerConfig;
use super::connection::{ConnectionError, McpConnection};

/// Longest wait between reconnect attempts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(60);

/// What the manager knows about one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Map<String, Value>,
    /// The tool's `readOnlyHint` and `destructiveHint` annotations (the permission policy's
    /// defaults; never trusted over the user's rules).
    pub hints: (Option<bool>, Option<bool>),
}

impl ToolInfo {
    pub fn from_rmcp(tool: &rmcp::model::Tool) -> ToolInfo {
        ToolInfo {
            name: tool.name.to_string(),
            description: tool.description.as_deref().map(str::to_string),
            input_schema: (*tool.input_schema).clone(),
            hints: tool
                .annotations
                .as_ref()
                .map(|a| (a.read_only_hint, a.destructive_hint))
                .unwrap_or_default(),
        }
    }
}

/// The connection state of one server.
#[derive(Debug, Clone)]
pub enum ServerState {
    Disabled,
    Connecting,
    Ready {
        conn: Arc<McpConnection>,
    },
    Failed {
        reason: String,
        attempts: u32,
        retry_at: Instant,
    },
    NeedsLogin {
        /// The login command to run and why.
        reason: String,
    },
}

/// Why a server has no live connection for a call or a (re)connect.
#[derive(Debug, thiserror::Error)]
pub enum NotConnected {
    /// `"enabled": false` in its config.
    #[error("server is disabled in its config")]
    Disabled,
    /// The last connect failed and the backoff before the next attempt has not passed.
    #[error("{reason} (next reconnect attempt in {:.1}s)", wait.as_secs_f64())]
    Backoff {
        /// Why the last attempt failed.
        reason: String,
        /// How long until the next attempt.
        wait: Duration,
    },
    /// It wants an OAuth login first (the text names the command).
    #[error("{0}")]
    NeedsLogin(String),
    /// This connect attempt failed.
    #[error(transparent)]
    Connect(#[from] ConnectionError),
}

/// A snapshot for listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateKind {
    Disabled,
    Connecting,
    Ready,
    Failed,
    NeedsLogin,
    /// A project server in a folder the user has not trusted (never started).
    Untrusted,
    /// A project server the user has not approved yet (never started).
    NeedsApproval,
    /// A project server whose entry changed since the user approved it (not started).
    Held,
}

/// One configured server.
#[derive(Debug)]
pub struct Server {
    config: Mutex<ServerConfig>,
    state: Mutex<ServerState>,
    /// The tools from the last successful listing (kept while failed, so help and wrappers stay).
    tools: Mutex<Option<Arc<Vec<ToolInfo>>>>,
    connect_lock: tokio::sync::Mutex<()>,
}

static CONN_IDS: AtomicU64 = AtomicU64::new(1);

impl Server {
    pub fn new(config: ServerConfig) -> Server {
        let state = if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        };
        Server {
            config: Mutex::new(config),
            state: Mutex::new(state),
            tools: Mutex::new(None),
            connect_lock: tokio::sync::Mutex::new(()),
        }
    }

    pub fn config(&self) -> ServerConfig {
        self.config.lock().clone()
    }

    /// Replaces the config when only wrapper-level settings (tool filters) changed.
    pub fn set_config(&self, config: ServerConfig) {
        *self.config.lock() = config;
    }

    pub fn state(&self) -> ServerState {
        self.state.lock().clone()
    }

    pub fn tools(&self) -> Option<Arc<Vec<ToolInfo>>> {
        self.tools.lock().clone()
    }

    pub fn set_tools(&self, tools: Vec<ToolInfo>) {
        *self.tools.lock() = Some(Arc::new(tools));
    }

    /// The live connection, if ready.
    pub fn ready(&self) -> Option<Arc<McpConnection>> {
        match &*self.state.lock() {
            ServerState::Ready { conn } => Some(conn.clone()),
            _ => None,
        }
    }

    /// Connects unless a connection is live; waits for a connect already in flight. A failed
    /// server is retried only once its backoff has passed. Returns the connection or the reason.
    pub async fn ensure_connected(
        &self,
        events: &super::connection::Link,
    ) -> Result<Arc<McpConnection>, NotConnected> {
        if let Some(conn) = self.ready() {
            return Ok(conn);
        }
        self.check_retry_due()?;
        let _guard = self.connect_lock.lock().await;
        // Someone else may have finished while we waited.
        if let Some(conn) = self.ready() {
            return Ok(conn);
        }
        self.check_retry_due()?;
        self.connect_locked(events).await
    }

    /// Forces a new connection (after a login or logout), replacing any live one.
    pub async fn reconnect(
        &self,
        events: &super::connection::Link,
    ) -> Result<Arc<McpConnection>, NotConnected> {
        let _guard = self.connect_lock.lock().await;
        if !self.config().enabled {
            return Err(NotConnected::Disabled);
        }
        self.connect_locked(events).await
    }

    /// Connects unless a connection is live, without waiting out a backoff: what a start or a
    /// refresh asks of the servers it put in place or found failed. A connection a call made
    /// meanwhile (a call can arrive between the server's insertion and this) is kept, with the
    /// call in flight on it.
    pub async fn connect_unless_ready(
        &self,
        events: &super::connection::Link,
    ) -> Result<Arc<McpConnection>, NotConnected> {
        let _guard = self.connect_lock.lock().await;
        if let Some(conn) = self.ready() {
            return Ok(conn);
        }
        if !self.config().enabled {
            return Err(NotConnected::Disabled);
        }
        self.connect_locked(events).await
    }

    fn check_retry_due(&self) -> Result<(), NotConnected> {
        match &*self.state.lock() {
            ServerState::Disabled => Err(NotConnected::Disabled),
            ServerState::Failed {
                reason, retry_at, ..
            } if *retry_at > Instant::now() => Err(NotConnected::Backoff {
                reason: reason.clone(),
                wait: retry_at.saturating_duration_since(Instant::now()),
            }),
            ServerState::NeedsLogin { reason } => Err(NotConnected::NeedsLogin(reason.clone())),
            _ => Ok(()),
        }
    }

    async fn connect_locked(
        &self,
        events: &super::connection::Link,
    ) -> Result<Arc<McpConnection>, NotConnected> {
        let config = self.config();
        let previous = std::mem::replace(&mut *self.state.lock(), ServerState::Connecting);
        let attempts = match previous {
            ServerState::Ready { conn } => {
                close_shared(conn).await;
                0
            }
            ServerState::Failed { attempts, .. } => attempts,
            _ => 0,
        };
        let started = Instant::now();
        let conn_id = CONN_IDS.fetch_add(1, Ordering::Relaxed);
        match McpConnection::connect(&config, conn_id, events.clone()).await {
            Ok((conn, tools)) => {
                tracing::info!(
                    server = %config.name, tools = tools.len(), pid = ?conn.pid(),
                    elapsed_ms = started.elapsed().as_millis() as u64, "MCP server connected"
                );
                self.set_tools(tools.iter().map(ToolInfo::from_rmcp).collect());
                let conn = Arc::new(conn);
                *self.state.lock() = ServerState::Ready { conn: conn.clone() };
                Ok(conn)
            }
            Err(e @ ConnectionError::NeedsLogin { .. }) => {
                let reason = e.to_string();
                tracing::info!(server = %config.name, "MCP server needs login: {reason}");
                *self.state.lock() = ServerState::NeedsLogin { reason };
                Err(e.into())
            }
            Err(e) => {
                let reason = e.to_string();
                tracing::warn!(server = %config.name, "MCP server failed to connect: {reason}");
                self.set_failed(reason, attempts + 1);
                Err(e.into())
            }
        }
    }

    /// Marks the server failed. `attempts` counts failed connects in a row: 0 retries at once.
    pub fn set_failed(&self, reason: String, attempts: u32) {
        let wait = match attempts {
            0 => Duration::ZERO,
            n => Duration::from_secs(1u64 << (n - 1).min(6)).min(BACKOFF_MAX),
        };
        *self.state.lock() = ServerState::Failed {
            reason,
            attempts,
            retry_at: Instant::now() + wait,
        };
    }

    /// Drops a live connection `conn_id` after it broke (crash, hang, lost transport) and kills it.
    pub async fn connection_broke(&self, conn_id: u64, reason: String) {
        let failed = ServerState::Failed {
            reason,
            attempts: 0,
            retry_at: Instant::now(),
        };
        self.drop_connection(conn_id, failed).await;
    }

    /// Replaces the live connection `conn_id` (if it still is) with `next` and closes it.
    async fn drop_connection(&self, conn_id: u64, next: ServerState) {
        let dropped = {
            let mut state = self.state.lock();
            match &*state {
                ServerState::Ready { conn } if conn.conn_id == conn_id => {
                    let conn = conn.clone();
                    *state = next;
                    Some(conn)
                }
                _ => None,
            }
        };
        if let Some(conn) = dropped {
            close_shared(conn).await;
        }
    }

    /// Stops the server for good (removed from config, or daemon shutdown).
    pub async fn stop(&self, why: &str) {
        let _guard = self.connect_lock.lock().await;
        let previous = std::mem::replace(
            &mut *self.state.lock(),
            ServerState::Failed {
                reason: why.to_string(),
                attempts: 0,
                retry_at: Instant::now() + BACKOFF_MAX,
            },
        );
        if let ServerState::Ready { conn } = previous {
            close_shared(conn).await;
        }
    }

    pub fn state_kind(&self) -> (StateKind, String) {
        match &*self.state.lock() {
            ServerState::Disabled => (StateKind::Disabled, "disabled in config".into()),
            ServerState::Connecting => (StateKind::Connecting, String::new()),
            ServerState::Ready { .. } => (StateKind::Ready, String::new()),
            ServerState::Failed { reason, .. } => (StateKind::Failed, reason.clone()),
            ServerState::NeedsLogin { reason } => (StateKind::NeedsLogin, reason.clone()),
        }
    }

    /// Records a broken call: the connection is dropped so the next call reconnects.
    pub async fn call_failed(&self, conn: &McpConnection, error: &ConnectionError) {
        if let ConnectionError::NeedsLogin { .. } = error {
            let reason = error.to_string();
            tracing::info!(server = %self.config().name, "MCP server needs login: {reason}");
            let next = ServerState::NeedsLogin { reason };
            self.drop_connection(conn.conn_id, next).await;
        } else if error.breaks_connection() {
            self.connection_broke(conn.conn_id, error.to_string()).await;
        }
    }
}

/// Closes a connection that in-flight calls may still hold: kills the process now; the rmcp
/// session ends when the last holder lets go.
async fn close_shared(conn: Arc<McpConnection>) {
    match Arc::try_unwrap(conn) {
        Ok(conn) => conn.close().await,
        Err(shared) => shared.kill_process().await,
    }
}
