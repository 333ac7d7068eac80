//! Task-augmented tool calls (MCP tasks, 2025-11-25). A tool whose `execution.taskSupport` is
//! `"required"` refuses a plain `tools/call` ("requires task augmentation"); Synapse then runs it
//! as a task: `tools/call` with a `task` field, `tasks/get` at the server's poll interval — each
//! status message shown as the call's progress — until the task ends, then `tasks/result`, which
//! is the tool's result as a plain call would have given it. A call dropped on the way (a timeout,
//! the user's cancel) sends `tasks/cancel`. So the model's `mcp:<server>:<tool>` works like any
//! other; only slower. Which tools need it is learnt from the server's answer (rmcp's tool type
//! does not carry `execution`) and remembered for the connection, so later calls go straight to
//! a task.

use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use serde_json::{Map, Value, json};

use super::McpConnection;

/// How long a task may live on the server (its `ttl`).
const TASK_TTL_MS: u64 = 10 * 60 * 1000;
/// Poll interval when the server suggests none, and the bounds of what it may suggest.
const POLL_DEFAULT: Duration = Duration::from_millis(500);
const POLL_MIN: Duration = Duration::from_millis(100);
const POLL_MAX: Duration = Duration::from_secs(5);

/// Whether a plain call's answer says the tool must run as a task: an error result whose text
/// says so. Only error results are looked at, so a normal answer costs one field lookup.
pub(super) fn refuses_plain_call(result: &Value) -> bool {
    if result["isError"] != Value::Bool(true) {
        return false;
    }
    result["content"].as_array().is_some_and(|blocks| {
        blocks.iter().filter_map(|b| b["text"].as_str()).any(|t| {
            t.contains("requires task augmentation") || t.contains("taskSupport: 'required'")
        })
    })
}

/// Whether a JSON-RPC error says the same.
pub(super) fn error_refuses_plain_call(e: &rmcp::ServiceError) -> bool {
    matches!(e, rmcp::ServiceError::McpError(data)
        if data.message.contains("requires task augmentation")
            || data.message.contains("taskSupport"))
}

impl McpConnection {
    /// Whether `tool` is known to need a task.
    pub(super) fn needs_task(&self, tool: &str) -> bool {
        self.task_tools.lock().contains(tool)
    }

    /// Runs `tool` as a task to its end; the result is the tool's, as wire JSON.
    pub(super) async fn call_as_task(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        sink: Option<synapse_command::progress::ProgressSink>,
    ) -> Result<Value, rmcp::ServiceError> {
        self.task_tools.lock().insert(tool.to_string());
        let peer = self.service.peer().clone();
        let created = raw(
            &peer,
            "tools/call",
            json!({"name": tool, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}}),
        )
        .await?;
        let Some(task_id) = created["task"]["taskId"].as_str().map(str::to_string) else {
            // The server ran it at once after all: that is the result.
            return Ok(created);
        };
        let mut cancel = CancelOnDrop {
            peer: Some(peer.clone()),
            task_id: task_id.clone(),
        };
        let mut status = created["task"].clone();
        let mut last_message = String::new();
        loop {
            if let Some(message) = status["statusMessage"].as_str()
                && message != last_message
                && let Some(sink) = &sink
            {
                sink.report(
                    format!(
                        "{}: task {}: {message}",
                        self.server_name,
                        status["status"].as_str().unwrap_or("working")
                    ),
                    0,
                );
                last_message = message.to_string();
            }
            match status["status"].as_str() {
                Some("completed") | Some("failed") | Some("cancelled") => break,
                _ => {}
            }
            let poll = status["pollInterval"]
                .as_u64()
                .map_or(POLL_DEFAULT, Duration::from_millis)
                .clamp(POLL_MIN, POLL_MAX);
            tokio::time::sleep(poll).await;
            status = raw(&peer, "tasks/get", json!({"taskId": task_id})).await?;
        }
        cancel.peer = None;
        match status["status"].as_str() {
            Some("cancelled") => Ok(json!({
                "content": [{"type": "text", "text": format!(
                    "the task was cancelled by the server{}",
                    status["statusMessage"].as_str().map(|m| format!(": {m}")).unwrap_or_default()
                )}],
                "isError": true
            })),
            _ => raw(&peer, "tasks/result", json!({"taskId": task_id})).await,
        }
    }
}

/// Sends `method` with `params` and returns the answer as wire JSON, whichever of rmcp's result
/// types it was read into.
async fn raw(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
    method: &str,
    params: Value,
) -> Result<Value, rmcp::ServiceError> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let answer: ServerResult = peer.send_request(request).await?;
    let value = match answer {
        ServerResult::CustomResult(c) => c.0,
        other => serde_json::to_value(&other).unwrap_or(Value::Null),
    };
    Ok(value)
}

/// Sends `tasks/cancel` for a task whose call was dropped before it ended.
struct CancelOnDrop {
    peer: Option<rmcp::service::Peer<rmcp::RoleClient>>,
    task_id: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take() {
            let task_id = std::mem::take(&mut self.task_id);
            synapse_command::tasks::spawn(async move {
                let _ = raw(&peer, "tasks/cancel", json!({"taskId": task_id})).await;
            });
        }
    }
}
