//! The gRPC layer: thin services that decode a request, call the owning subsystem and map its
//! error to a status. Every request first passes the peer-uid check.

mod chat;
mod chat_wire;
mod custom;
mod daemon;
mod mcp;
mod mcp_auth;
mod mcp_edit;
mod plugins;
mod sessions;
mod skills;
mod skills_growth;
mod status;
mod tools;

use std::sync::Arc;

use synapse_shared::proto::chat_server::ChatServer;
use synapse_shared::proto::custom_server::CustomServer;
use synapse_shared::proto::daemon_server::DaemonServer;
use synapse_shared::proto::mcp_server::McpServer;
use synapse_shared::proto::plugins_server::PluginsServer;
use synapse_shared::proto::sessions_server::SessionsServer;
use synapse_shared::proto::skills_server::SkillsServer;
use synapse_shared::proto::tools_server::ToolsServer;
use tokio::net::UnixListener;
use tonic::service::InterceptorLayer;
use tonic::transport::Server;

use crate::lifecycle::peer::{check_peer, incoming};
use crate::state::DaemonState;

/// How long in-flight calls get to finish after shutdown starts before the daemon exits anyway.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves every service on `listener` until `state.shutdown` is cancelled.
pub async fn serve(state: Arc<DaemonState>, listener: UnixListener) -> anyhow::Result<()> {
    // Each connection's peer (uid, sandbox state) is captured as it is accepted.
    let incoming = incoming(listener);
    let shutdown = state.shutdown.clone();
    let reaper = state.shell.spawn_idle_reaper();
    let chat_reaper = spawn_chat_reaper(state.clone());
    let server = Server::builder()
        .layer(InterceptorLayer::new(check_peer))
        .add_service(DaemonServer::new(daemon::DaemonService::new(state.clone())))
        .add_service(ToolsServer::new(tools::ToolsService::new(state.clone())))
        .add_service(ChatServer::new(chat::ChatService::new(state.clone())))
        .add_service(SessionsServer::new(sessions::SessionsService::new(
            state.clone(),
        )))
        .add_service(McpServer::new(mcp::McpService::new(state.clone())))
        .add_service(PluginsServer::new(plugins::PluginsService::new(
            state.clone(),
        )))
        .add_service(CustomServer::new(custom::CustomService::new(
            state.custom.clone(),
        )))
        .add_service(SkillsServer::new(skills::SkillsService::new(
            state.skills.clone(),
            state.tools.clone(),
            state.skill_agent.clone(),
        )))
        .serve_with_incoming_shutdown(incoming, shutdown.clone().cancelled_owned());
    tokio::select! {
        result = server => result?,
        _ = async { shutdown.cancelled().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            tracing::warn!("calls still running after {SHUTDOWN_GRACE:?}; stopping anyway");
        }
    }
    reaper.abort();
    chat_reaper.abort();
    state.chats.cancel_all();
    // No shell, and nothing a shell started, outlives the daemon.
    state.shell.close_all().await;
    Ok(())
}

/// How long a chat session with no client and no running turn stays loaded.
pub const CHAT_IDLE_UNLOAD: std::time::Duration = std::time::Duration::from_secs(10 * 60);

fn spawn_chat_reaper(state: Arc<DaemonState>) -> tokio::task::JoinHandle<Option<()>> {
    synapse_command::tasks::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            tick.tick().await;
            for id in state.chats.unload_idle(CHAT_IDLE_UNLOAD) {
                tracing::info!(session = %id, "unloaded idle chat session");
                state.shell.close(&id).await;
            }
        }
    })
}
