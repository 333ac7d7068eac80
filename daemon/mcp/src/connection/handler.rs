//! The client side of an MCP session as rmcp sees it ([`Events`]): identifies Synapse, declares
//! `roots`, form `elicitation` and `sampling`, forwards list-changed notifications to the
//! manager, answers `roots/list` with the folders the manager serves, routes
//! `notifications/progress` to the call that asked for them, and a server's forms and sampling
//! requests to the session whose call it serves ([`asks`](super::asks)); a session's calls are
//! made with [`McpConnection::call_watched`].

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use super::asks::CallAskers;
use super::{ConnectionEvent, McpConnection, Roots};

/// The rmcp client handler: identifies Synapse and forwards list-changed notifications.
pub(super) struct Events {
    pub(super) server: String,
    pub(super) conn_id: u64,
    pub(super) tx: mpsc::UnboundedSender<ConnectionEvent>,
    pub(super) roots: Roots,
    /// Calls waiting for `notifications/progress`, by their progress token.
    pub(super) progress: ProgressWatchers,
    /// Who answers the server's forms and sampling requests of each call in flight.
    pub(super) askers: CallAskers,
}

pub(super) type ProgressWatchers = Arc<super::progress::ProgressRoutes>;

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
        self.progress.deliver(token, line);
    }

    // Roots are deprecated from the 2026 protocol on (rmcp marks them so) but servers of the
    // 2025 revisions ask for them.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .roots
            .as_ref()
            .map(|r| r())
            .unwrap_or_default()
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

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(super::asks::elicit(&self.server, &self.askers, request, context).await)
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        super::asks::sample(&self.server, &self.askers, params, context).await
    }

    // Sampling is deprecated from the 2026 protocol on; servers of the 2025 revisions use it.
    #[allow(deprecated)]
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.roots.is_some() {
            let mut roots = rmcp::model::RootsCapabilities::default();
            roots.list_changed = Some(true);
            capabilities.roots = Some(roots);
        }
        // Forms, checked against their schema before they are sent, and URL mode (the user is
        // shown the page and says whether they went through it).
        capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(
                    rmcp::model::FormElicitationCapability::new().with_schema_validation(true),
                )
                .with_url(rmcp::model::UrlElicitationCapability::new()),
        );
        // Text messages, no tools and no included context.
        capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("synapse", synapse_shared::VERSION),
        )
    }
}

impl McpConnection {
    /// `tools/call` made for a session: its `notifications/progress` (matched by the token rmcp
    /// gave the request) go to `sink`, and the server's forms and sampling requests while it runs
    /// to `asker`. Dropped before the answer (a timeout, a cancel), the request is cancelled on
    /// the wire, as rmcp's own `call_tool` does, and its open questions are withdrawn.
    pub(super) async fn call_watched(
        &self,
        params: CallToolRequestParams,
        sink: Option<synapse_command::progress::ProgressSink>,
        asker: Option<synapse_command::asker::AskerHandle>,
    ) -> Result<rmcp::model::CallToolResult, rmcp::ServiceError> {
        let peer = self.service.peer().clone();
        let request =
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        // Registered before the send: a server may ask before the send returns.
        let asking = self.askers.register(None, asker);
        let handle = peer
            .send_request_with_option(request, rmcp::service::PeerRequestOptions::no_options())
            .await?;
        asking.set_request(handle.id.clone());
        let token = progress_key(&handle.progress_token);
        if let Some(sink) = sink {
            self.progress.watch(token.clone(), sink);
        }
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
        self.watchers.unwatch(&self.token);
        if let Some((peer, id)) = self.pending.take() {
            synapse_command::tasks::spawn(async move {
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
