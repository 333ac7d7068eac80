//! The facts stream-json's `init` line reports that the session's opening does not carry, asked
//! of the daemon before the first turn: the MCP servers the session can use and their states,
//! the user-invocable skills and custom commands (`/name`), and the sub-agents (`task:<name>` commands, found the way
//! `tools search` finds them). A question that fails leaves its list empty: the run goes on.

use serde_json::json;
use synapse_shared::proto::custom_client::CustomClient;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{
    ListCustomRequest, ListSkillsRequest, McpListRequest, McpServerState, SearchToolsRequest,
};
use tonic::transport::Channel;

use super::stream_json::InitFacts;
use crate::cli::mcp::{caller_cwd, caller_env};

/// Agent commands listed at most (`tools search` caps its answer).
const AGENTS_MAX: u32 = 200;

pub async fn init_facts(channel: Channel) -> InitFacts {
    let cwd = caller_cwd();
    let mut facts = InitFacts::default();
    let servers = McpClient::new(channel.clone())
        .list(McpListRequest {
            include_tools: false,
            cwd: cwd.clone(),
            env: caller_env(),
        })
        .await;
    if let Ok(r) = servers {
        facts.mcp_servers = r
            .into_inner()
            .servers
            .iter()
            .map(|s| json!({"name": s.name, "status": server_status(s.state())}))
            .collect();
    }
    let mut skills = SkillsClient::new(channel.clone());
    if let Ok(r) = skills.list(ListSkillsRequest { cwd: cwd.clone() }).await {
        facts.slash_commands = r
            .into_inner()
            .skills
            .into_iter()
            .filter(|s| s.user_invocable && s.enabled)
            .map(|s| s.name)
            .collect();
    }
    // Custom commands (commands/*.md) a skill of the same name does not shadow.
    let custom = CustomClient::new(channel)
        .list(ListCustomRequest { cwd: cwd.clone() })
        .await;
    if let Ok(r) = custom {
        for command in r.into_inner().commands {
            if !facts.slash_commands.contains(&command.name) {
                facts.slash_commands.push(command.name);
            }
        }
    }
    let agents = skills
        .search_tools(SearchToolsRequest {
            query: "^task:[^:]+$".into(),
            limit: AGENTS_MAX,
            cwd,
        })
        .await;
    if let Ok(r) = agents {
        facts.agents = r
            .into_inner()
            .hits
            .into_iter()
            .filter_map(|h| h.command.strip_prefix("task:").map(str::to_string))
            .collect();
    }
    facts
}

/// Claude Code's word for a server's state where it has one, Synapse's otherwise.
fn server_status(state: McpServerState) -> String {
    match state {
        McpServerState::Ready => "connected".into(),
        McpServerState::Connecting | McpServerState::Unspecified => "pending".into(),
        McpServerState::Failed => "failed".into(),
        McpServerState::Disabled => "disabled".into(),
        McpServerState::NeedsLogin => "needs-auth".into(),
        // `untrusted`, `needs_approval`, `held`: waiting for the user.
        other => other
            .as_str_name()
            .trim_start_matches("MCP_SERVER_STATE_")
            .to_lowercase(),
    }
}
