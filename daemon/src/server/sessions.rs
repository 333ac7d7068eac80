//! `Sessions` service: the conversations on disk, and where the live ones are (running, waiting
//! for an answer, idle; how many front ends are attached).

use std::sync::Arc;

use synapse_shared::proto::sessions_server::Sessions;
use synapse_shared::proto::{
    GetSessionRequest, GetSessionResponse, ListSessionsRequest, ListSessionsResponse, SessionInfo,
};
use tonic::{Request, Response, Status};

use crate::agent::room::RoomState;
use crate::agent::sessions::SessionSummary;
use crate::state::DaemonState;

pub struct SessionsService {
    state: Arc<DaemonState>,
}

impl SessionsService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }

    fn info(&self, s: SessionSummary) -> SessionInfo {
        let live = self.state.chats.live_view(&s.id);
        let (state, question) = match live.as_ref().map(|l| &l.state) {
            Some(RoomState::Running) => ("running", String::new()),
            Some(RoomState::Waiting(question)) => ("waiting", question.clone()),
            Some(RoomState::Idle) | None => ("idle", String::new()),
        };
        SessionInfo {
            live: live.is_some(),
            state: state.to_string(),
            question,
            front_ends: live.as_ref().map_or(0, |l| l.front_ends),
            detached: live.as_ref().is_some_and(|l| l.detached),
            id: s.id,
            title: s.title,
            cwd: s.cwd,
            model: s.model,
            created: s.created,
            updated: s.updated,
            messages: s.messages,
        }
    }
}

#[tonic::async_trait]
impl Sessions for SessionsService {
    /// → `ChatSessions::list` (daemon/src/agent/sessions.rs).
    async fn list(
        &self,
        request: Request<ListSessionsRequest>,
    ) -> Result<Response<ListSessionsResponse>, Status> {
        let limit = request.into_inner().limit as usize;
        let chats = self.state.chats.clone();
        let list = tokio::task::spawn_blocking(move || chats.list(limit))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(Status::from)?;
        Ok(Response::new(ListSessionsResponse {
            sessions: list.into_iter().map(|s| self.info(s)).collect(),
        }))
    }

    /// → `ChatSessions::get` (daemon/src/agent/sessions.rs).
    async fn get(
        &self,
        request: Request<GetSessionRequest>,
    ) -> Result<Response<GetSessionResponse>, Status> {
        let id = request.into_inner().id;
        let (summary, messages) = self.state.chats.get(&id).map_err(Status::from)?;
        Ok(Response::new(GetSessionResponse {
            info: Some(self.info(summary)),
            messages_json: serde_json::to_string(&messages).unwrap_or_default(),
        }))
    }
}
