//! `Mcp.Login` and `Mcp.Logout`: the wire side of `synapse mcp login|logout`. A login runs in a
//! task owned by the daemon and streams two events — the authorization URL, then the outcome —
//! and stops (freeing its loopback port) as soon as the client goes away.

use std::pin::Pin;
use std::time::Duration;

use futures::Stream;
use synapse_shared::proto::mcp_login_event::Event;
use synapse_shared::proto::{McpLoginDone, McpLoginEvent, McpLoginRequest, McpLogoutResponse};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use synapse_mcp::McpManager;
use synapse_mcp::manager::AuthOutcome;
use synapse_mcp::oauth::{LOGIN_TIMEOUT_DEFAULT, LOGIN_TIMEOUT_MAX, OAuthError};

pub type LoginStream = Pin<Box<dyn Stream<Item = Result<McpLoginEvent, Status>> + Send>>;

/// Starts the login of `request.server` with `manager` (the caller's project's, else the user's).
pub fn login(manager: McpManager, request: McpLoginRequest) -> LoginStream {
    let (tx, rx) = mpsc::channel(4);
    let timeout = match request.timeout_sec {
        0 => LOGIN_TIMEOUT_DEFAULT,
        secs => Duration::from_secs(secs.into()).min(LOGIN_TIMEOUT_MAX),
    };
    synapse_command::tasks::spawn(async move {
        let url_tx = tx.clone();
        let show = move |url: String| {
            let event = Event::AuthorizationUrl(url);
            let _ = url_tx.try_send(Ok(McpLoginEvent { event: Some(event) }));
        };
        let result = tokio::select! {
            result = manager.login(&request.server, timeout, show) => result,
            () = tx.closed() => Err(OAuthError::Cancelled),
        };
        let item = match result {
            Ok(outcome) => Ok(McpLoginEvent {
                event: Some(Event::Done(done(outcome))),
            }),
            Err(e) => {
                tracing::info!(server = %request.server, "MCP OAuth login failed: {e}");
                Err(super::status::oauth_status(e))
            }
        };
        let _ = tx.send(item).await;
    });
    Box::pin(ReceiverStream::new(rx))
}

fn done(outcome: AuthOutcome) -> McpLoginDone {
    McpLoginDone {
        note: outcome.note,
        server: outcome.status.map(|s| super::mcp::wire_server(s, false)),
    }
}

/// Forgets the tokens of `server`.
pub async fn logout(manager: McpManager, server: &str) -> Result<McpLogoutResponse, Status> {
    let outcome = manager
        .logout(server)
        .await
        .map_err(super::status::oauth_status)?;
    Ok(McpLogoutResponse {
        removed: outcome.removed,
        note: outcome.note,
    })
}
