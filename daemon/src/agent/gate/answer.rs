//! Acting on a decision: run, refuse (with the message the model sees), or ask the user —
//! or refuse in a non-interactive run, or approve for `--yes` — and remember "session" and
//! "always" answers, the latter in the rules file. Every outcome is audited.

use std::path::{Path, PathBuf};

use synapse_shared::settings;

use super::SessionGate;
use super::audit::AuditEntry;
use super::rules_source::LoadedRules;
use crate::shell::GateVerdict;
use synapse_permissions::{Decision, Mode, Pattern, RuleKind, RuleSet, Verdict};

impl SessionGate {
    /// Where an "always" answer is saved: the trusted project's file, else the user's.
    fn always_file(&self, loaded: &LoadedRules) -> PathBuf {
        match &loaded.project {
            Some(p) if p.trusted => p.file.clone(),
            _ => self.env.user_settings.path().to_path_buf(),
        }
    }

    /// After the user's "always" wrote to the trusted project's rules file, that content is the
    /// user's own: it stays trusted.
    fn repin(&self, file: &Path, loaded: &LoadedRules) {
        let project = loaded
            .project
            .as_ref()
            .filter(|p| p.trusted && p.file == file);
        if project.is_none() {
            return;
        }
        let home = self.env.trust_file.parent().unwrap_or(Path::new("/"));
        if let Err(e) =
            crate::workspace::trust_pins::pin(&crate::workspace::trust_pins::pin_file(home), file)
        {
            (self.notify)(format!("could not pin {}: {e}", file.display()));
        }
    }

    /// Adds `pattern` to `permissions.<bash|mcp>.allow` in `file` (kept once); the user's own
    /// file through the settings handle, so the rule is in force at once everywhere.
    fn save_always(&self, file: &Path, pattern: &str) -> Result<(), settings::SettingsError> {
        let edit = |tree: &mut serde_json::Value| add_allow(tree, pattern);
        if file == self.env.user_settings.path() {
            return self.env.user_settings.update(edit).map(|_| ());
        }
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        settings::update(file, edit).map(|_| ())
    }

    /// Acts on a decision: runs, refuses, or asks (and remembers "session"/"always").
    pub(super) async fn resolve(
        &self,
        command: &str,
        decision: Decision,
        mode: Mode,
        sandboxed: bool,
        loaded: &LoadedRules,
        rules_file_write: bool,
    ) -> GateVerdict {
        let mode_name = mode.as_str();
        let record = |outcome: &str, reason: &str, by: &str| {
            self.audit.record(&AuditEntry {
                outcome,
                command,
                reason,
                by,
                mode: mode_name,
            })
        };
        match decision {
            Decision::Allow { escalate, note } => {
                if escalate && sandboxed {
                    record("unsandboxed", note.as_deref().unwrap_or("allowed"), "rule");
                    GateVerdict::RunUnsandboxed
                } else {
                    GateVerdict::Run
                }
            }
            Decision::Deny { reason } => {
                record("denied", &reason, "rule");
                GateVerdict::Refuse(format!("Permission denied: {reason}"))
            }
            Decision::Ask {
                reason,
                suggestion,
                escalate,
            } => {
                let run = if escalate && sandboxed {
                    GateVerdict::RunUnsandboxed
                } else {
                    GateVerdict::Run
                };
                let (non_interactive, approve_all, hint) = {
                    let st = self.state();
                    (st.non_interactive, st.approve_all, st.refusal_hint)
                };
                // `--yes` never covers a write to the rules files: only the user's own answer.
                if approve_all && !rules_file_write {
                    record("approved", &reason, "--yes");
                    return run;
                }
                if non_interactive {
                    record("denied", &reason, "non-interactive");
                    if hint == super::RefusalHint::SettingsRule && !rules_file_write {
                        let file = self.always_file(loaded);
                        return settings_rule_refusal(&reason, &suggestion, &file);
                    }
                    let how = if rules_file_write {
                        "an interactive session (`synapse`), or by editing the file themselves"
                            .to_string()
                    } else if suggestion.is_empty() {
                        "--yes".to_string()
                    } else {
                        format!("--allow {} or --yes", allow_word(&suggestion))
                    };
                    (self.notify)(format!(
                        "denied: `{}` ({reason}); allow it with {how}",
                        one_line(command)
                    ));
                    return GateVerdict::Refuse(format!(
                        "Permission denied: {reason}. This run is non-interactive, so nobody can \
                         approve it; the user can rerun with {how}."
                    ));
                }
                let file = self.always_file(loaded);
                let answer = self
                    .approver
                    .request(
                        format!("Run `{}`?", one_line(command)),
                        reason.clone(),
                        suggestion.clone(),
                        file.display().to_string(),
                    )
                    .await;
                match answer.as_str() {
                    "yes" => {
                        record("approved", &reason, "user");
                        run
                    }
                    "session" if !suggestion.is_empty() => {
                        self.allow_for_session(&suggestion);
                        record("approved-for-session", &suggestion, "user");
                        run
                    }
                    // Without a pattern the approver remembered the question itself.
                    "session" | "always" if suggestion.is_empty() => {
                        record("approved-for-session", &reason, "user");
                        run
                    }
                    "always" => {
                        self.allow_for_session(&suggestion);
                        let saved = self.save_always(&file, &suggestion);
                        if saved.is_ok() {
                            self.repin(&file, loaded);
                        }
                        match saved {
                            Ok(()) => record("approved-always", &suggestion, "user"),
                            Err(e) => {
                                (self.notify)(format!(
                                    "could not save `{suggestion}` to {}: {e}; allowed for this session only",
                                    file.display()
                                ));
                                record("approved-for-session", &suggestion, "user");
                            }
                        }
                        run
                    }
                    _ => {
                        record("denied", &reason, "user");
                        GateVerdict::Refuse(format!(
                            "Permission denied by the user: `{}` ({reason}). Do not retry it; \
                             ask the user or take another way.",
                            one_line(command)
                        ))
                    }
                }
            }
        }
    }

    fn allow_for_session(&self, pattern: &str) {
        match Pattern::parse(pattern) {
            Ok(p) => {
                let kind = rule_kind(pattern);
                self.state()
                    .session_rules
                    .add(kind, Verdict::Allow, p, "this session");
            }
            Err(e) => tracing::warn!("cannot allow {pattern:?} for the session: {e}"),
        }
    }
}

/// `pattern` as one shell word the user can paste after `--allow`: single-quoted, its own
/// single quotes written as `'\''`, so a pattern such as `rm -rf '$HOME/my dir'` survives.
fn allow_word(pattern: &str) -> String {
    format!("'{}'", pattern.replace('\'', r"'\''"))
}

/// The refusal of a caller that takes no `--allow`/`--yes` (`synapse exec`, `synapse mcp serve`):
/// the allow rule that lets it run, and the rules file an "always" answer would write it to.
fn settings_rule_refusal(reason: &str, suggestion: &str, file: &Path) -> GateVerdict {
    let how = if suggestion.is_empty() {
        "the user can run it in an interactive session (`synapse`) and answer yes".to_string()
    } else {
        format!(
            "the user allows it by adding \"{}\" to permissions.{}.allow in {} (or by \
             answering \"always\" in an interactive session, `synapse`)",
            suggestion.replace('\\', "\\\\").replace('"', "\\\""),
            rule_list(suggestion),
            file.display()
        )
    };
    GateVerdict::Refuse(format!(
        "Permission denied: {reason}. Nobody can approve it from here (non-interactive); {how}."
    ))
}

/// The `permissions.<list>.allow` list a pattern belongs in.
fn rule_list(pattern: &str) -> &'static str {
    match rule_kind(pattern) {
        RuleKind::Mcp => "mcp",
        RuleKind::Bash => "bash",
    }
}

fn rule_kind(pattern: &str) -> RuleKind {
    if pattern.starts_with("mcp:") && !pattern.contains(' ') {
        RuleKind::Mcp
    } else {
        RuleKind::Bash
    }
}

pub(super) fn session_rule_set(patterns: &[String], problems: &mut Vec<String>) -> RuleSet {
    labelled_rule_set(patterns, "--allow", problems)
}

/// Allow rules from `patterns`, each labelled `source` (where a decision says it came from).
pub(super) fn labelled_rule_set(
    patterns: &[String],
    source: &str,
    problems: &mut Vec<String>,
) -> RuleSet {
    let mut set = RuleSet::default();
    for p in patterns {
        match Pattern::parse(p) {
            Ok(pat) => set.add(rule_kind(p), Verdict::Allow, pat, source),
            Err(e) => problems.push(format!("{source} {p:?}: {e}")),
        }
    }
    set
}

/// Adds `pattern` to `permissions.<bash|mcp>.allow` of a settings tree (kept once).
fn add_allow(tree: &mut serde_json::Value, pattern: &str) {
    let list = match rule_kind(pattern) {
        RuleKind::Mcp => "mcp",
        RuleKind::Bash => "bash",
    };
    let mut items = tree
        .pointer(&format!("/permissions/{list}/allow"))
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    if !items.iter().any(|v| v.as_str() == Some(pattern)) {
        items.push(serde_json::Value::String(pattern.to_string()));
    }
    settings::set_key(
        tree,
        &["permissions", list, "allow"],
        serde_json::Value::Array(items),
    );
}

fn one_line(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(160).collect();
    if s.len() < first.len() || command.lines().nth(1).is_some() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod allow_word_tests {
    use super::allow_word;

    #[test]
    fn the_suggested_allow_is_one_shell_word_with_its_quotes() {
        for pattern in ["git push:*", "rm -rf '$HOME/my dir'", "echo \"it's\""] {
            let word = allow_word(pattern);
            assert_eq!(
                shlex::split(&word),
                Some(vec![pattern.to_string()]),
                "{word}"
            );
        }
    }
}
