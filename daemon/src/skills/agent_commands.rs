//! The agent shell commands of the skill system: `skill search|load`, `skill:load` and
//! `tools search`, registered in the router's command registry. They call the store on a
//! blocking thread (it reads files) and print what the store renders.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::catalog::{ToolCatalog, ToolScope};
use super::commands::skill_search_text;
use super::error::SkillError;
use super::store::{LoadDecision, SkillStore};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec, PromptForm};

/// Skills listed by `skill search`.
const SEARCH_LIMIT: usize = 10;

pub static SKILL_SPEC: CommandSpec = CommandSpec {
    name: "skill",
    usage: "skill search \"<what you need>\" | skill load <name> | skill evaluate <name>",
    summary: "Find skills for a task, or load one's SKILL.md instructions.",
    help: "\
Actions:
  skill search \"<what>\"   skills matching the words: <available-skills><skill name=…>…</skill>
  skill load <name>       `# Skill: <name>`, its instructions and its bundled files (paths only)
  skill evaluate <name>   a 0-100 score with findings
A skill's scripts are commands skill:<skill>:<script> (find them with `tools search <keyword>`). Load a
skill before following it; read bundled files only when its instructions point to them.

Examples:
  skill search \"turn a csv file into a chart\"
  skill load csv-charts",
};

pub static SKILL_LOAD_SPEC: CommandSpec = CommandSpec {
    name: "skill:load",
    usage: "skill:load <name>",
    summary: "Same as `skill load <name>`.",
    help: "\
Examples:
  skill:load csv-charts",
};

pub static TOOLS_SPEC: CommandSpec = CommandSpec {
    name: "tools",
    usage: "tools search <keywords|regex>",
    summary: "Find extension commands (mcp:*, skill:*), one line each, best match first.",
    help: "\
Keywords match command names and descriptions (case-insensitive); a query with regex characters
is a regex. Then run `<command> -h` or `<command> --help`.

Examples:
  tools search csv chart
  tools search \"mcp:git-.*\"",
};

/// Where a `skill` command that needs the sub-agent comes from.
#[derive(Debug, Clone)]
pub struct GrowthCall {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    /// The shell session's name (a chat session's is the chat id).
    pub session: String,
}

/// The skill sub-agent as the `skill` command sees it (set by the daemon; without it,
/// `search` is a keyword search and `evaluate` is unavailable).
pub trait SkillGrowth: Send + Sync {
    /// `<available-skills>…` for `query`.
    fn search<'a>(
        &'a self,
        query: String,
        call: GrowthCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, String>;

    /// A score and findings for skill `name`.
    fn evaluate<'a>(
        &'a self,
        name: String,
        call: GrowthCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, CommandOutput>;
}

/// The [`GrowthCall`] of a command run in `ctx`'s shell session.
pub fn growth_call(ctx: &CommandContext<'_>) -> GrowthCall {
    GrowthCall {
        cwd: ctx.cwd().to_path_buf(),
        env: ctx.env_map(),
        session: ctx.session_name().to_string(),
    }
}

pub struct SkillCommand {
    pub store: Arc<SkillStore>,
    pub growth: Option<Arc<dyn SkillGrowth>>,
}

pub struct SkillLoadCommand {
    pub store: Arc<SkillStore>,
}

pub struct ToolsCommand {
    pub tools: ToolCatalog,
}

impl AgentCommand for SkillCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Read
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SKILL_SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let cwd = ctx.cwd().to_path_buf();
            let store = self.store.clone();
            match args.split_first() {
                Some((sub, rest)) if sub == "search" => {
                    let query = rest.join(" ");
                    if query.trim().is_empty() {
                        return SKILL_SPEC.usage_error("missing what to search for");
                    }
                    if let Some(growth) = &self.growth {
                        let cancel = ctx.cancel().clone();
                        return CommandOutput::success(
                            growth.search(query, growth_call(ctx), cancel).await,
                        );
                    }
                    blocking(move || {
                        store.add_project_cwd(&cwd);
                        CommandOutput::success(skill_search_text(
                            &store,
                            &query,
                            SEARCH_LIMIT,
                            &cwd,
                        ))
                    })
                    .await
                }
                Some((sub, [name])) if sub == "load" => load(ctx, store, cwd, name.clone()).await,
                Some((sub, [name])) if sub == "evaluate" => match &self.growth {
                    Some(growth) => {
                        let cancel = ctx.cancel().clone();
                        growth
                            .evaluate(name.clone(), growth_call(ctx), cancel)
                            .await
                    }
                    None => CommandOutput::failure("skill evaluate is not available", 1),
                },
                Some((sub, _)) if sub == "load" => {
                    SKILL_SPEC.usage_error("skill load takes one <name>")
                }
                // Growing a skill is the skill sub-agent's task, a command of its own.
                Some((sub, _)) if matches!(sub.as_str(), "enhance" | "reinforce" | "improve") => {
                    SKILL_SPEC.usage_error(format!(
                        "`skill {sub}` is not a subcommand: to create or improve a skill from \
                         this session, run task:skill:enhance --prompt \"<what to learn>\" \
                         --description \"<3-5 words>\""
                    ))
                }
                Some((sub, _)) => SKILL_SPEC.usage_error(format!("unknown subcommand {sub:?}")),
                None => SKILL_SPEC.usage_error("missing subcommand (search or load)"),
            }
        })
    }
}

impl AgentCommand for SkillLoadCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Read
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SKILL_LOAD_SPEC
    }

    /// `skill load` documents it; one line says it is the same.
    fn prompt_form(&self) -> PromptForm {
        PromptForm::Brief
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            match args.as_slice() {
                [name] => {
                    let cwd = ctx.cwd().to_path_buf();
                    load(ctx, self.store.clone(), cwd, name.clone()).await
                }
                _ => SKILL_LOAD_SPEC.usage_error("expected one <name>"),
            }
        })
    }
}

impl AgentCommand for ToolsCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Search
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &TOOLS_SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            match args.split_first() {
                Some((sub, rest)) if sub == "search" && !rest.is_empty() => {
                    let query = rest.join(" ");
                    let tools = self.tools.clone();
                    let workspace = ctx.workspace().map(std::path::Path::to_path_buf);
                    // A chat session's shell is named by its id: its own servers count too.
                    let session = ctx.session_name().to_string();
                    blocking(move || {
                        let scope = ToolScope {
                            workspace: workspace.as_deref(),
                            session: Some(&session),
                        };
                        CommandOutput::success(tools.search_text_in(scope, &query))
                    })
                    .await
                }
                Some((sub, _)) if sub == "search" => {
                    TOOLS_SPEC.usage_error("missing <keywords|regex>")
                }
                Some((sub, _)) => TOOLS_SPEC.usage_error(format!("unknown subcommand {sub:?}")),
                None => TOOLS_SPEC.usage_error("missing subcommand (search)"),
            }
        })
    }
}

/// Loads a skill; one whose permission is `ask` is loaded only when the session's user says yes.
async fn load(
    ctx: &CommandContext<'_>,
    store: Arc<SkillStore>,
    cwd: std::path::PathBuf,
    name: String,
) -> CommandOutput {
    let lookup = store.clone();
    let wanted = name.clone();
    let scope = cwd.clone();
    let decision = tokio::task::spawn_blocking(move || {
        lookup.add_project_cwd(&cwd);
        // `disable-model-invocation: true`: only the user runs it (`/<name>` in the REPL).
        if let Ok(s) = lookup.show_in(&wanted, &cwd)
            && s.disable_model_invocation
        {
            return Err(SkillError::UserOnly { name: s.name });
        }
        match lookup.load_in(&wanted, &cwd) {
            // A skill written a moment ago (by this very session, say) may not have reached
            // the watcher yet: one rescan before saying it does not exist.
            Err(SkillError::NotFound { .. }) => {
                lookup.refresh();
                lookup.load_in(&wanted, &cwd)
            }
            other => other,
        }
    })
    .await;
    let decision = match decision {
        Ok(d) => d,
        Err(e) => return CommandOutput::failure(format!("internal error: {e}"), 1),
    };
    match decision {
        Ok(LoadDecision::Ready(text)) => {
            let note = pre_approve(ctx, &store, &name, &scope).await;
            CommandOutput::success(format!("{text}{note}"))
        }
        Ok(LoadDecision::NeedsApproval { id, name }) => {
            let title = format!("Load skill `{name}` ({id})?");
            let detail =
                "permissions.skill in settings.json says `ask` for this skill.".to_string();
            if !ctx.approve(title, detail).await {
                return CommandOutput::failure(
                    format!("loading skill {name} was not approved (permissions.skill says `ask`)"),
                    1,
                );
            }
            let (st, n, sc) = (store.clone(), name.clone(), scope.clone());
            let loaded = blocking(move || match st.load_approved_in(&n, &sc) {
                Ok(text) => CommandOutput::success(text),
                Err(e) => CommandOutput::failure(e.to_string(), 1),
            })
            .await;
            if loaded.exit_code != 0 {
                return loaded;
            }
            let note = pre_approve(ctx, &store, &name, &scope).await;
            CommandOutput::success(format!("{}{note}", loaded.text))
        }
        Err(e) => CommandOutput::failure(e.to_string(), 1),
    }
}

/// Offers the loaded skill's `allowed-tools` to the session gate (see [`super::allowed_tools`]
/// for the translation and [`super::grants`] for the approval pinned by content); the note tells
/// the model what is now pre-approved, or why nothing is and how the user can change that.
async fn pre_approve(
    ctx: &CommandContext<'_>,
    store: &Arc<SkillStore>,
    name: &str,
    scope: &std::path::Path,
) -> String {
    use crate::shell::{SkillToolsAnswer, SkillToolsGrant};
    let Some(gate) = ctx.gate() else {
        return String::new();
    };
    let (st, n, sc) = (store.clone(), name.to_string(), scope.to_path_buf());
    let looked = tokio::task::spawn_blocking(move || {
        st.show_in(&n, &sc).map(|skill| {
            let state = st.approvals().state(&skill.dir);
            (skill, state)
        })
    })
    .await;
    let Ok(Ok((skill, state))) = looked else {
        return String::new();
    };
    if skill.allowed_tools.is_empty() {
        return String::new();
    }
    let trust_file = store
        .paths()
        .settings_file
        .with_file_name(synapse_shared::trust::TRUST_FILE);
    if !super::allowed_tools::may_pre_approve(skill.source, &skill.dir, &trust_file) {
        return "\n\n(This project skill's allowed-tools are not pre-approved: its folder is not trusted.)"
            .to_string();
    }
    let t = super::allowed_tools::translate(&skill.allowed_tools);
    let mut note = String::new();
    if !t.patterns.is_empty() {
        let answer = gate
            .0
            .grant_skill_tools(SkillToolsGrant {
                skill: &skill.name,
                patterns: &t.patterns,
                approved: state == super::grants::GrantState::Approved,
            })
            .await;
        match answer {
            SkillToolsAnswer::GrantedAlways { problems } => {
                let (st, dir, n, list) = (
                    store.clone(),
                    skill.dir.clone(),
                    skill.name.clone(),
                    skill.allowed_tools.clone(),
                );
                let saved =
                    tokio::task::spawn_blocking(move || st.approvals().approve(&n, &dir, &list))
                        .await;
                note.push_str(&granted_note(&t.patterns));
                if !matches!(saved, Ok(Ok(_))) {
                    note.push_str(
                        "\n(The approval could not be saved; it holds for this session.)",
                    );
                }
                push_problems(&mut note, &problems);
            }
            SkillToolsAnswer::Granted { problems } => {
                note.push_str(&granted_note(&t.patterns));
                push_problems(&mut note, &problems);
            }
            SkillToolsAnswer::NotGranted { asked } => {
                let why = if asked {
                    "the user declined them".to_string()
                } else {
                    state
                        .why_not()
                        .unwrap_or_else(|| "this session cannot use them".into())
                };
                note.push_str(&format!(
                    "\n\n(This skill's allowed-tools ({}) are not pre-approved: {why}. Its \
                     commands are checked as usual. The user can approve them with `synapse \
                     skill approve {}`.)",
                    t.patterns.join(", "),
                    skill.name
                ));
            }
        }
    }
    push_problems(&mut note, &t.skipped);
    note
}

fn granted_note(patterns: &[String]) -> String {
    format!(
        "\n\n(Pre-approved for this session by the skill's allowed-tools, inside the sandbox \
         only: {}.)",
        patterns.join(", ")
    )
}

fn push_problems(note: &mut String, problems: &[String]) {
    for s in problems {
        note.push_str(&format!("\n(allowed-tools not applied: {s})"));
    }
}

async fn blocking(f: impl FnOnce() -> CommandOutput + Send + 'static) -> CommandOutput {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| CommandOutput::failure(format!("internal error: {e}"), 1))
}
