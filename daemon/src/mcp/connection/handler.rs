//! The client side of an MCP session as rmcp sees it ([`Events`]): identifies Synapse, declares
//! `roots`, forwards list-changed notifications to the manager, answers `roots/list` with the
//! folders the manager serves, and routes `notifications/progress` to the call that asked for
//! them ([`McpConnection::call_watched`]).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use super::{ConnectionEvent, McpConnection, Roots};

/// The rmcp client handler: identifies Synapse and forwards list-changed notifications.
pub(super) struct Events {
    pub(super) server: String,
    pub(super) conn_id: u64,
    pub(super) tx: mpsc::UnboundedSender<ConnectionEvent>,
    pub(super) roots: Roots,
    /// Calls waiting for `notifications/progress`, by their progress token.
    pub(super) progress: ProgressWatchers,
}

pub(super) type ProgressWatchers = Arc<Mutex<HashMap<String, crate::shell::ProgressSink>>>;

impl ClientHandler for Events {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.tx.send(ConnectionEvent::ToolsChanged {
            server: self.server.clone(),
            conn_id: self.conn_id,
        });
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = progress_key(&params.progress_token);
        let Some(sink) = self.progress.lock().get(&token).cloned() else {
            return;
        };
        let amount = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => params.progress.to_string(),
        };
        let line = match params.message {
            Some(m) if !m.trim().is_empty() => {
                format!("{}: progress {amount}: {}", self.server, m.trim())
            }
            _ => format!("{}: progress {amount}", self.server),
        };
        sink.report(line, 0);
    }

    // Roots are deprecated from the 2026 protocol on (rmcp marks them so) but servers of the
    // 2025 revisions ask for them.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = (self.roots)()
            .into_iter()
            .filter_map(|dir| {
                let uri = reqwest::Url::from_file_path(&dir).ok()?;
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                let root = rmcp::model::Root::new(uri.to_string());
                Some(match name {
                    Some(n) => root.with_name(n),
                    None => root,
                })
            })
            .collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    fn get_info(&self) -> ClientConfig {
        let mut roots = rmcp::model::RootsCapabilities::default();
        roots.list_changed = Some(true);
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(roots);
        ClientConfig::new(
            capabilities,
            Implementation::new("synapse", synapse_shared::VERSION),
        )
    }
}

impl McpConnection {
    /// `tools/call` whose `notifications/progress` (matched by the token rmcp gave the request)
    /// go to `sink`. Dropped before the answer (a timeout, a cancel), the request is cancelled on
    /// the wire, as rmcp's own `call_tool` does.
    pub(super) async fn call_watched(
        &self,
        params: CallToolRequestParams,
        sink: crate::shell::ProgressSink,
    ) -> Result<rmcp::model::CallToolResult, rmcp::ServiceError> {
        let peer = self.service.peer().clone();
        let request =
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, rmcp::service::PeerRequestOptions::no_options())
            .await?;
        let token = progress_key(&handle.progress_token);
        self.progress.lock().insert(token.clone(), sink);
        let mut watch = ProgressWatch {
            watchers: self.progress.clone(),
            token,
            pending: Some((peer, handle.id.clone())),
        };
        let result = handle.await_response().await;
        watch.pending = None;
        match result? {
            rmcp::model::ServerResult::CallToolResult(r) => Ok(r),
            _ => Err(rmcp::ServiceError::UnexpectedResponse),
        }
    }
}

/// Removes a call's progress watcher when the call ends; a call dropped before its answer is
/// cancelled on the wire (`notifications/cancelled`).
struct ProgressWatch {
    watchers: ProgressWatchers,
    token: String,
    pending: Option<(rmcp::service::Peer<RoleClient>, rmcp::model::RequestId)>,
}

impl Drop for ProgressWatch {
    fn drop(&mut self) {
        self.watchers.lock().remove(&self.token);
        if let Some((peer, id)) = self.pending.take() {
            crate::lifecycle::tasks::spawn(async move {
                let param = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the call was stopped".into()),
                );
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

fn progress_key(token: &rmcp::model::ProgressToken) -> String {
    match &token.0 {
        rmcp::model::NumberOrString::String(s) => s.to_string(),
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
    }
}
