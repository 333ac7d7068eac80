//! `$SYNAPSE_HOME/skills/index.json` in seed 000's format: `version`, `skills[]` (name, title,
//! description, version — the frontmatter's or `1.0.0` —, tags, author when known, tools,
//! scriptCount, path, hasSkillMd, lastModified; plus `id` and `source`), `totalSkills`,
//! `totalTools`, `generatedAt`, `updatedAt`. It holds the user-level skills only (user, env,
//! plugin roots): a project's skills belong to that project, never to the user's index.
//!
//! Incremental: each skill's JSON entry is rendered once and cached by name ([`SkillIndex`]); a
//! change re-renders only that entry and the file is rebuilt by concatenation, then written
//! atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use super::record::SkillRecord;

pub const INDEX_VERSION: &str = "1.0.0";
/// The `version` of a skill whose frontmatter names none.
pub const SKILL_VERSION_DEFAULT: &str = "1.0.0";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    name: &'a str,
    id: &'a str,
    source: &'a str,
    title: String,
    description: &'a str,
    /// The frontmatter's `version`, else [`SKILL_VERSION_DEFAULT`] (the seed's entries always
    /// carry one).
    version: &'a str,
    tags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<&'a str>,
    tools: Vec<&'a str>,
    script_count: usize,
    path: String,
    has_skill_md: bool,
    last_modified: String,
}

/// Renders one skill's entry (pretty JSON, indented to sit inside `skills`).
pub fn render_entry(r: &SkillRecord) -> String {
    let entry = Entry {
        name: &r.meta.name,
        id: &r.id,
        source: r.source.as_str(),
        title: r
            .meta
            .title
            .clone()
            .unwrap_or_else(|| title_case(&r.meta.name)),
        description: &r.meta.description,
        version: r.meta.version.as_deref().unwrap_or(SKILL_VERSION_DEFAULT),
        tags: &r.meta.tags,
        author: r.meta.author.as_deref(),
        tools: r.scripts.iter().map(|s| s.command.as_str()).collect(),
        script_count: r.scripts.len(),
        path: r.dir.to_string_lossy().into_owned(),
        has_skill_md: true,
        last_modified: iso8601(r.modified),
    };
    let text = serde_json::to_string_pretty(&entry).unwrap_or_else(|_| "{}".to_string());
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cached entries and the file they are written to.
#[derive(Debug)]
pub struct SkillIndex {
    path: PathBuf,
    entries: BTreeMap<String, (String, usize)>,
    generated_at: String,
}

impl SkillIndex {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            entries: BTreeMap::new(),
            generated_at: iso8601(SystemTime::now()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Drops every entry (before a full rebuild) and stamps a new `generatedAt`.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.generated_at = iso8601(SystemTime::now());
    }

    pub fn set(&mut self, record: &SkillRecord) {
        self.entries.insert(
            record.meta.name.clone(),
            (render_entry(record), record.scripts.len()),
        );
    }

    pub fn remove(&mut self, name: &str) {
        self.entries.remove(name);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The whole file text.
    pub fn render(&self) -> String {
        let total_tools: usize = self.entries.values().map(|(_, n)| n).sum();
        let size: usize = self.entries.values().map(|(e, _)| e.len() + 2).sum();
        let mut out = String::with_capacity(size + 256);
        out.push_str(&format!(
            "{{\n  \"version\": \"{INDEX_VERSION}\",\n  \"skills\": ["
        ));
        for (i, (entry, _)) in self.entries.values().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(entry);
        }
        out.push_str(if self.entries.is_empty() {
            "],\n"
        } else {
            "\n  ],\n"
        });
        let stamp = |v: &str| Value::from(v).to_string();
        out.push_str(&format!(
            "  \"totalSkills\": {},\n  \"totalTools\": {total_tools},\n  \"generatedAt\": {},\n  \"updatedAt\": {}\n}}\n",
            self.entries.len(),
            stamp(&self.generated_at),
            stamp(&iso8601(SystemTime::now())),
        ));
        out
    }

    /// Writes the file atomically (creating its folder). Like the wrappers, the index is derived
    /// state rebuilt by the full scan at every daemon start, so rename atomicity is enough and the
    /// fsync (milliseconds for a 10,000-skill index) is skipped on every change.
    pub fn write(&self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        synapse_command::wrappers::write_replace(&self.path, self.render().as_bytes(), 0o644)
    }
}

fn title_case(name: &str) -> String {
    name.split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `2025-01-26T10:00:00.000Z` (UTC, milliseconds).
pub fn iso8601(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_737_885_600_123);
        assert_eq!(iso8601(t), "2025-01-26T10:00:00.123Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn empty_index_is_valid_json() {
        let idx = SkillIndex::new(PathBuf::from("/x/index.json"));
        let v: Value = serde_json::from_str(&idx.render()).unwrap();
        assert_eq!(v["totalSkills"], 0);
        assert_eq!(v["skills"], serde_json::json!([]));
        assert_eq!(title_case("pdf-editor"), "Pdf Editor");
    }
}
