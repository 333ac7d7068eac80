//! The parts of settings.json the skill store uses: `permissions.skill` rules and per-skill
//! enabled state under `skills.skills.<id>.enabled` (seed 004's layout), derived from the
//! daemon's settings handle whenever it holds a new version.

use std::collections::HashSet;

use serde_json::Value;

use crate::workspace::SettingsHandle;

use super::permissions::SkillRules;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSettings {
    pub rules: SkillRules,
    /// Ids whose `enabled` is false.
    pub disabled: HashSet<String>,
    /// Why the last read failed ("path:line:col: message").
    pub error: Option<String>,
    /// The handle's generation this view was derived from.
    generation: Option<u64>,
}

impl SkillSettings {
    pub fn is_enabled(&self, id: &str) -> bool {
        !self.disabled.contains(id)
    }

    /// Derives the view again when the settings handle holds a new version (the handle does
    /// the reading: a hand edit counts, a corrupt file keeps the last good version and is
    /// reported); true when the view changed.
    pub fn refresh(&mut self, settings: &SettingsHandle) -> bool {
        let now = settings.snapshot();
        if self.generation == Some(now.generation) {
            return false;
        }
        self.generation = Some(now.generation);
        let before = (self.rules.clone(), self.disabled.clone());
        self.error = now.error.clone();
        if now.from_file {
            self.rules = SkillRules::from_permissions(&now.settings.permissions);
            self.disabled = disabled_ids(now.settings.other.get("skills"));
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
