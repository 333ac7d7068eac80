//! `Daemon` service: status and shutdown.

use std::sync::Arc;

use synapse_shared::proto::daemon_server::Daemon;
use synapse_shared::proto::{ShutdownRequest, ShutdownResponse, StatusRequest, StatusResponse};
use tonic::{Request, Response, Status};

use crate::state::DaemonState;

pub struct DaemonService {
    state: Arc<DaemonState>,
}

impl DaemonService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }
}

#[tonic::async_trait]
impl Daemon for DaemonService {
    async fn status(&self, _: Request<StatusRequest>) -> Result<Response<StatusResponse>, Status> {
        let s = &self.state;
        let (skills, _) = s.skills.counts();
        Ok(Response::new(StatusResponse {
            version: synapse_shared::VERSION.to_string(),
            pid: std::process::id(),
            uptime_ms: u64::try_from(s.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            socket_path: s.paths.socket().display().to_string(),
            home: s.paths.home().display().to_string(),
            log_dir: s.paths.logs_dir().display().to_string(),
            sessions: s.chats.live_count() as u32,
            settings_error: s.settings_error().unwrap_or_default(),
            skills: u32::try_from(skills).unwrap_or(u32::MAX),
            tools: u32::try_from(s.tools.count()).unwrap_or(u32::MAX),
        }))
    }

    async fn shutdown(
        &self,
        _: Request<ShutdownRequest>,
    ) -> Result<Response<ShutdownResponse>, Status> {
        tracing::info!("Shutdown requested by a client");
        self.state.shutdown.cancel();
        Ok(Response::new(ShutdownResponse {}))
    }
}
