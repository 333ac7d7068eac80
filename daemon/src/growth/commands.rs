//! The agent commands of self-growth: `task:skill:search` and `task:skill:enhance`, and the
//! [`SkillGrowth`](crate::skills::agent_commands::SkillGrowth) backend that gives the `skill`
//! command its sub-agent `search` and `evaluate`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{SkillAgent, enhance, evaluate, search};
use crate::agent::task_command::parse_task_args;
use crate::shell::command::{AgentCommand, CommandContext, CommandOutput, CommandSpec, PromptForm};
use crate::skills::agent_commands::SkillGrowth;

pub static SEARCH_SPEC: CommandSpec = CommandSpec {
    name: "task:skill:search",
    usage: "task:skill:search --prompt <what you need> --description <label>",
    summary: "Find skills by meaning (same as `skill search`).",
    help: "Answers <available-skills><skill name=…>description</skill>…</available-skills>.",
};

pub static ENHANCE_SPEC: CommandSpec = CommandSpec {
    name: "task:skill:enhance",
    usage: "task:skill:enhance --prompt <what to learn> --description <label>",
    summary: "Create or improve a skill from this conversation; prints a report.",
    help: "\
The skill sub-agent reads the end of this session's conversation, then creates a skill,
improves one (its previous version is saved), or changes nothing, and reports which.",
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillTask {
    Search,
    Enhance,
}

pub struct SkillTaskCommand {
    pub task: SkillTask,
    pub agent: Arc<SkillAgent>,
    /// Session files, to find the conversation of the calling session.
    pub sessions_dir: PathBuf,
    /// `skillEnhance.maxEnhanceContextChars`, read live.
    pub max_chars: Arc<dyn Fn() -> usize + Send + Sync>,
}

impl AgentCommand for SkillTaskCommand {
    fn effect(
        &self,
        _args: &[String],
        _at: &crate::shell::PathResolver<'_>,
    ) -> crate::shell::gate::Effect {
        crate::shell::gate::Effect::SubAgent {
            read_only: self.task == SkillTask::Search,
        }
    }

    fn spec(&self) -> &'static CommandSpec {
        match self.task {
            SkillTask::Search => &SEARCH_SPEC,
            SkillTask::Enhance => &ENHANCE_SPEC,
        }
    }

    fn prompt_form(&self) -> PromptForm {
        PromptForm::Brief
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let spec = self.spec();
            let (prompt, _description) = match parse_task_args(spec, args) {
                Ok(words) => words,
                Err(usage) => return usage,
            };
            let cwd = ctx.cwd().to_path_buf();
            let env = ctx.env_map();
            let cancel = ctx.cancel().clone();
            match self.task {
                SkillTask::Search => CommandOutput::success(
                    search::search(&self.agent, &prompt, &cwd, env, &cancel)
                        .await
                        .render(),
                ),
                SkillTask::Enhance => {
                    let file = self
                        .sessions_dir
                        .join(format!("{}.jsonl", ctx.session_name()));
                    let max = (self.max_chars)();
                    let tail = if file.is_file() {
                        let f = file.clone();
                        tokio::task::spawn_blocking(move || enhance::read_tail(&f, max))
                            .await
                            .ok()
                            .and_then(Result::ok)
                    } else {
                        None
                    };
                    let result = enhance::enhance(
                        &self.agent,
                        &prompt,
                        tail.as_deref().unwrap_or("(no conversation recorded)"),
                        tail.as_ref().map(|_| file.as_path()),
                        &cwd,
                        env,
                        &cancel,
                    )
                    .await;
                    match result {
                        Ok(report) => CommandOutput::success(report),
                        Err(e) => CommandOutput::failure(format!("{}: {e}", spec.name), 1),
                    }
                }
            }
        })
    }
}

/// The `skill` command's sub-agent backend.
pub struct GrowthBackend(pub Arc<SkillAgent>);

impl SkillGrowth for GrowthBackend {
    fn search<'a>(
        &'a self,
        query: String,
        cwd: PathBuf,
        env: HashMap<String, String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, String> {
        Box::pin(async move {
            search::search(&self.0, &query, &cwd, env, &cancel)
                .await
                .render()
        })
    }

    fn evaluate<'a>(
        &'a self,
        name: String,
        cwd: PathBuf,
        env: HashMap<String, String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            match evaluate::evaluate(&self.0, &name, &cwd, env, &cancel).await {
                Ok(report) => CommandOutput::success(report.render_text()),
                Err(e) => CommandOutput::failure(e, 1),
            }
        })
    }
}
