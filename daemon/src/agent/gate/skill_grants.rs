//! A loaded skill's `allowed-tools` in the session gate: how they are granted, and what they may
//! cover once granted.
//!
//! Granting ([`SessionGate::grant_skill_tools_now`]): a list whose skill content the user
//! approved counts at once; any other list is shown to the user as a question (interactive
//! sessions) or counts for nothing (`synapse run`, sub-agents, a session nobody watches).
//!
//! Covering ([`SessionGate::cover_with_skill_grants`]): a granted pattern only turns an "ask"
//! into "run" for what stays inside the sandbox — a shell line that runs sandboxed, or an
//! in-process agent command whose writes all land in the session's writable folders. It never
//! lifts a command out of the sandbox, never covers a write to a rules file, and never touches
//! a deny rule or a refusal: those are decided before it is consulted.

use synapse_permissions::{self as permissions, Action, Context, Decision, Effect, Mode, RuleSet};

use super::SessionGate;
use super::answer::labelled_rule_set;
use crate::shell::{GateAction, SkillToolsAnswer, SkillToolsGrant};

impl SessionGate {
    pub(super) async fn grant_skill_tools_now(
        &self,
        grant: SkillToolsGrant<'_>,
    ) -> SkillToolsAnswer {
        if grant.patterns.is_empty() {
            return SkillToolsAnswer::NotGranted { asked: false };
        }
        let mut always = false;
        if !grant.approved {
            if self.state().non_interactive {
                return SkillToolsAnswer::NotGranted { asked: false };
            }
            let answer = self
                .approver
                .request(
                    format!(
                        "Let skill `{}` pre-approve {} for this session?",
                        grant.skill,
                        grant.patterns.join(", ")
                    ),
                    "its allowed-tools are not approved for this content (a session may have \
                     written or changed the skill); approved ones run without a question, but \
                     only inside the sandbox, and any change to the skill voids the approval"
                        .to_string(),
                    // What "always" records: this skill's approval, pinned by its content.
                    format!("skill approve {}", grant.skill),
                    self.env
                        .synapse_home
                        .join(synapse_shared::paths::SKILL_APPROVALS_FILE)
                        .display()
                        .to_string(),
                )
                .await;
            match answer.as_str() {
                "yes" | "session" => {}
                "always" => always = true,
                _ => return SkillToolsAnswer::NotGranted { asked: true },
            }
        }
        let mut problems = Vec::new();
        let source = format!("skill {} allowed-tools", grant.skill);
        let set = labelled_rule_set(grant.patterns, &source, &mut problems);
        self.state().skill_rules.merge(set);
        if always {
            SkillToolsAnswer::GrantedAlways { problems }
        } else {
            SkillToolsAnswer::Granted { problems }
        }
    }

    /// `decision` for `action`, with "ask" turned into "run inside the sandbox" when a granted
    /// skill pattern covers it and it stays inside the sandbox.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cover_with_skill_grants(
        &self,
        decision: Decision,
        action: &GateAction<'_>,
        sandboxed: bool,
        mode: Mode,
        rules: &RuleSet,
        ctx: &Context,
        shell: &permissions::ShellState,
    ) -> Decision {
        if !matches!(decision, Decision::Ask { .. }) {
            return decision;
        }
        let grants = self.state().skill_rules.clone();
        if grants.is_empty() {
            return decision;
        }
        let mut with = rules.clone();
        with.merge(grants);
        let covered = if let Some(line) = action.shell_line() {
            // Only a line the OS sandbox confines: it can do nothing the sandbox forbids.
            sandboxed && allows(&self.native(&line, mode, &with, ctx, shell))
        } else if let GateAction::Agent {
            name,
            command,
            effect,
            ..
        } = action
        {
            stays_inside(effect, ctx)
                && allows(&permissions::decide(
                    &Action::Agent {
                        name,
                        command,
                        effect: effect.clone(),
                    },
                    mode,
                    &with,
                    ctx,
                ))
        } else {
            false
        };
        if !covered {
            return decision;
        }
        Decision::Allow {
            escalate: false,
            note: Some(
                "pre-approved by a loaded skill's allowed-tools (inside the sandbox)".into(),
            ),
        }
    }
}

fn allows(d: &Decision) -> bool {
    matches!(d, Decision::Allow { .. })
}

/// Whether an in-process agent command's effect stays where the sandbox would let a shell
/// write: reads, or writes that all land in a writable folder.
fn stays_inside(effect: &Effect, ctx: &Context) -> bool {
    match effect {
        Effect::ReadOnly => true,
        Effect::Writes(paths) => !paths.is_empty() && paths.iter().all(|p| ctx.is_writable(p)),
        Effect::SubAgent { .. } | Effect::Other => false,
    }
}
