//! The facts stream-json's `init` line reports that the session's opening does not carry, asked
//! of the daemon before the first turn: the MCP servers the session can use and their states,
//! the user-invocable skills and custom commands (`/name`), the skills the model may load and
//! the Claude Code plugins they come from, and the sub-agents (`task:<name>` commands, found the way
//! `tools search` finds them). A question that fails leaves its list empty: the run goes on.

use std::path::Path;

use serde_json::{Value, json};
use synapse_shared::proto::custom_client::CustomClient;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{
    ListCustomRequest, ListSkillsRequest, McpListRequest, McpServerState, SearchToolsRequest,
    SkillInfo,
};
use tonic::transport::Channel;

use super::stream_json::InitFacts;
use crate::cli::mcp::{caller_cwd, caller_env};

/// Agent commands listed at most (`tools search` caps its answer).
const AGENTS_MAX: u32 = 200;

pub async fn init_facts(channel: Channel) -> InitFacts {
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
        facts.plugins = plugins(&listed);
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

/// The Claude Code plugins the listed skills come from, once each, as Claude Code's `init` names
/// them: `{"name","path","source":"<plugin>@<marketplace>"}`. A plugin skill's folder is
/// `…/cache/<marketplace>/<plugin>/<version>/skills/<skill>`.
fn plugins(skills: &[SkillInfo]) -> Vec<Value> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for skill in skills.iter().filter(|s| s.source == "plugin") {
        let Some(root) = Path::new(&skill.dir).parent().and_then(Path::parent) else {
            continue;
        };
        let name = |p: Option<&Path>| {
            p.and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        };
        let Some(plugin) = name(root.parent()) else {
            continue;
        };
        let marketplace = name(root.parent().and_then(Path::parent)).unwrap_or_default();
        let source = format!("{plugin}@{marketplace}");
        if seen.contains(&source) {
            continue;
        }
        out.push(json!({"name": plugin, "path": root.display().to_string(), "source": source}));
        seen.push(source);
    }
    out
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
    fn plugins_are_named_by_their_cache_folder_once_each() {
        let skill = |name: &str, source: &str, dir: &str| SkillInfo {
            name: name.into(),
            source: source.into(),
            dir: dir.into(),
            ..SkillInfo::default()
        };
        let cache = "/h/.claude/plugins/cache/market/docs/1.0.0";
        let listed = [
            skill("docs:a", "plugin", &format!("{cache}/skills/a")),
            skill("docs:b", "plugin", &format!("{cache}/skills/b")),
            skill("mine", "user", "/h/.claude/skills/mine"),
        ];
        assert_eq!(
            plugins(&listed),
            [json!({"name": "docs", "path": cache, "source": "docs@market"})]
        );
    }
}
