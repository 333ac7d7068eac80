//! What hooks said, read with Claude Code's rules: exit 0 is success (stdout may be a JSON
//! object of decisions, else plain text that `UserPromptSubmit` and `SessionStart` add as
//! context); exit 2 blocks, with stderr as the reason; any other exit is an error shown to the
//! user while the turn goes on. Every hook of one event folds into one [`HookVerdict`].

use serde_json::Value;

use super::config::HookEvent;
use super::run::RunOutcome;

pub use synapse_command::gate::HookPermission as Permission;

/// Everything the hooks of one event decided together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookVerdict {
    /// Blocked (exit 2, `decision: "block"`, `permissionDecision: "deny"`): the reason.
    pub block: Option<String>,
    /// The strongest permission word of the PreToolUse hooks (`ask` over `allow`).
    pub permission: Permission,
    /// Text for the model (`additionalContext`, or stdout of UserPromptSubmit/SessionStart).
    pub context: Vec<String>,
    /// `continue: false`: the agent stops; the `stopReason` for the user.
    pub stop: Option<String>,
    /// Lines for the user: `systemMessage`, errors of hooks that failed.
    pub notices: Vec<String>,
}

impl HookVerdict {
    /// Folds one hook's outcome in; `label` names the hook for the user.
    pub fn absorb(&mut self, event: HookEvent, label: &str, outcome: RunOutcome) {
        let (code, stdout, stderr) = match outcome {
            RunOutcome::Failed(why) => {
                self.notices
                    .push(format!("{} hook `{label}` {why}", event.name()));
                return;
            }
            RunOutcome::Exited {
                code,
                stdout,
                stderr,
            } => (code, stdout, stderr),
        };
        match code {
            0 => self.success(event, label, &stdout),
            2 => {
                let reason = stderr.trim();
                let reason = if reason.is_empty() {
                    format!("blocked by the {} hook `{label}`", event.name())
                } else {
                    reason.to_string()
                };
                if blocks(event) {
                    add_reason(&mut self.block, reason);
                } else {
                    self.notices
                        .push(format!("{} hook `{label}`: {reason}", event.name()));
                }
            }
            code => {
                let err = stderr.trim();
                let detail = if err.is_empty() {
                    String::new()
                } else {
                    format!(": {err}")
                };
                self.notices.push(format!(
                    "{} hook `{label}` failed with exit code {code}{detail}",
                    event.name()
                ));
            }
        }
    }

    fn success(&mut self, event: HookEvent, label: &str, stdout: &str) {
        let trimmed = stdout.trim();
        let json = trimmed
            .starts_with('{')
            .then(|| serde_json::from_str::<Value>(trimmed).ok())
            .flatten()
            .filter(Value::is_object);
        let Some(json) = json else {
            if !trimmed.is_empty()
                && matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
            {
                self.context.push(trimmed.to_string());
            }
            return;
        };
        if json.get("continue").and_then(Value::as_bool) == Some(false) {
            let reason = text(&json, "stopReason")
                .unwrap_or_else(|| format!("stopped by the {} hook `{label}`", event.name()));
            add_reason(&mut self.stop, reason);
        }
        if let Some(message) = text(&json, "systemMessage") {
            self.notices.push(message);
        }
        let reason = text(&json, "reason");
        match json.get("decision").and_then(Value::as_str) {
            Some("block") if blocks(event) => add_reason(
                &mut self.block,
                reason.unwrap_or_else(|| format!("blocked by the {} hook `{label}`", event.name())),
            ),
            // The older PreToolUse spelling of "allow".
            Some("approve") if event == HookEvent::PreToolUse => {
                self.permission = stronger(self.permission, Permission::Allow);
            }
            _ => {}
        }
        let Some(specific) = json.get("hookSpecificOutput").filter(|v| v.is_object()) else {
            return;
        };
        if let Some(context) = text(specific, "additionalContext") {
            self.context.push(context);
        }
        if event == HookEvent::PreToolUse {
            let why = text(specific, "permissionDecisionReason");
            match specific.get("permissionDecision").and_then(Value::as_str) {
                Some("deny") => add_reason(
                    &mut self.block,
                    why.unwrap_or_else(|| format!("denied by the PreToolUse hook `{label}`")),
                ),
                Some("ask") => self.permission = stronger(self.permission, Permission::Ask),
                Some("allow") => self.permission = stronger(self.permission, Permission::Allow),
                _ => {}
            }
        }
    }
}

/// Events whose exit 2 / `decision: "block"` holds something up (the others only inform).
fn blocks(event: HookEvent) -> bool {
    matches!(
        event,
        HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop
    )
}

fn stronger(a: Permission, b: Permission) -> Permission {
    match (a, b) {
        (Permission::Ask, _) | (_, Permission::Ask) => Permission::Ask,
        (Permission::Allow, _) | (_, Permission::Allow) => Permission::Allow,
        _ => Permission::Unsaid,
    }
}

fn add_reason(slot: &mut Option<String>, reason: String) {
    match slot {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&reason);
        }
        None => *slot = Some(reason),
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> RunOutcome {
        RunOutcome::Exited {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    fn one(event: HookEvent, outcome: RunOutcome) -> HookVerdict {
        let mut v = HookVerdict::default();
        v.absorb(event, "h.sh", outcome);
        v
    }

    #[test]
    fn exit_two_blocks_with_stderr_where_the_event_can_block() {
        let v = one(HookEvent::PreToolUse, exited(2, "", "no rm here\n"));
        assert_eq!(v.block.as_deref(), Some("no rm here"));
        let v = one(HookEvent::SessionStart, exited(2, "", "meh"));
        assert_eq!(v.block, None);
        assert_eq!(v.notices, ["SessionStart hook `h.sh`: meh"]);
    }

    #[test]
    fn other_exits_and_failures_are_notices_naming_the_hook() {
        let v = one(HookEvent::PostToolUse, exited(1, "", "bad"));
        assert_eq!(v.block, None);
        assert_eq!(
            v.notices,
            ["PostToolUse hook `h.sh` failed with exit code 1: bad"]
        );
        let v = one(HookEvent::Stop, RunOutcome::Failed("timed out".into()));
        assert_eq!(v.notices, ["Stop hook `h.sh` timed out"]);
    }

    #[test]
    fn plain_stdout_is_context_only_for_prompt_and_session_start() {
        let v = one(
            HookEvent::UserPromptSubmit,
            exited(0, "today is Friday\n", ""),
        );
        assert_eq!(v.context, ["today is Friday"]);
        let v = one(HookEvent::PostToolUse, exited(0, "formatted", ""));
        assert!(v.context.is_empty());
    }

    #[test]
    fn json_output_is_honoured() {
        let v = one(
            HookEvent::PreToolUse,
            exited(
                0,
                r#"{"continue": false, "stopReason": "enough", "systemMessage": "hi",
                    "hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "deny", "permissionDecisionReason": "not on main"}}"#,
                "",
            ),
        );
        assert_eq!(v.stop.as_deref(), Some("enough"));
        assert_eq!(v.block.as_deref(), Some("not on main"));
        assert_eq!(v.notices, ["hi"]);

        let v = one(
            HookEvent::Stop,
            exited(0, r#"{"decision": "block", "reason": "run the tests"}"#, ""),
        );
        assert_eq!(v.block.as_deref(), Some("run the tests"));

        let v = one(
            HookEvent::UserPromptSubmit,
            exited(
                0,
                r#"{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}"#,
                "",
            ),
        );
        assert_eq!(v.context, ["ctx"]);
    }

    #[test]
    fn ask_wins_over_allow() {
        let mut v = HookVerdict::default();
        let allow = r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#;
        let ask = r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#;
        v.absorb(HookEvent::PreToolUse, "a", exited(0, allow, ""));
        assert_eq!(v.permission, Permission::Allow);
        v.absorb(HookEvent::PreToolUse, "b", exited(0, ask, ""));
        v.absorb(HookEvent::PreToolUse, "c", exited(0, allow, ""));
        assert_eq!(v.permission, Permission::Ask);
    }
}
