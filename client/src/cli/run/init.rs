//! The facts stream-json's `init` line reports that the session's opening does not carry, asked
//! of the daemon before the first turn: the MCP servers the session can use and their states,
//! the user-invocable skills and custom commands (`/name`), the skills the model may load, the
//! enabled Claude Code plugins (`synapse plugin list`'s answer for this folder), and the sub-agents (`task:<name>` commands, found the way
//! `tools search` finds them). A question that fails leaves its list empty: the run goes on.

use serde_json::{Value, json};
use synapse_shared::proto::custom_client::CustomClient;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::plugins_client::PluginsClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{
    ListCustomRequest, ListSkillsRequest, McpListRequest, McpServerState, PluginInfo,
    PluginListRequest, SearchToolsRequest,
};
use tonic::transport::Channel;

use super::stream_json::InitFacts;
use crate::cli::mcp::{caller_cwd, caller_env};

/// Agent commands listed at most (`tools search` caps its answer).
const AGENTS_MAX: u32 = 200;

/// `session`: the opened session's id, whose own servers (`--mcp-config`) are listed too.
pub async fn init_facts(channel: Channel, session: &str) -> InitFacts {
    let cwd = caller_cwd();
    let mut facts = InitFacts {
        tools: vec!["Bash".to_string()],
        ..InitFacts::default()
    };
    let servers = McpClient::new(channel.clone())
        .list(McpListRequest {
            include_tools: false,
            cwd: cwd.clone(),
            env: caller_env(),
            session: session.to_string(),
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
        let listed = r.into_inner().skills;
        let usable = || listed.iter().filter(|s| s.enabled && s.error.is_empty());
        facts.slash_commands = usable()
            .filter(|s| s.user_invocable)
            .map(|s| s.name.clone())
            .collect();
        facts.skills = usable()
            .filter(|s| !s.disable_model_invocation)
            .map(|s| s.name.clone())
            .collect();
    }
    // The plugins that count for a session here (a trusted project's settings included).
    let listed = PluginsClient::new(channel.clone())
        .list(PluginListRequest { cwd: cwd.clone() })
        .await;
    if let Ok(r) = listed {
        facts.plugins = plugins(&r.into_inner().plugins);
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
            session: session.to_string(),
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

/// The enabled Claude Code plugins as Claude Code's `init` names them:
/// `{"name","path","source":"<plugin>@<marketplace>","version"}` (`path` is where its files are
/// read from, `${CLAUDE_PLUGIN_ROOT}`).
fn plugins(list: &[PluginInfo]) -> Vec<Value> {
    list.iter()
        .filter(|p| p.enabled)
        .map(|p| {
            json!({
                "name": p.name,
                "path": p.root,
                "source": format!("{}@{}", p.name, p.marketplace),
                "version": p.version,
            })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn only_enabled_plugins_are_listed_as_claude_code_lists_them() {
        let plugin = |name: &str, enabled: bool| PluginInfo {
            name: name.into(),
            marketplace: "market".into(),
            version: "1.2.0".into(),
            enabled,
            root: format!("/m/plugins/{name}"),
            ..PluginInfo::default()
        };
        assert_eq!(
            plugins(&[plugin("docs", true), plugin("off", false)]),
            [
                json!({"name": "docs", "path": "/m/plugins/docs", "source": "docs@market",
                    "version": "1.2.0"})
            ]
        );
    }
}
