//! Skill permissions from `permissions.skill` in settings.json: an object mapping wildcard
//! patterns (`*` any run, `?` one character) to `allow`, `ask` or `deny`. The first pattern (in
//! file order) matching the skill's name or id decides; no match means `allow`.
//!
//! `deny` hides a skill from list, search and tools and refuses to load it. `ask` is a decision
//! the caller must resolve (an approval round-trip; non-interactive callers deny).

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SkillPermission {
    #[default]
    Allow,
    Ask,
    Deny,
}

impl SkillPermission {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// The parsed `permissions.skill` rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillRules {
    rules: Vec<(String, SkillPermission)>,
    /// Entries that were ignored, with why.
    pub warnings: Vec<String>,
}

impl SkillRules {
    /// Reads `permissions` (the whole `permissions` value of settings.json).
    pub fn from_permissions(permissions: &Value) -> Self {
        let mut out = Self::default();
        let Some(skill) = permissions.get("skill") else {
            return out;
        };
        let Some(map) = skill.as_object() else {
            out.warnings
                .push("permissions.skill must be an object of pattern: allow|ask|deny".into());
            return out;
        };
        for (pattern, v) in map {
            let perm = match v.as_str() {
                Some("allow") => SkillPermission::Allow,
                Some("ask") => SkillPermission::Ask,
                Some("deny") => SkillPermission::Deny,
                _ => {
                    out.warnings.push(format!(
                        "permissions.skill.{pattern}: expected \"allow\", \"ask\" or \"deny\" (got {v}); rule ignored"
                    ));
                    continue;
                }
            };
            out.rules.push((pattern.clone(), perm));
        }
        out
    }

    /// The decision for a skill.
    pub fn decide(&self, name: &str, id: &str) -> SkillPermission {
        self.rules
            .iter()
            .find(|(p, _)| wildcard_match(p, name) || wildcard_match(p, id))
            .map(|(_, perm)| *perm)
            .unwrap_or_default()
    }
}

/// Whether skill name or id `text` matches `pattern`, in the glob dialect every other pattern of
/// Synapse uses (globset): `*` any run of characters, `?` exactly one, `[…]` a class. A pattern
/// that is not a valid glob matches only itself.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    match globset::Glob::new(pattern) {
        Ok(glob) => glob.compile_matcher().is_match(text),
        Err(_) => pattern == text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*", "x"));
        assert!(wildcard_match("pdf-*", "pdf-editor"));
        assert!(wildcard_match("*-editor", "pdf-editor"));
        assert!(wildcard_match("p?f*", "pdf"));
        assert!(!wildcard_match("pdf-*", "pd"));
        assert!(wildcard_match("user:*", "user:x"));
        assert!(!wildcard_match("a*b", "acbd"));
    }

    #[test]
    fn first_match_wins_default_allow() {
        let r = SkillRules::from_permissions(&json!({"skill": {
            "secret-*": "deny", "*-risky": "ask", "secret-ok": "allow", "plugin:*": "deny", "bad": "maybe"
        }}));
        assert_eq!(
            r.decide("secret-ok", "user:secret-ok"),
            SkillPermission::Deny
        );
        assert_eq!(r.decide("x-risky", "user:x-risky"), SkillPermission::Ask);
        assert_eq!(r.decide("pdf", "plugin:pdf"), SkillPermission::Deny);
        assert_eq!(r.decide("other", "user:other"), SkillPermission::Allow);
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(
            SkillRules::from_permissions(&json!({})).decide("a", "u:a"),
            SkillPermission::Allow
        );
    }
}
