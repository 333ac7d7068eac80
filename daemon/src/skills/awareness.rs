//! Skill awareness in the main agent's system prompt (seed 004's awareness mode): the names and
//! one-line descriptions of the skills this session may use, so the model knows they exist
//! before it thinks of `skill search`.
//!
//! Listed: visible (enabled, not denied) regular skills; never meta skills and never skills with
//! `disable-model-invocation: true`. The section fits a byte budget (settings.json
//! `skills.awarenessBudgetBytes`, default [`AWARENESS_BUDGET_BYTES_DEFAULT`]); when the skills do
//! not all fit, the most relevant come first by the local ranking — skills whose name or
//! description shares a word with the session's project folder, then project skills, then the
//! most recently changed — followed by how many were left out and the `skill search` hint.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use synapse_shared::settings::Settings;
use synapse_shared::skill::SkillKind;

use super::record::SkillRecord;
use super::source::SkillSource;
use super::store::SkillStore;

/// Default size of the awareness section, in bytes.
pub const AWARENESS_BUDGET_BYTES_DEFAULT: usize = 2048;
/// Longest description line shown per skill, in characters.
const DESCRIPTION_LINE_MAX_CHARS: usize = 160;

const HEADER: &str = "# Available skills\n\nLoad a skill with `skill load <name>` before \
following it; its `skill:<name>:*` commands come with it.\n";

/// `skills.awarenessBudgetBytes` from settings.json, else the default.
pub fn budget_from(settings: &Settings) -> usize {
    settings
        .other
        .get("skills")
        .and_then(|s| s.get("awarenessBudgetBytes"))
        .and_then(Value::as_u64)
        .map_or(AWARENESS_BUDGET_BYTES_DEFAULT, |b| b as usize)
}

impl SkillStore {
    /// The awareness section for a session in `cwd` (empty when no skill may be listed).
    pub fn awareness_section(&self, cwd: &Path, budget_bytes: usize) -> String {
        let st = self.read();
        let listed: Vec<&Arc<SkillRecord>> = st
            .active
            .values()
            .filter(|r| st.is_visible(r))
            .filter(|r| r.meta.kind == SkillKind::Regular && !r.meta.disable_model_invocation)
            .collect();
        render(listed, cwd, budget_bytes)
    }
}

fn render(mut skills: Vec<&Arc<SkillRecord>>, cwd: &Path, budget_bytes: usize) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let total = skills.len();
    let words = project_words(cwd);
    skills.sort_by_cached_key(|r| {
        let text = format!("{} {}", r.meta.name, r.meta.description).to_lowercase();
        let hits = words.iter().filter(|w| text.contains(w.as_str())).count();
        (
            std::cmp::Reverse(hits),
            r.source != SkillSource::Project,
            std::cmp::Reverse(r.modified),
            r.meta.name.clone(),
        )
    });
    let mut out = String::from(HEADER);
    let mut shown = 0;
    for r in &skills {
        let line = format!("- {}: {}\n", r.meta.name, one_line(&r.meta.description));
        // Room for the closing hint must stay when skills are left out.
        let reserve = if shown + 1 < total {
            tail(total).len()
        } else {
            0
        };
        if out.len() + line.len() + reserve > budget_bytes {
            break;
        }
        out.push_str(&line);
        shown += 1;
    }
    if shown < total {
        out.push_str(&tail(total - shown));
    }
    out
}

fn tail(left_out: usize) -> String {
    format!(
        "({left_out} more skills not listed: find them with `skill search \"<what you need>\"`.)\n"
    )
}

/// Lower-case words (3+ letters) of the last two folders of `cwd`.
fn project_words(cwd: &Path) -> Vec<String> {
    cwd.components()
        .rev()
        .take(2)
        .flat_map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| w.len() >= 3)
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The first line of a description, cut at [`DESCRIPTION_LINE_MAX_CHARS`].
fn one_line(description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= DESCRIPTION_LINE_MAX_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(DESCRIPTION_LINE_MAX_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::time::SystemTime;
    use synapse_shared::skill::SkillMeta;

    fn rec(name: &str, desc: &str) -> Arc<SkillRecord> {
        Arc::new(SkillRecord {
            id: format!("user:{name}"),
            source: SkillSource::User,
            root: 0,
            dir: format!("/s/{name}").into(),
            skill_md: format!("/s/{name}/SKILL.md").into(),
            meta: SkillMeta {
                name: name.into(),
                description: desc.into(),
                ..SkillMeta::default()
            },
            scripts: Vec::new(),
            warnings: Vec::new(),
            modified: SystemTime::UNIX_EPOCH,
        })
    }

    #[test]
    fn everything_fits_or_the_relevant_ones_and_a_count() {
        let few: Vec<_> = (0..10)
            .map(|i| rec(&format!("s{i}"), "Does a thing."))
            .collect();
        let text = render(few.iter().collect(), Path::new("/w/p"), 2048);
        assert!(text.contains("- s9: Does a thing.\n"), "{text}");
        assert!(!text.contains("more skills"), "{text}");

        let many: Vec<_> = (0..10_000)
            .map(|i| rec(&format!("s{i}"), &"Does a thing. ".repeat(30)))
            .chain([rec("invoice-tools", "Builds invoices.")])
            .collect();
        let text = render(many.iter().collect(), Path::new("/home/u/invoice"), 2048);
        assert!(text.len() <= 2048, "{}", text.len());
        assert!(
            text.contains("- invoice-tools: Builds invoices.\n"),
            "{text}"
        );
        assert!(text.contains("more skills not listed"), "{text}");
        assert!(text.contains("skill search"), "{text}");
    }
}
