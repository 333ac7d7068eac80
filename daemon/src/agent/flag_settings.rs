//! `synapse run --settings FILE|JSON`: Claude Code's "flag settings", a layer over the user's and
//! the project's settings for one session that wins where both speak. Read once when the session
//! opens: a value of the wrong type stops the open naming the key (line and column too); a key
//! with no meaning for a session is a notice naming it, never silently dropped.
//!
//! What a session takes from it: `model`, `provider` and `env` (the model configuration, merged
//! over settings.json's), and `permissions` in Claude Code's words — `allow`/`deny` rules as
//! `--allowedTools`/`--disallowedTools`, `defaultMode` as `--permission-mode` (when that flag is
//! not given), `additionalDirectories` as `--add-dir`.

use serde_json::{Map, Value};
use synapse_shared::settings::Settings;

/// Top-level keys a session applies; any other is reported.
const APPLIED: [&str; 4] = ["model", "provider", "env", "permissions"];
/// `permissions` keys a session applies.
const APPLIED_PERMISSIONS: [&str; 4] = ["allow", "deny", "defaultMode", "additionalDirectories"];

/// The flag settings as the session uses them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlagSettings {
    /// `model`, `provider`, `env`: laid over settings.json for the model configuration.
    overlay: Map<String, Value>,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// `permissions.defaultMode` in Synapse's words.
    pub default_mode: Option<String>,
    pub additional_directories: Vec<String>,
    /// Keys that mean nothing to a session, each named.
    pub notices: Vec<String>,
}

impl FlagSettings {
    /// Reads the flag's JSON object text ("" = no flag settings).
    pub fn read(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let typed = synapse_shared::settings::parse(std::path::Path::new("--settings"), text)
            .map_err(|e| e.to_string())?;
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
            return Err("--settings: expected a JSON object".into());
        };
        let mut out = Self::default();
        for (key, value) in &map {
            if APPLIED.contains(&key.as_str()) && key != "permissions" {
                out.overlay.insert(key.clone(), value.clone());
            } else if key != "permissions" {
                out.notices.push(format!(
                    "--settings: `{key}` has no effect on a session (it applies {})",
                    APPLIED.join(", ")
                ));
            }
        }
        let permissions = match &typed.permissions {
            Value::Object(p) => p.clone(),
            Value::Null => Map::new(),
            _ => return Err("--settings: `permissions` must be an object".into()),
        };
        for (key, value) in &permissions {
            let list = |what: &str| -> Result<Vec<String>, String> {
                match value {
                    Value::Array(items) => items
                        .iter()
                        .map(|i| {
                            i.as_str().map(String::from).ok_or_else(|| {
                                format!("--settings: `permissions.{what}` must list strings")
                            })
                        })
                        .collect(),
                    _ => Err(format!(
                        "--settings: `permissions.{what}` must be an array of strings"
                    )),
                }
            };
            match key.as_str() {
                "allow" => out.allow = list("allow")?,
                "deny" => out.deny = list("deny")?,
                "additionalDirectories" => {
                    out.additional_directories = list("additionalDirectories")?
                }
                "defaultMode" => {
                    let mode = value.as_str().ok_or(
                        "--settings: `permissions.defaultMode` must be a string such as \"acceptEdits\"",
                    )?;
                    out.default_mode = Some(synapse_mode(mode)?);
                }
                other => out.notices.push(format!(
                    "--settings: `permissions.{other}` has no effect on a session (it applies {})",
                    APPLIED_PERMISSIONS.join(", ")
                )),
            }
        }
        Ok(out)
    }

    /// `base` with the flag's `model`, `provider` and `env` laid over it (`env` merged by
    /// variable).
    pub fn layer(&self, mut base: Settings) -> Settings {
        if let Some(model) = self.overlay.get("model").and_then(Value::as_str) {
            base.model = Some(model.to_string());
        }
        if let Some(provider) = self.overlay.get("provider").and_then(Value::as_str) {
            base.provider = Some(provider.to_string());
        }
        if let Some(Value::Object(env)) = self.overlay.get("env") {
            for (k, v) in env {
                if let Some(v) = v.as_str() {
                    base.env.insert(k.clone(), v.to_string());
                }
            }
        }
        base
    }

    /// The flag's `model`, if it names one.
    pub fn model(&self) -> Option<String> {
        self.overlay
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .map(String::from)
    }
}

/// A mode in Claude Code's words (or Synapse's) as Synapse names it, the same mapping as
/// `--permission-mode`.
fn synapse_mode(mode: &str) -> Result<String, String> {
    Ok(match mode {
        "default" => "ask",
        "acceptEdits" => "auto",
        "plan" => "read-only",
        "bypassPermissions" => "yolo",
        "auto" | "ask" | "read-only" | "yolo" => mode,
        other => {
            return Err(format!(
                "--settings: `permissions.defaultMode` {other:?} is not a mode: use default, \
                 acceptEdits, plan or bypassPermissions"
            ));
        }
    }
    .to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn model_env_and_permissions_are_applied_and_other_keys_named() {
        let f = FlagSettings::read(
            r#"{"model": "m2", "env": {"A": "1"}, "theme": "dark",
                "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Bash(rm:*)"],
                                "defaultMode": "plan", "additionalDirectories": ["/tmp"],
                                "ask": []}}"#,
        )
        .unwrap();
        assert_eq!(f.allow, ["Bash(ls:*)"]);
        assert_eq!(f.deny, ["Bash(rm:*)"]);
        assert_eq!(f.default_mode.as_deref(), Some("read-only"));
        assert_eq!(f.additional_directories, ["/tmp"]);
        assert_eq!(f.model().as_deref(), Some("m2"));
        let layered = f.layer(Settings::default());
        assert_eq!(layered.model.as_deref(), Some("m2"));
        assert_eq!(layered.env["A"], "1");
        assert_eq!(f.notices.len(), 2, "{:?}", f.notices);
        assert!(f.notices.iter().any(|n| n.contains("`theme`")));
        assert!(f.notices.iter().any(|n| n.contains("`permissions.ask`")));
    }

    #[test]
    fn a_key_of_the_wrong_type_is_named() {
        let e = FlagSettings::read(r#"{"env": {"A": 1}}"#).unwrap_err();
        assert!(e.contains("env"), "{e}");
        let e = FlagSettings::read(r#"{"permissions": {"allow": "Bash"}}"#).unwrap_err();
        assert!(e.contains("permissions.allow"), "{e}");
        let e = FlagSettings::read(r#"{"permissions": {"defaultMode": "wild"}}"#).unwrap_err();
        assert!(e.contains("wild"), "{e}");
    }
}
