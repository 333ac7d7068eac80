//! `Custom` service: the custom slash commands and sub-agents for the caller's folder.

use std::path::Path;
use std::sync::Arc;

use synapse_shared::proto::custom_server::Custom;
use synapse_shared::proto::{
    CustomAgentInfo, CustomCommandInfo, ListCustomRequest, ListCustomResponse,
};
use tonic::{Request, Response, Status};

use crate::agent::custom::CustomCatalog;

pub struct CustomService {
    catalog: Arc<CustomCatalog>,
}

impl CustomService {
    pub fn new(catalog: Arc<CustomCatalog>) -> Self {
        Self { catalog }
    }
}

#[tonic::async_trait]
impl Custom for CustomService {
    /// → `CustomCatalog::load` (daemon/src/agent/custom/mod.rs).
    async fn list(
        &self,
        request: Request<ListCustomRequest>,
    ) -> Result<Response<ListCustomResponse>, Status> {
        let cwd = request.into_inner().cwd;
        if !Path::new(&cwd).is_absolute() {
            return Err(Status::invalid_argument(format!(
                "cwd must be an absolute folder (got {cwd:?})"
            )));
        }
        let catalog = self.catalog.clone();
        let set = tokio::task::spawn_blocking(move || catalog.load(Path::new(&cwd)))
            .await
            .map_err(|e| Status::internal(e.to_string()))?;
        Ok(Response::new(ListCustomResponse {
            commands: set
                .commands
                .iter()
                .map(|c| CustomCommandInfo {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    argument_hint: c.argument_hint.clone().unwrap_or_default(),
                    source: c.scope.as_str().to_string(),
                    path: c.path.display().to_string(),
                    allowed_tools: c.allowed_tools.clone(),
                    model: c.model.clone().unwrap_or_default(),
                })
                .collect(),
            agents: set
                .agents
                .iter()
                .map(|a| CustomAgentInfo {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    tools: a.tools_text(),
                    model: a.model.clone().unwrap_or_default(),
                    source: a.scope.as_str().to_string(),
                    path: a.path.display().to_string(),
                })
                .collect(),
            held: set
                .held_commands
                .iter()
                .chain(&set.held_agents)
                .map(|(_, h)| h.why.clone())
                .collect(),
            held_commands: set.held_commands.iter().map(|(n, _)| n.clone()).collect(),
            problems: set.problems,
        }))
    }
}
