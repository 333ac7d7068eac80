//! Claude Code's `hooks` setting, parsed: `{"<Event>": [{"matcher": "...", "hooks": [{"type":
//! "command", "command": "...", "timeout": 30}]}]}` → one [`HookEntry`] per command, each
//! remembering the file it came from. A wrong entry is skipped and named in
//! [`HookSet::problems`]; the other hooks of the file still count.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::matcher::Matcher;

/// How long a hook may run when its entry gives no `timeout` (Claude Code's default).
pub const HOOK_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// The longest `timeout` honoured.
pub const HOOK_TIMEOUT_MAX: Duration = Duration::from_secs(600);

/// The events Synapse fires, by Claude Code's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Notification,
    Stop,
    SubagentStop,
    PreCompact,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: [HookEvent; 9] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Notification => "Notification",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the event's matcher is read at all (Claude Code ignores it for these).
    pub fn uses_matcher(self) -> bool {
        !matches!(
            self,
            HookEvent::UserPromptSubmit | HookEvent::Stop | HookEvent::SubagentStop
        )
    }
}

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOrigin {
    /// The settings file (or plugin `hooks/hooks.json`).
    pub file: PathBuf,
    /// A plugin's root folder (`${CLAUDE_PLUGIN_ROOT}`), for plugin hooks.
    pub plugin_root: Option<PathBuf>,
    /// That plugin's data folder (`${CLAUDE_PLUGIN_DATA}`).
    pub plugin_data: Option<PathBuf>,
}

/// One configured hook command.
#[derive(Debug, Clone)]
pub struct HookEntry {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
    pub origin: HookOrigin,
}

/// Every hook of every source, with what was wrong in them.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    pub entries: Vec<HookEntry>,
    pub problems: Vec<String>,
}

impl HookSet {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether any hook is configured for `event` (no process is started for an event without).
    pub fn has(&self, event: HookEvent) -> bool {
        self.entries.iter().any(|e| e.event == event)
    }

    /// Adds the hooks of one file's `hooks` value.
    pub fn add(&mut self, hooks: &Value, origin: &HookOrigin) {
        let label = origin.file.display();
        let Some(events) = hooks.as_object() else {
            if !hooks.is_null() {
                self.problems
                    .push(format!("{label}: `hooks` must be an object of events"));
            }
            return;
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                self.problems.push(format!(
                    "{label}: hooks.{name}: not an event Synapse fires (it fires {})",
                    HookEvent::ALL.map(HookEvent::name).join(", ")
                ));
                continue;
            };
            let Some(groups) = groups.as_array() else {
                self.problems.push(format!(
                    "{label}: hooks.{name} must be a list of {{\"matcher\", \"hooks\"}} objects"
                ));
                continue;
            };
            for (i, group) in groups.iter().enumerate() {
                self.add_group(event, group, origin, &format!("hooks.{name}[{i}]"));
            }
        }
    }

    fn add_group(&mut self, event: HookEvent, group: &Value, origin: &HookOrigin, at: &str) {
        let label = origin.file.display();
        let raw = group.get("matcher").and_then(Value::as_str).unwrap_or("");
        let raw = if event.uses_matcher() { raw } else { "" };
        let matcher = match Matcher::new(raw) {
            Ok(m) => m,
            Err(e) => {
                self.problems.push(format!(
                    "{label}: {at}.matcher {raw:?} is not a valid regex ({e})"
                ));
                return;
            }
        };
        let Some(commands) = group.get("hooks").and_then(Value::as_array) else {
            self.problems.push(format!(
                "{label}: {at}.hooks must be a list of hook commands"
            ));
            return;
        };
        for (j, hook) in commands.iter().enumerate() {
            let kind = hook
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("command");
            if kind != "command" {
                self.problems.push(format!(
                    "{label}: {at}.hooks[{j}]: type {kind:?} is not supported; only \"command\" hooks run"
                ));
                continue;
            }
            let Some(command) = hook
                .get("command")
                .and_then(Value::as_str)
                .filter(|c| !c.trim().is_empty())
            else {
                self.problems
                    .push(format!("{label}: {at}.hooks[{j}] has no \"command\""));
                continue;
            };
            let timeout = match hook.get("timeout") {
                None | Some(Value::Null) => HOOK_TIMEOUT_DEFAULT,
                Some(t) => match t.as_f64().filter(|s| *s > 0.0) {
                    Some(secs) => Duration::from_secs_f64(secs).min(HOOK_TIMEOUT_MAX),
                    None => {
                        self.problems.push(format!(
                            "{label}: {at}.hooks[{j}].timeout must be a positive number of seconds"
                        ));
                        HOOK_TIMEOUT_DEFAULT
                    }
                },
            };
            let command = match &origin.plugin_root {
                Some(root) => expand_plugin_root(command, root),
                None => command.to_string(),
            };
            self.entries.push(HookEntry {
                event,
                matcher: matcher.clone(),
                command,
                timeout,
                origin: origin.clone(),
            });
        }
    }
}

/// `${CLAUDE_PLUGIN_ROOT}` (and `$CLAUDE_PLUGIN_ROOT`) in a plugin hook's command.
fn expand_plugin_root(command: &str, root: &Path) -> String {
    let root = root.display().to_string();
    command
        .replace("${CLAUDE_PLUGIN_ROOT}", &root)
        .replace("$CLAUDE_PLUGIN_ROOT", &root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> HookOrigin {
        HookOrigin {
            file: "/p/settings.json".into(),
            plugin_root: None,
            plugin_data: None,
        }
    }

    #[test]
    fn claude_codes_layout_parses_with_defaults() {
        let mut set = HookSet::default();
        set.add(
            &json!({
                "PreToolUse": [{"matcher": "Write|Edit", "hooks": [
                    {"type": "command", "command": "fmt.sh", "timeout": 5}
                ]}],
                "Stop": [{"matcher": "ignored(", "hooks": [{"command": "done.sh"}]}]
            }),
            &origin(),
        );
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        assert_eq!(set.entries.len(), 2);
        let pre = &set.entries[0];
        assert_eq!(pre.event, HookEvent::PreToolUse);
        assert_eq!(pre.timeout, Duration::from_secs(5));
        assert!(pre.matcher.matches("Write") && !pre.matcher.matches("Read"));
        let stop = &set.entries[1];
        assert_eq!(stop.timeout, HOOK_TIMEOUT_DEFAULT);
        assert!(stop.matcher.matches("anything"), "Stop ignores its matcher");
    }

    #[test]
    fn wrong_entries_are_named_and_skipped() {
        let mut set = HookSet::default();
        set.add(
            &json!({
                "PreToolUse": [{"matcher": "(", "hooks": [{"command": "a"}]},
                               {"hooks": [{"type": "prompt", "prompt": "x"}, {"command": "b"}]}],
                "PermissionRequest": [],
                "Stop": "nope"
            }),
            &origin(),
        );
        assert_eq!(set.entries.len(), 1);
        assert_eq!(set.entries[0].command, "b");
        assert_eq!(set.problems.len(), 4, "{:?}", set.problems);
        assert!(
            set.problems
                .iter()
                .all(|p| p.starts_with("/p/settings.json: "))
        );
    }

    #[test]
    fn a_plugin_root_is_expanded() {
        let mut set = HookSet::default();
        let origin = HookOrigin {
            file: "/c/p/1.0/hooks/hooks.json".into(),
            plugin_root: Some("/c/p/1.0".into()),
            plugin_data: None,
        };
        set.add(
            &json!({"SessionStart": [{"hooks": [{"command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/start.sh\""}]}]}),
            &origin,
        );
        assert_eq!(set.entries[0].command, "\"/c/p/1.0/hooks/start.sh\"");
    }
}
