//! Sub-agents: an [`AgentRunner`] in silent mode with its own shell session, its own history and
//! a policy on what it may run. `task:general` / `task:explore` and the skill sub-agent use it.
//! A run starts from an empty history, or from the history of a [`SubAgentContext`] (the skill
//! sub-agent of a chat session), which it holds for the whole run and leaves what it added in.
//!
//! The policy is enforced where every command passes, in [`PolicyExecutor`]: no sub-agent may
//! start `task:*`; a read-only one may not run `write`/`edit`; a skill author may `write`/`edit`
//! only below its root. Native commands of a read-only sub-agent are refused when they redirect
//! output to a file or name a command known to modify files; this is a guard against mistakes,
//! not a sandbox: the OS sandbox of the request ([`SubAgentRequest::sandbox`]) is what confines
//! native commands where the system has one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use futures::future::BoxFuture;

use synapse_shared::paths::normalize;
use tokio_util::sync::CancellationToken;

use super::executor::{BashCall, ToolExecutor, ToolFuture, ToolOutcome};
use super::runner::{AgentRunner, RunnerLimits, TurnOutcome};
use super::session::resolve_config;
use super::subagent_context::{SubAgentContext, remember};
use crate::shell::commands::written_path;
use crate::shell::{GateHandle, PathResolver, SessionOrigin, ShellSessions, ToolCall};
use synapse_llm::build_provider;
use synapse_sandbox::SandboxSpec;

/// What a sub-agent may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubAgentPolicy {
    /// Anything but `task:*`.
    General,
    /// No file changes through agent commands or obvious native writers.
    ReadOnly,
    /// `write`/`edit` only below `root` (the user skills folder).
    SkillAuthor { root: PathBuf },
}

/// Native commands a read-only sub-agent may not start.
const WRITING_COMMANDS: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "dd", "tee", "touch", "mkdir", "ln", "chmod", "chown", "truncate",
    "install", "patch", "git", "npm", "pip", "cargo", "make", "sed", "perl", "python", "python3",
];

/// Starts sub-agents: what `task:*` and the skill sub-agent are given when they are built.
/// [`SubAgents`] is the daemon's; in-process tests pass a fake.
pub trait SubAgentRunner: Send + Sync {
    /// Runs a sub-agent to the end of its turn.
    fn run<'a>(
        &'a self,
        request: SubAgentRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, String>>;

    /// The agent shell commands' documentation, for a sub-agent's system prompt.
    fn commands_doc(&self) -> String;
}

/// Everything needed to start sub-agents on the daemon's shell layer.
///
/// The shell layer's command registry holds the commands that start sub-agents, so the two are
/// built together (`Arc::new_cyclic` in `DaemonState::new`) and this holds the layer weakly:
/// it is there for as long as the daemon is.
#[derive(Clone)]
pub struct SubAgents {
    pub shell: Weak<ShellSessions>,
    pub settings: Arc<dyn Fn() -> synapse_shared::settings::Settings + Send + Sync>,
}

impl SubAgentRunner for SubAgents {
    fn run<'a>(
        &'a self,
        request: SubAgentRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, String>> {
        Box::pin(SubAgents::run(self, request, cancel))
    }

    fn commands_doc(&self) -> String {
        self.shell
            .upgrade()
            .map(|s| s.commands_doc().to_string())
            .unwrap_or_default()
    }
}

/// One sub-agent run.
pub struct SubAgentRequest {
    pub system: String,
    pub prompt: String,
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    pub policy: SubAgentPolicy,
    pub limits: RunnerLimits,
    /// The gate its commands pass after its policy allowed them: the calling session's
    /// permission gate (a read-only view of it for `task:explore`), or the skill sub-agent's
    /// snapshot gate.
    pub gate: Option<GateHandle>,
    /// The OS sandbox of its shell.
    pub sandbox: Option<SandboxSpec>,
    /// The caller's workspace (its project's commands on the sub-agent's PATH).
    pub workspace: Option<crate::shell::ShellWorkspace>,
    /// History kept between runs (`None`: a one-off run from an empty history).
    pub context: Option<Arc<SubAgentContext>>,
}

impl SubAgents {
    /// Runs a sub-agent to the end of its turn and closes its shell. With a context, waits
    /// for the context first (one run per context at a time).
    pub async fn run(
        &self,
        request: SubAgentRequest,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, String> {
        let Some(shell) = self.shell.upgrade() else {
            return Err("the daemon is stopping".into());
        };
        let config = resolve_config(&(self.settings)(), &request.env, None)?;
        let provider = build_provider(&config).map_err(|e| e.to_string())?;
        let mut one_off = Vec::new();
        let mut kept = match &request.context {
            Some(context) => match context.lock(cancel).await {
                Some(guard) => Some(guard),
                None => return Ok(TurnOutcome::cancelled()),
            },
            None => None,
        };
        let keeps_history = kept.is_some();
        let history = kept.as_deref_mut().unwrap_or(&mut one_off);
        let name = format!("subagent-{:08x}", fastrand::u32(..));
        let executor = Arc::new(PolicyExecutor {
            sessions: shell.clone(),
            name: name.clone(),
            origin: SessionOrigin {
                cwd: request.cwd.clone(),
                env: request
                    .env
                    .iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
                sandbox: request.sandbox,
                workspace: request.workspace,
            },
            gate: request.gate,
            policy: request.policy,
            cwd: Mutex::new(request.cwd),
        });
        let runner = AgentRunner {
            model: provider.model().to_string(),
            provider,
            executor,
            system: request.system,
            limits: request.limits,
            // Sub-agents keep no todo list of their own session; nothing to remind them of.
            guard: None,
        };
        let start = history.len();
        let outcome = runner.run_silent(history, &request.prompt, cancel).await;
        if keeps_history {
            remember(history, start);
        }
        shell.close(&name).await;
        Ok(outcome)
    }
}

/// Runs a sub-agent's commands in its own shell session, refusing what its policy forbids.
pub struct PolicyExecutor {
    sessions: Arc<ShellSessions>,
    name: String,
    origin: SessionOrigin,
    gate: Option<GateHandle>,
    policy: SubAgentPolicy,
    /// The shell's current directory, to resolve relative paths in `write`/`edit`.
    cwd: Mutex<PathBuf>,
}

impl PolicyExecutor {
    /// The `HOME` its commands see (`~` in their paths): the session's, else the daemon's.
    fn home(&self) -> Option<PathBuf> {
        let own = || std::env::var_os("HOME");
        let given = self.origin.env.iter().find(|(k, _)| k == "HOME");
        let home = match given {
            Some((_, v)) => Some(v.clone()),
            None if self.origin.env.is_empty() => own(),
            None => None,
        };
        home.map(PathBuf::from)
    }
}

impl ToolExecutor for PolicyExecutor {
    fn execute(&self, call: BashCall, cancel: CancellationToken) -> ToolFuture<'_> {
        Box::pin(async move {
            let cwd = self.cwd.lock().map(|c| c.clone()).unwrap_or_default();
            let home = self.home();
            let at = PathResolver {
                cwd: &cwd,
                home: home.as_deref(),
            };
            // With a permission gate, read-only is enforced there (read-only mode, the OS
            // sandbox for native commands); the name-based guard is for gate-less callers.
            let policy = match (&self.policy, &self.gate) {
                (SubAgentPolicy::ReadOnly, Some(_)) => &SubAgentPolicy::General,
                (policy, _) => policy,
            };
            if let Err(refusal) = check(policy, &call.command, &at) {
                return ToolOutcome {
                    output: refusal,
                    exit_code: 126,
                };
            }
            let call = ToolCall {
                command: call.command,
                restart: call.restart,
                timeout: None,
                progress: None,
                approver: None,
                gate: self.gate.clone(),
                output_cap: None,
                // A sub-agent has no user of its own to ask.
                asker: None,
            };
            match self
                .sessions
                .execute(&self.name, &self.origin, &call, &cancel)
                .await
            {
                Ok(result) => {
                    if let Ok(mut c) = self.cwd.lock() {
                        *c = result.cwd.clone();
                    }
                    ToolOutcome {
                        output: result.output,
                        exit_code: result.exit_code,
                    }
                }
                Err(e) => ToolOutcome {
                    output: format!("cannot run the command: {e}"),
                    exit_code: 126,
                },
            }
        })
    }
}

/// Why a command is refused under `policy`, if it is.
/// `at` resolves the paths of `write`/`edit` exactly as those commands will (`~`, symlinks).
pub fn check(policy: &SubAgentPolicy, command: &str, at: &PathResolver<'_>) -> Result<(), String> {
    let words = shlex::split(command).unwrap_or_default();
    let first = words.first().map(String::as_str).unwrap_or("");
    if first.starts_with("task:") || command.split_whitespace().any(|w| w.starts_with("task:")) {
        return Err("refused: a sub-agent cannot start other sub-agents (task:*)".into());
    }
    match policy {
        SubAgentPolicy::General => Ok(()),
        SubAgentPolicy::ReadOnly => {
            if matches!(first, "write" | "edit") {
                return Err(format!(
                    "refused: `{first}` changes files, and this sub-agent is read-only"
                ));
            }
            if has_output_redirect(command) {
                return Err(
                    "refused: output redirection writes files, and this sub-agent is read-only"
                        .into(),
                );
            }
            let segments = command.split(['|', ';', '&']);
            for segment in segments {
                let word = segment.split_whitespace().next().unwrap_or("");
                let word = word.rsplit('/').next().unwrap_or(word);
                if WRITING_COMMANDS.contains(&word) {
                    return Err(format!(
                        "refused: `{word}` may change files, and this sub-agent is read-only"
                    ));
                }
            }
            Ok(())
        }
        SubAgentPolicy::SkillAuthor { root } => {
            if matches!(first, "write" | "edit") {
                let target = written_path(first, &words[1..])
                    .ok_or_else(|| format!("`{first}` needs a path"))?;
                let path = at.landing(&target);
                let root = std::fs::canonicalize(root).unwrap_or_else(|_| normalize(root));
                if !path.starts_with(&root) {
                    return Err(format!(
                        "refused: the skill sub-agent may only write below {} (not {})",
                        root.display(),
                        path.display()
                    ));
                }
            } else if has_output_redirect(command) {
                return Err(
                    "refused: write files with `write`/`edit` below the skills folder".into(),
                );
            }
            Ok(())
        }
    }
}

fn has_output_redirect(command: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '>') if prev != '2' && prev != '&' => return true,
            _ => {}
        }
        prev = c;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn policies_refuse_what_they_must() {
        let at = |cwd: &'static str| PathResolver {
            cwd: Path::new(cwd),
            home: Some(Path::new("/home/u")),
        };
        let cwd = &at("/w");
        assert!(check(&SubAgentPolicy::General, "task:general --prompt x", cwd).is_err());
        assert!(check(&SubAgentPolicy::General, "write a.txt hi", cwd).is_ok());
        let ro = SubAgentPolicy::ReadOnly;
        assert!(check(&ro, "write a.txt hi", cwd).is_err());
        assert!(check(&ro, "echo hi > a.txt", cwd).is_err());
        assert!(check(&ro, "ls; rm x", cwd).is_err());
        assert!(check(&ro, "grep -r foo . 2>/dev/null", cwd).is_ok());
        assert!(check(&ro, "echo '>' ", cwd).is_ok());
        let author = SubAgentPolicy::SkillAuthor {
            root: PathBuf::from("/h/skills"),
        };
        assert!(check(&author, "write /h/skills/a/SKILL.md x", cwd).is_ok());
        assert!(check(&author, "write /h/skills/../x.txt x", cwd).is_err());
        assert!(check(&author, "write notes.txt x", cwd).is_err());
        let in_skill = &at("/h/skills/a");
        assert!(check(&author, "write notes.txt x", in_skill).is_ok());
        // The path `write` will use, not the first word after it; `~` is the user's home.
        assert!(check(&author, "write ~/.bashrc x", in_skill).is_err());
        assert!(check(&author, "write -- ../../x y", in_skill).is_err());
        assert!(check(&author, "edit --all ../../x a b", in_skill).is_err());
        assert!(check(&author, "write -../../../../x y", in_skill).is_err());
    }
}
