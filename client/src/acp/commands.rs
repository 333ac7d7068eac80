//! The slash commands an ACP session offers its editor (`available_commands_update`): the
//! user-invocable skills and the custom commands (`commands/*.md`) of the session's folder, as the
//! REPL offers them. A prompt that starts with a skill's `/<name>` runs that skill (loaded by the
//! daemon, as the REPL does); a custom command's line goes to the daemon as typed, which expands
//! it.

use agent_client_protocol::v1::schema as acp;
use synapse_shared::proto::custom_client::CustomClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{ListCustomRequest, ListSkillsRequest, LoadSkillRequest, SkillInfo};
use tonic::transport::Channel;

use crate::repl::skill_invoke::invocation_message;

/// The user-invocable skills of a folder.
pub async fn skills(channel: &Channel, cwd: &str) -> Vec<SkillInfo> {
    SkillsClient::new(channel.clone())
        .list(ListSkillsRequest {
            cwd: cwd.to_string(),
        })
        .await
        .map(|r| r.into_inner().skills)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.error.is_empty() && s.enabled && s.user_invocable && s.permission != "deny")
        .collect()
}

/// Every command the session offers: skills first, then the custom commands no skill shadows.
pub async fn available(channel: &Channel, cwd: &str) -> Vec<acp::AvailableCommand> {
    let skills = skills(channel, cwd).await;
    let custom = CustomClient::new(channel.clone())
        .list(ListCustomRequest {
            cwd: cwd.to_string(),
        })
        .await
        .map(|r| r.into_inner().commands)
        .unwrap_or_default();
    let mut out: Vec<acp::AvailableCommand> = skills
        .iter()
        .map(|s| command(&s.name, &s.description, &s.argument_hint))
        .collect();
    for c in custom {
        if !skills.iter().any(|s| s.name.eq_ignore_ascii_case(&c.name)) {
            out.push(command(&c.name, &c.description, &c.argument_hint));
        }
    }
    out
}

fn command(name: &str, description: &str, hint: &str) -> acp::AvailableCommand {
    let what = description.lines().next().unwrap_or_default();
    let cmd = acp::AvailableCommand::new(name, what);
    if hint.is_empty() {
        cmd
    } else {
        cmd.input(acp::AvailableCommandInput::Unstructured(
            acp::UnstructuredCommandInput::new(hint),
        ))
    }
}

/// `/<skill> args` at the start of a prompt, split (`None` for anything else).
pub fn slash(text: &str) -> Option<(String, String)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    (!name.is_empty() && !name.contains('/'))
        .then(|| (name.to_lowercase(), args.trim().to_string()))
}

/// The prompt text for a skill's slash command, the skill loaded by the daemon (typing it is
/// the approval an `ask` skill needs, as in the REPL); `None` when no such skill is offered.
pub async fn expand_skill(
    channel: &Channel,
    cwd: &str,
    text: &str,
) -> Result<Option<String>, String> {
    let Some((name, args)) = slash(text) else {
        return Ok(None);
    };
    let skills = skills(channel, cwd).await;
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let loaded = SkillsClient::new(channel.clone())
        .load(LoadSkillRequest {
            name: skill.id.clone(),
            cwd: cwd.to_string(),
            approve: true,
        })
        .await
        .map_err(|s| format!("cannot load the skill {name}: {}", s.message()))?
        .into_inner();
    Ok(Some(invocation_message(&name, &args, &loaded.text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_command_splits_into_name_and_arguments() {
        assert_eq!(
            slash("/Fix-Issue 12 now"),
            Some(("fix-issue".into(), "12 now".into()))
        );
        assert_eq!(slash("/commit"), Some(("commit".into(), String::new())));
        assert_eq!(slash("/usr/bin/env is a path"), None);
        assert_eq!(slash("explain /x"), None);
    }
}
