//! The agent commands of self-growth: `task:skill:search` and `task:skill:enhance`, and the
//! [`SkillGrowth`](crate::skills::agent_commands::SkillGrowth) backend that gives the `skill`
//! command its sub-agent `search` and `evaluate`.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{Caller, SkillAgent, enhance, evaluate, search};
use crate::agent::task_command::parse_task_args;
use crate::skills::agent_commands::{GrowthCall, SkillGrowth, growth_call};
use synapse_command::args::{OptSpec, UnknownOpts, parse};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

pub static SEARCH_SPEC: CommandSpec = CommandSpec {
    name: "task:skill:search",
    usage: "task:skill:search \"<what you need>\" | task:skill:search --prompt <what you need>",
    summary: "Find skills by meaning (same as `skill search \"<what you need>\"`).",
    help: "\
Answers <available-skills><skill name=…>description</skill>…</available-skills>. The session's
skill sub-agent remembers its earlier searches and enhancements.

Examples:
  task:skill:search \"turn a csv file into a chart\"
  task:skill:search --prompt \"summarise a pdf\" --description pdf",
};

pub static ENHANCE_SPEC: CommandSpec = CommandSpec {
    name: "task:skill:enhance",
    usage: "task:skill:enhance --prompt <what to learn> --description <label>",
    summary: "Create or improve a skill from this conversation; prints a report.",
    help: "\
The skill sub-agent reads the end of this conversation, then creates a skill, improves one
(saving its previous version) or changes nothing, and reports which. --prompt says what is
worth keeping.

Examples:
  task:skill:enhance --prompt \"keep how we counted the errors in the logs\" --description logs",
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillTask {
    Search,
    Enhance,
}

pub struct SkillTaskCommand {
    pub task: SkillTask,
    pub agent: Arc<SkillAgent>,
}

impl AgentCommand for SkillTaskCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Think
    }

    fn effect(
        &self,
        _args: &[String],
        _at: &crate::shell::PathResolver<'_>,
    ) -> synapse_command::gate::Effect {
        synapse_command::gate::Effect::SubAgent {
            read_only: self.task == SkillTask::Search,
        }
    }

    fn spec(&self) -> &'static CommandSpec {
        match self.task {
            SkillTask::Search => &SEARCH_SPEC,
            SkillTask::Enhance => &ENHANCE_SPEC,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let spec = self.spec();
            let parsed = match self.task {
                SkillTask::Search => search_query(spec, args),
                SkillTask::Enhance => parse_task_args(spec, args).map(|(prompt, _)| prompt),
            };
            let prompt = match parsed {
                Ok(prompt) => prompt,
                Err(usage) => return usage,
            };
            let caller = Caller::from(growth_call(ctx));
            let cancel = ctx.cancel().clone();
            match self.task {
                SkillTask::Search => CommandOutput::success(
                    search::search(&self.agent, &prompt, &caller, &cancel)
                        .await
                        .render(),
                ),
                SkillTask::Enhance => {
                    // A session with no log yet (a fresh `exec` session) has no conversation.
                    let tail = self.agent.conversation_tail(ctx.session_name()).await.ok();
                    let conversation = tail.as_ref().map(|(t, f)| (t.as_str(), f.as_path()));
                    match enhance::enhance(&self.agent, &prompt, conversation, &caller, &cancel)
                        .await
                    {
                        Ok(report) => CommandOutput::success(report.render()),
                        Err(e) => CommandOutput::failure(format!("{}: {e}", spec.name), 1),
                    }
                }
            }
        })
    }
}

/// The query of `task:skill:search`: its words, as `skill search` takes them, or `--prompt`
/// (with an optional `--description` label, which the search does not need).
fn search_query(spec: &CommandSpec, args: Vec<String>) -> Result<String, CommandOutput> {
    const OPTIONS: &[OptSpec] = &[OptSpec::value("--prompt"), OptSpec::value("--description")];
    let parsed = parse(args, OPTIONS, UnknownOpts::Reject).map_err(|e| spec.usage_error(e))?;
    let query = match parsed.value("--prompt") {
        Some(prompt) => prompt.to_string(),
        None => parsed.positionals.join(" "),
    };
    if query.trim().is_empty() {
        return Err(spec.usage_error("missing what to search for, e.g. task:skill:search \"csv\""));
    }
    Ok(query)
}

/// The `skill` command's sub-agent backend.
pub struct GrowthBackend(pub Arc<SkillAgent>);

impl SkillGrowth for GrowthBackend {
    fn search<'a>(
        &'a self,
        query: String,
        call: GrowthCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, String> {
        Box::pin(async move {
            search::search(&self.0, &query, &call.into(), &cancel)
                .await
                .render()
        })
    }

    fn evaluate<'a>(
        &'a self,
        name: String,
        call: GrowthCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            match evaluate::evaluate(&self.0, &name, &call.into(), &cancel).await {
                Ok(report) => CommandOutput::success(report.render_text()),
                Err(e) => CommandOutput::failure(e.to_string(), 1),
            }
        })
    }
}

impl From<GrowthCall> for Caller {
    fn from(call: GrowthCall) -> Self {
        Caller {
            cwd: call.cwd,
            env: call.env,
            session: Some(call.session),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn search_takes_its_query_positionally_or_as_prompt() {
        assert_eq!(
            search_query(&SEARCH_SPEC, words(&["csv report"])).unwrap(),
            "csv report"
        );
        assert_eq!(
            search_query(&SEARCH_SPEC, words(&["csv", "report"])).unwrap(),
            "csv report"
        );
        assert_eq!(
            search_query(
                &SEARCH_SPEC,
                words(&["--prompt", "pdf", "--description", "x"])
            )
            .unwrap(),
            "pdf"
        );
        let missing = search_query(&SEARCH_SPEC, words(&[])).unwrap_err();
        assert_eq!(missing.exit_code, synapse_command::EXIT_USAGE);
    }
}
