//! What a connection asks a server besides tools: whether it offers (and lists) resources and prompts,
//! `resources/list` (with templates), `resources/read`, `prompts/list` and `prompts/get` — each
//! answered as wire JSON, within the call timeout.

use serde_json::{Map, Value};

use super::{ConnectionError, McpConnection};

impl McpConnection {
    /// Whether the server said in `initialize` that it has resources / prompts.
    pub fn offers(&self) -> (bool, bool) {
        self.service
            .peer_info()
            .map(|i| {
                (
                    i.capabilities.resources.is_some(),
                    i.capabilities.prompts.is_some(),
                )
            })
            .unwrap_or((false, false))
    }

    /// Whether the server listed any resource or template when it connected (a server that
    /// declares the capability and lists none offers nothing to read).
    pub fn lists_resources(&self) -> bool {
        self.lists_resources
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Asks a server that declares resources whether it lists any; a failed listing counts as
    /// none (the commands would only print the failure).
    pub(super) async fn note_listed_resources(&self) {
        if !self.offers().0 {
            return;
        }
        let listed = match self.resources().await {
            Ok((resources, templates)) => !resources.is_empty() || !templates.is_empty(),
            Err(e) => {
                tracing::info!(server = %self.server_name, "resources/list failed: {e}");
                false
            }
        };
        self.lists_resources
            .store(listed, std::sync::atomic::Ordering::Relaxed);
    }

    /// `resources/list` and `resources/templates/list` (every page), as wire JSON.
    pub async fn resources(&self) -> Result<(Vec<Value>, Vec<Value>), ConnectionError> {
        let list = async {
            let resources = self.service.list_all_resources().await?;
            // Templates are optional even for servers with resources.
            let templates = self
                .service
                .list_all_resource_templates()
                .await
                .unwrap_or_default();
            Ok::<_, rmcp::ServiceError>((resources, templates))
        };
        match tokio::time::timeout(self.call_timeout, list).await {
            Ok(Ok((r, t))) => Ok((to_values(&r), to_values(&t))),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }

    /// `resources/read` of `uri`, as wire JSON.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ConnectionError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(self.call_timeout, self.service.read_resource(params)).await {
            Ok(Ok(r)) => serde_json::to_value(&r).map_err(|e| ConnectionError::Lost(e.to_string())),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }

    /// `prompts/list` (every page), as wire JSON.
    pub async fn prompts(&self) -> Result<Vec<Value>, ConnectionError> {
        match tokio::time::timeout(self.call_timeout, self.service.list_all_prompts()).await {
            Ok(Ok(p)) => Ok(to_values(&p)),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }

    /// `prompts/get` of `name` with string `arguments`, as wire JSON.
    pub async fn prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, ConnectionError> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        match tokio::time::timeout(self.call_timeout, self.service.get_prompt(params)).await {
            Ok(Ok(r)) => serde_json::to_value(&r).map_err(|e| ConnectionError::Lost(e.to_string())),
            Ok(Err(e)) => Err(self.classify(e, ConnectionError::Lost)),
            Err(_) => Err(ConnectionError::CallTimeout(self.call_timeout)),
        }
    }
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
}
