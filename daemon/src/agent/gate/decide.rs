//! Feeding the permission engine: the session's rules and facts for one command, the MCP
//! rules for every `mcp:` command in a command line, and the guard on the rules files.

use std::path::PathBuf;

use super::protect;
use super::rules_source::LoadedRules;
use super::{SessionGate, skills_dir};
use crate::shell::{GateAction, GateInfo, GateVerdict};
use synapse_command::gate::HookPermission;
use synapse_permissions::{
    self as permissions, Action, Context, Decision, Effect, Mode, RuleSet, ShellState,
};

impl SessionGate {
    /// Judges one command with the rules files read once, then acts on the decision.
    pub(super) async fn decide_and_ask(
        &self,
        action: GateAction<'_>,
        info: GateInfo<'_>,
    ) -> GateVerdict {
        let loaded = self.rules();
        let mode = self.mode_with(&loaded);
        let mut rules = loaded.rules.clone();
        rules.merge(self.state().session_rules.clone());
        // The session's folder stays writable after a `cd` elsewhere, as in the sandbox.
        let mut extra = loaded.writable_dirs.clone();
        extra.push(self.root.clone());
        extra.extend(self.state().added_dirs.iter().cloned());
        let skills = skills_dir(&self.env.synapse_home);
        // Without a temporary folder, the session folder stands in (nothing extra writable).
        let temp = self.temp_dir().unwrap_or_else(|| self.root.clone());
        let ctx = Context {
            cwd: info.cwd,
            home: &self.env.home,
            synapse_home: &skills,
            temp_dir: &temp,
            extra_writable: &extra,
            sandboxed: info.sandboxed,
            is_session_pid: info.is_session_pid,
            agent_commands: &self.env.agent_commands,
        };
        let protected = self.protected(&loaded);
        let config_paths = self.env.user_config();
        let writable = self.writable_dirs(&loaded);
        let pinned = self.pinned_files();
        let config = protect::Config {
            paths: &config_paths,
            keep: &writable,
            pinned: &pinned,
        };
        let shell = self.tracked_shell().current(info.shell_pid);
        let (text, decision, rules_file) = match &action {
            GateAction::Native { command } => (
                *command,
                self.native(command, mode, &rules, &ctx, &shell),
                protect::native_hit(
                    command,
                    &protected,
                    config,
                    &self.env.synapse_home,
                    &ctx,
                    &shell,
                ),
            ),
            GateAction::Agent {
                name,
                command,
                effect,
                ..
            } => {
                if let Some(inner) = action.shell_line() {
                    let d = self.native(&inner, mode, &rules, &ctx, &shell);
                    let home = &self.env.synapse_home;
                    let hit = protect::native_hit(&inner, &protected, config, home, &ctx, &shell);
                    (*command, d, hit)
                } else {
                    let d = permissions::decide(
                        &Action::Agent {
                            name,
                            command,
                            effect: effect.clone(),
                        },
                        mode,
                        &rules,
                        &ctx,
                    );
                    (*command, d, protect::effect_hit(effect, &protected, config))
                }
            }
        };
        let decision = match &rules_file {
            Some(file) => protect::ask_for(decision, file),
            None => self.cover_with_skill_grants(
                decision,
                &action,
                info.sandboxed,
                mode,
                &rules,
                &ctx,
                &shell,
            ),
        };
        let decision = match info.hook {
            HookPermission::Allow => {
                let beyond = self.beyond_the_sandbox(&action, &decision, info.sandboxed, &loaded);
                hook_weighed(decision, info.hook, rules_file.is_some(), beyond)
            }
            hook => hook_weighed(decision, hook, rules_file.is_some(), None),
        };
        let bypass = self.state().bypass;
        let decision = if bypass && rules_file.is_none() {
            let beyond = self.beyond_the_sandbox(&action, &decision, info.sandboxed, &loaded);
            super::bypass::weighed(decision, beyond)
        } else {
            decision
        };
        // An agent command inside a line the user just approved (same call, named in the line)
        // was part of what they said yes to: not asked again. Rules files are always asked.
        if let GateAction::Agent { name, .. } = &action
            && action.shell_line().is_none()
            && rules_file.is_none()
            && matches!(decision, Decision::Ask { .. })
            && self.line_covers(info.call_seq, name)
        {
            self.audit.record(&super::audit::AuditEntry {
                outcome: "approved",
                command: text,
                reason: "part of the line the user approved",
                by: "user",
                mode: mode.as_str(),
            });
            return GateVerdict::Run;
        }
        let asked = matches!(decision, Decision::Ask { .. });
        let native = matches!(action, GateAction::Native { .. })
            || matches!(action, GateAction::Agent { name: "bash", .. });
        let sandboxed = native && info.sandboxed;
        let verdict = self
            .resolve(
                text,
                decision,
                mode,
                sandboxed,
                &loaded,
                rules_file.is_some(),
            )
            .await;
        let ran = !matches!(verdict, GateVerdict::Refuse(_));
        if let Some(line) = action.shell_line().filter(|_| ran) {
            self.tracked_shell().record(info.shell_pid, &line);
        }
        if let GateAction::Native { command } = &action {
            let approved = (asked && ran).then(|| {
                let parsed = permissions::parse(command);
                let programs = parsed
                    .all_commands()
                    .filter_map(|c| c.program().map(str::to_string))
                    .collect();
                (info.call_seq, programs)
            });
            *self.approved_line() = approved;
        }
        verdict
    }

    fn approved_line(&self) -> parking_lot::MutexGuard<'_, Option<(u64, Vec<String>)>> {
        self.approved_line.lock()
    }

    /// Whether agent command `name` of call `seq` is named by the line approved in that call.
    fn line_covers(&self, seq: u64, name: &str) -> bool {
        seq != 0
            && self
                .approved_line()
                .as_ref()
                .is_some_and(|(s, programs)| *s == seq && programs.iter().any(|p| p == name))
    }

    fn tracked_shell(&self) -> parking_lot::MutexGuard<'_, super::shell_state::TrackedShell> {
        self.shell.lock()
    }

    /// The decision for a command line: the policy, combined with the MCP rules for every
    /// `mcp:` command in it.
    pub(super) fn native(
        &self,
        command: &str,
        mode: Mode,
        rules: &RuleSet,
        ctx: &Context,
        shell: &ShellState,
    ) -> Decision {
        let mut decision =
            permissions::decide_in_shell(&Action::Native { command }, mode, rules, ctx, shell);
        if !command.contains("mcp:") {
            return decision;
        }
        let parsed = permissions::parse(command);
        for cmd in parsed.all_commands() {
            let Some(program) = cmd.program() else {
                continue;
            };
            if !program.starts_with("mcp:") {
                continue;
            }
            let (read_only_hint, destructive_hint) = (self.env.mcp_hints)(program);
            let d = permissions::decide(
                &Action::Mcp {
                    name: program,
                    read_only_hint,
                    destructive_hint,
                },
                mode,
                rules,
                ctx,
            );
            decision = stricter(decision, d);
        }
        decision
    }

    /// The files that hold the rules themselves.
    fn protected(&self, loaded: &LoadedRules) -> Vec<PathBuf> {
        // The trust decisions too: the project-rules pins and the MCP server approvals.
        let home = &self.env.synapse_home;
        let mut files = vec![
            self.env.user_settings.path().to_path_buf(),
            self.env.trust_file.clone(),
            crate::workspace::trust_pins::pin_file(home),
            // `mcp::approval::APPROVALS_FILE` (the gate does not reach into `mcp/`).
            home.join("mcp").join("approved_servers.json"),
            // Which skills' allowed-tools the user approved.
            home.join(synapse_shared::paths::SKILL_APPROVALS_FILE),
            // Claude Code's user settings: their hooks run as the user's own programs, outside
            // the sandbox (`crate::hooks`), so a session may not write them unasked.
            self.env.home.join(".claude").join("settings.json"),
        ];
        if let Some(p) = &loaded.project {
            files.push(p.file.clone());
        }
        files
    }

    /// Every file `synapse trust` pinned — a trusted project's settings, the scripts its hooks
    /// run, its commands, agents and MCP configs: programs outside the sandbox read or run them,
    /// so a write seen to land on one asks like a rules write ([`protect::Config`]). A pin file
    /// that can't be read adds nothing here: the hooks it would pin are held by it anyway.
    fn pinned_files(&self) -> Vec<PathBuf> {
        let pins = crate::workspace::trust_pins::pin_file(&self.env.synapse_home);
        crate::workspace::trust_pins::pinned(&pins)
            .map(|map| map.into_keys().map(PathBuf::from).collect())
            .unwrap_or_default()
    }

    /// Why a hook's `allow` cannot run `action` inside the sandbox, if it cannot: an agent
    /// command (not sandboxed: it runs in the daemon) that writes outside the folders the
    /// session's sandbox may write under this mode, or a command line that needs to leave the
    /// sandbox where there is none to keep it in.
    fn beyond_the_sandbox(
        &self,
        action: &GateAction<'_>,
        decision: &Decision,
        sandboxed: bool,
        loaded: &LoadedRules,
    ) -> Option<String> {
        let effect = match action {
            GateAction::Agent { effect, .. } if action.shell_line().is_none() => effect,
            _ => {
                let leaves = matches!(decision, Decision::Ask { escalate: true, .. });
                return (leaves && !sandboxed)
                    .then(|| "this system runs commands without a sandbox".to_string());
            }
        };
        let Effect::Writes(paths) = effect else {
            return None;
        };
        // Yolo mode has no sandbox to stay in: nothing to widen.
        let spec = self.sandbox_spec_with(loaded)?;
        let writable: Vec<PathBuf> = if spec.read_only {
            Vec::new()
        } else {
            spec.writable
        };
        let inside = |path: &std::path::Path| {
            let lexical = synapse_shared::trust::normalize(path);
            let real = protect::real_path(&lexical);
            writable.iter().any(|w| {
                lexical.starts_with(synapse_shared::trust::normalize(w))
                    && real.starts_with(protect::real_path(w))
            })
        };
        let outside = paths.iter().find(|p| !inside(p))?;
        Some(format!(
            "{} is outside the folders this session's sandbox may write",
            outside.display()
        ))
    }
}

/// The call's PreToolUse hooks weighed in (`crate::hooks`): `ask` turns a run into a question;
/// `allow` turns a question into a run inside the sandbox. A hook never lifts a deny rule, never
/// answers for a write to the rules files, and never takes a command out of the sandbox: when
/// the run could not stay inside it (`beyond` says why), the question stays, saying so.
fn hook_weighed(
    decision: Decision,
    hook: HookPermission,
    rules_file: bool,
    beyond: Option<String>,
) -> Decision {
    match (hook, decision) {
        (HookPermission::Ask, Decision::Allow { escalate, .. }) => Decision::Ask {
            reason: "a PreToolUse hook asks to confirm this command".into(),
            suggestion: String::new(),
            escalate,
        },
        (
            HookPermission::Allow,
            Decision::Ask {
                reason,
                suggestion,
                escalate,
            },
        ) if !rules_file => match beyond {
            None => Decision::Allow {
                escalate: false,
                note: Some("allowed by a PreToolUse hook".into()),
            },
            Some(why) => Decision::Ask {
                reason: format!(
                    "{reason}; a PreToolUse hook allowed it, but a hook's allow never widens \
                     the sandbox ({why})"
                ),
                suggestion,
                escalate,
            },
        },
        (_, decision) => decision,
    }
}

/// The stricter of two decisions: deny over ask over allow.
fn stricter(a: Decision, b: Decision) -> Decision {
    fn rank(d: &Decision) -> u8 {
        match d {
            Decision::Allow { .. } => 0,
            Decision::Ask { .. } => 1,
            Decision::Deny { .. } => 2,
        }
    }
    if rank(&b) > rank(&a) { b } else { a }
}

#[cfg(test)]
mod hook_tests {
    use super::*;

    fn ask() -> Decision {
        Decision::Ask {
            reason: "r".into(),
            suggestion: "touch:*".into(),
            escalate: true,
        }
    }

    #[test]
    fn a_hook_never_loosens_a_deny_nor_lifts_the_sandbox() {
        let deny = Decision::Deny { reason: "r".into() };
        for hook in [HookPermission::Allow, HookPermission::Ask] {
            assert_eq!(hook_weighed(deny.clone(), hook, false, None), deny);
        }
        // allow turns a question into a run, inside the sandbox; never for the rules files.
        assert_eq!(
            hook_weighed(ask(), HookPermission::Allow, false, None),
            Decision::Allow {
                escalate: false,
                note: Some("allowed by a PreToolUse hook".into())
            }
        );
        assert_eq!(
            hook_weighed(ask(), HookPermission::Allow, true, None),
            ask()
        );
        // ask turns a run into a question that saves no rule.
        let run = Decision::Allow {
            escalate: false,
            note: None,
        };
        assert!(matches!(
            hook_weighed(run.clone(), HookPermission::Ask, false, None),
            Decision::Ask { ref suggestion, .. } if suggestion.is_empty()
        ));
        assert_eq!(
            hook_weighed(run.clone(), HookPermission::Unsaid, false, None),
            run
        );
    }

    #[test]
    fn a_hooks_allow_that_would_widen_the_sandbox_leaves_the_question() {
        let beyond =
            Some("/outside/x is outside the folders this session's sandbox may write".into());
        let Decision::Ask {
            reason, suggestion, ..
        } = hook_weighed(ask(), HookPermission::Allow, false, beyond)
        else {
            panic!("must still ask");
        };
        assert!(
            reason.starts_with("r; a PreToolUse hook allowed it"),
            "{reason}"
        );
        assert!(
            reason.contains("never widens the sandbox (/outside/x is outside"),
            "{reason}"
        );
        assert_eq!(
            suggestion, "touch:*",
            "the user can still answer for the session"
        );
    }
}
