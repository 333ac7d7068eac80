//! What a sub-agent may run, decided where every other permission decision is: a
//! [`PolicyGate`] in front of the gate the sub-agent inherits (its parent session's, the skill
//! sub-agent's versioning gate, or none). The command line is judged with the permission engine's
//! own parser, so a policy sees what a session's rules see — commands inside `$( )`, `bash -c`,
//! `xargs`, subshells — not the first word of the text:
//! - every sub-agent: no `task:*` (a sub-agent cannot start others);
//! - read-only, with no parent gate to restrict: the engine's read-only mode decides (only what
//!   it can prove reads runs; nobody can be asked, so "ask" refuses);
//! - skill author: `write`/`edit` and write redirects only below the skills folder;
//! - a custom agent with `tools`: only the agent commands and lines its tools name
//!   ([`crate::agent::custom::tools::ToolGrant`]).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use synapse_permissions::{Action, Context, Decision, Mode, RuleSet, decide};

use crate::agent::custom::tools::ToolRefusal;
use crate::agent::subagent::SubAgentPolicy;
use crate::shell::{
    CommandGate, GateAction, GateHandle, GateInfo, GateVerdict, SkillToolsAnswer, SkillToolsGrant,
};

/// A sub-agent's policy in front of the gate it inherits.
pub struct PolicyGate {
    policy: SubAgentPolicy,
    inner: Option<GateHandle>,
    home: PathBuf,
    synapse_home: PathBuf,
}

impl PolicyGate {
    /// `inner` is asked after the policy allows a command. A read-only sub-agent under a gate
    /// gets that gate's read-only form, which enforces it (and its OS sandbox) better than a
    /// policy can.
    pub fn handle(policy: SubAgentPolicy, inner: Option<GateHandle>, home: PathBuf) -> GateHandle {
        let (policy, inner) = match (policy, inner) {
            (SubAgentPolicy::ReadOnly, Some(g)) => match g.0.read_only() {
                Some(ro) => (SubAgentPolicy::General, Some(ro)),
                None => (SubAgentPolicy::ReadOnly, Some(g)),
            },
            (policy, inner) => (policy, inner),
        };
        let synapse_home = synapse_shared::paths::Paths::from_env()
            .map(|p| p.home().to_path_buf())
            .unwrap_or_else(|_| home.join(".synapse"));
        GateHandle(std::sync::Arc::new(PolicyGate {
            policy,
            inner,
            home,
            synapse_home,
        }))
    }
}

impl CommandGate for PolicyGate {
    fn check<'a>(
        &'a self,
        action: GateAction<'a>,
        info: GateInfo<'a>,
    ) -> BoxFuture<'a, GateVerdict> {
        Box::pin(async move {
            if let Err(why) = self.judge(&action, &info) {
                return GateVerdict::Refuse(why.to_string());
            }
            match &self.inner {
                Some(g) => g.0.check(action, info).await,
                None => GateVerdict::Run,
            }
        })
    }

    fn read_only(&self) -> Option<GateHandle> {
        self.inner.as_ref().and_then(|g| g.0.read_only())
    }

    fn grant_skill_tools<'a>(
        &'a self,
        grant: SkillToolsGrant<'a>,
    ) -> BoxFuture<'a, SkillToolsAnswer> {
        match &self.inner {
            Some(g) => g.0.grant_skill_tools(grant),
            None => Box::pin(async { SkillToolsAnswer::NotGranted { asked: false } }),
        }
    }
}

/// Why a sub-agent's policy refuses a command; the text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyRefusal {
    /// A sub-agent tried to start another (`task:*`).
    #[error("refused: a sub-agent cannot start other sub-agents (task:*)")]
    NoSubAgents,
    /// The skill sub-agent's `write`/`edit` outside the skill folder.
    #[error("refused: the skill sub-agent may only write below {} (not {})", root.display(), path.display())]
    WriteOutsideSkill {
        /// The skill folder it may write in.
        root: PathBuf,
        /// Where the write would land.
        path: PathBuf,
    },
    /// The skill sub-agent's shell command writing outside the skill folder.
    #[error(
        "refused: `{command}` writes {}; the skill sub-agent writes files with `write`/`edit` \
         below {}",
        path.display(),
        root.display()
    )]
    ShellWriteOutsideSkill {
        /// The command that writes.
        command: String,
        /// Where it writes.
        path: PathBuf,
        /// The skill folder.
        root: PathBuf,
    },
    /// A writing command without the path it writes.
    #[error("refused: `{0}` needs a path")]
    NeedsPath(String),
    /// A read-only sub-agent's command that changes something.
    #[error("refused: this sub-agent is read-only ({0})")]
    ReadOnly(String),
    /// A custom agent's `tools` do not include the command.
    #[error(transparent)]
    Tools(#[from] ToolRefusal),
}

impl PolicyGate {
    /// Why the policy refuses `action`, if it does.
    fn judge(&self, action: &GateAction<'_>, info: &GateInfo<'_>) -> Result<(), PolicyRefusal> {
        match action {
            GateAction::Agent { name, effect, .. } => {
                if name.starts_with("task:") {
                    return Err(PolicyRefusal::NoSubAgents);
                }
                // `bash '…'`, `job start '…'`: the line they start is what the tools must allow.
                if let SubAgentPolicy::Tools(grant) = &self.policy
                    && let Some(line) = action.shell_line()
                {
                    grant.judge_native(&line)?;
                }
                self.judge_agent(name, effect, info)
            }
            GateAction::Native { command } => self.judge_native(command, info),
        }
    }

    fn judge_agent(
        &self,
        name: &str,
        effect: &synapse_permissions::Effect,
        info: &GateInfo<'_>,
    ) -> Result<(), PolicyRefusal> {
        use synapse_permissions::Effect;
        match (&self.policy, effect) {
            (SubAgentPolicy::General, _) => Ok(()),
            (SubAgentPolicy::SkillAuthor { root }, Effect::Writes(paths)) => {
                let root = canonical(root);
                match paths.iter().find(|p| !p.starts_with(&root)) {
                    Some(p) => Err(PolicyRefusal::WriteOutsideSkill {
                        root: root.clone(),
                        path: p.clone(),
                    }),
                    None if paths.is_empty() => Err(PolicyRefusal::NeedsPath(name.to_string())),
                    None => Ok(()),
                }
            }
            (SubAgentPolicy::SkillAuthor { .. }, _) => Ok(()),
            (SubAgentPolicy::Tools(grant), effect) => Ok(grant.judge_agent(name, effect)?),
            (SubAgentPolicy::ReadOnly, _) => {
                let action = Action::Agent {
                    name,
                    command: name,
                    effect: effect.clone(),
                };
                self.read_only_verdict(&action, info)
            }
        }
    }

    fn judge_native(&self, command: &str, info: &GateInfo<'_>) -> Result<(), PolicyRefusal> {
        let parsed = synapse_permissions::parse(command);
        if parsed
            .all_commands()
            .filter_map(|c| c.words.first())
            .any(|w| w.starts_with("task:"))
        {
            return Err(PolicyRefusal::NoSubAgents);
        }
        match &self.policy {
            SubAgentPolicy::General => Ok(()),
            SubAgentPolicy::Tools(grant) => Ok(grant.judge_native(command)?),
            SubAgentPolicy::ReadOnly => self.read_only_verdict(&Action::Native { command }, info),
            SubAgentPolicy::SkillAuthor { root } => {
                let root = canonical(root);
                for cmd in parsed.all_commands() {
                    for target in cmd.writes() {
                        let path = synapse_permissions::resolve(&self.context(info), target);
                        if !path.starts_with(&root) {
                            return Err(PolicyRefusal::ShellWriteOutsideSkill {
                                command: cmd.text.clone(),
                                path,
                                root,
                            });
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// The engine's read-only mode on `action`; nobody can be asked, so only "allow" runs.
    fn read_only_verdict(
        &self,
        action: &Action<'_>,
        info: &GateInfo<'_>,
    ) -> Result<(), PolicyRefusal> {
        match decide(
            action,
            Mode::ReadOnly,
            &RuleSet::default(),
            &self.context(info),
        ) {
            Decision::Allow { .. } => Ok(()),
            Decision::Ask { reason, .. } | Decision::Deny { reason } => {
                Err(PolicyRefusal::ReadOnly(reason))
            }
        }
    }

    fn context<'a>(&'a self, info: &GateInfo<'a>) -> Context<'a> {
        Context {
            cwd: info.cwd,
            home: &self.home,
            synapse_home: &self.synapse_home,
            temp_dir: Path::new("/nonexistent-temp"),
            extra_writable: &[],
            sandboxed: info.sandboxed,
            is_session_pid: info.is_session_pid,
            // Without the registry's names every command counts as a program, the stricter
            // reading; the inner gate, when there is one, judges with the real names.
            agent_commands: &NO_AGENT_COMMANDS,
        }
    }
}

static NO_AGENT_COMMANDS: std::sync::LazyLock<synapse_permissions::AgentCommands> =
    std::sync::LazyLock::new(Default::default);

/// `root` with symlinks resolved (where writes land), else as written.
fn canonical(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| synapse_shared::paths::normalize(root))
}

#[cfg(test)]
#[path = "subagent_policy_tests.rs"]
mod tests;
