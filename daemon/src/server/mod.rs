//! The gRPC layer: thin services that decode a request, call the owning subsystem and map its
//! error to a status. Every request first passes the peer-uid check.

mod daemon;
mod skills;

use std::sync::Arc;

use synapse_shared::proto::daemon_server::DaemonServer;
use synapse_shared::proto::skills_server::SkillsServer;
use tokio::net::UnixListener;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::service::InterceptorLayer;
use tonic::transport::Server;

use crate::lifecycle::peer::check_peer;
use crate::state::DaemonState;

/// How long in-flight calls get to finish after shutdown starts before the daemon exits anyway.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves every service on `listener` until `state.shutdown` is cancelled.
pub async fn serve(state: Arc<DaemonState>, listener: UnixListener) -> anyhow::Result<()> {
    let incoming = UnixListenerStream::new(listener);
    let shutdown = state.shutdown.clone();
    let server = Server::builder()
        .layer(InterceptorLayer::new(check_peer))
        .add_service(DaemonServer::new(daemon::DaemonService::new(state.clone())))
        .add_service(SkillsServer::new(skills::SkillsService::new(
            state.skills.clone(),
            state.tools.clone(),
        )))
        .serve_with_incoming_shutdown(incoming, shutdown.clone().cancelled_owned());
    tokio::select! {
        result = server => result?,
        _ = async { shutdown.cancelled().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            tracing::warn!("calls still running after {SHUTDOWN_GRACE:?}; stopping anyway");
        }
    }
    Ok(())
}
