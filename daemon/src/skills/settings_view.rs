//! The parts of settings.json the skill store reads: `permissions.skill` rules and per-skill
//! enabled state under `skills.skills.<id>.enabled` (seed 004's layout). Re-read when the file's
//! modification time or size changes; a corrupt file keeps the last good view and is reported.

use std::collections::HashSet;
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;
use synapse_shared::settings;

use super::permissions::SkillRules;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSettings {
    pub rules: SkillRules,
    /// Ids whose `enabled` is false.
    pub disabled: HashSet<String>,
    /// Why the last read failed ("path:line:col: message").
    pub error: Option<String>,
    stamp: Option<(SystemTime, u64)>,
}

impl SkillSettings {
    pub fn is_enabled(&self, id: &str) -> bool {
        !self.disabled.contains(id)
    }

    /// Reads `path` when it changed since the last read; true when the view changed.
    pub fn refresh(&mut self, path: &Path) -> bool {
        let stamp = std::fs::metadata(path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        if stamp.is_some() && stamp == self.stamp {
            return false;
        }
        let before = (self.rules.clone(), self.disabled.clone());
        self.stamp = stamp;
        match settings::load(path) {
            Ok(s) => {
                self.error = None;
                self.rules = SkillRules::from_permissions(&s.permissions);
                self.disabled = disabled_ids(s.other.get("skills"));
            }
            Err(e) => self.error = Some(e.to_string()),
        }
        before != (self.rules.clone(), self.disabled.clone())
    }

    pub fn warnings(&self) -> Vec<String> {
        self.error
            .iter()
            .cloned()
            .chain(self.rules.warnings.iter().cloned())
            .collect()
    }
}

fn disabled_ids(skills: Option<&Value>) -> HashSet<String> {
    let Some(Value::Object(map)) = skills.and_then(|s| s.get("skills")) else {
        return HashSet::new();
    };
    map.iter()
        .filter(|(_, v)| v.get("enabled").and_then(Value::as_bool) == Some(false))
        .map(|(k, _)| k.clone())
        .collect()
}
