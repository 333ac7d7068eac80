//! Keeps the skill sub-agent's report honest: the user skills folder is fingerprinted before and
//! after a run, and what the report claims ("created X", "enhanced X", "no change") is checked
//! against what changed on disk. The user sees a correction when they disagree, and always a
//! list of changed files computed by Synapse (never quoted from the model).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Files looked at per skill folder (a runaway folder is cut, not walked forever).
const FILES_PER_SKILL_MAX: usize = 2_000;
/// Folder depth walked below a skill folder.
const DEPTH_MAX: usize = 6;

/// Every skill folder of the user skills folder: relative file path → (size, mtime).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskState(BTreeMap<String, BTreeMap<PathBuf, (u64, SystemTime)>>);

/// What one run changed, per skill folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskChanges {
    /// Folders that gained a SKILL.md (new skills).
    pub created: Vec<String>,
    /// Folders removed.
    pub removed: Vec<String>,
    /// Skill → lines like `SKILL.md changed (1204 → 1530 bytes)`, `scripts/x.py new`.
    pub files: BTreeMap<String, Vec<String>>,
}

impl DiskChanges {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.removed.is_empty() && self.files.is_empty()
    }

    /// Whether skill `name`'s files changed (created or edited).
    pub fn touched(&self, name: &str) -> bool {
        self.files.contains_key(name) || self.created.iter().any(|c| c == name)
    }
}

/// Fingerprints `skills_dir` (missing folder: empty).
pub fn snapshot(skills_dir: &Path) -> DiskState {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(skills_dir) else {
        return DiskState(out);
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.path().is_dir() {
            continue;
        }
        let mut files = BTreeMap::new();
        walk(&e.path(), Path::new(""), 0, &mut files);
        out.insert(name, files);
    }
    DiskState(out)
}

fn walk(dir: &Path, rel: &Path, depth: usize, out: &mut BTreeMap<PathBuf, (u64, SystemTime)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        if out.len() >= FILES_PER_SKILL_MAX {
            return;
        }
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        let rel = rel.join(e.file_name());
        if meta.is_dir() {
            if depth < DEPTH_MAX {
                walk(&e.path(), &rel, depth + 1, out);
            }
        } else {
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.insert(rel, (meta.len(), mtime));
        }
    }
}

/// What changed between two fingerprints.
pub fn diff(before: &DiskState, after: &DiskState) -> DiskChanges {
    let mut changes = DiskChanges::default();
    let has_skill_md =
        |files: &BTreeMap<PathBuf, (u64, SystemTime)>| files.contains_key(Path::new("SKILL.md"));
    for (name, files) in &after.0 {
        let old = before.0.get(name);
        if has_skill_md(files) && !old.is_some_and(has_skill_md) {
            changes.created.push(name.clone());
        }
        let empty = BTreeMap::new();
        let old = old.unwrap_or(&empty);
        let mut lines = Vec::new();
        for (path, (size, mtime)) in files {
            match old.get(path) {
                None => lines.push(format!("{} new ({size} bytes)", path.display())),
                Some((s, m)) if s != size || m != mtime => {
                    lines.push(format!("{} changed ({s} → {size} bytes)", path.display()));
                }
                Some(_) => {}
            }
        }
        for path in old.keys().filter(|p| !files.contains_key(*p)) {
            lines.push(format!("{} removed", path.display()));
        }
        if !lines.is_empty() {
            changes.files.insert(name.clone(), lines);
        }
    }
    changes.removed = before
        .0
        .keys()
        .filter(|n| !after.0.contains_key(*n))
        .cloned()
        .collect();
    changes
}

/// The action the disk supports for a report that claims `claimed` ("created" | "enhanced" |
/// "none" | "unknown") about `name`: (action, name, a correction to show when they disagree).
pub fn reconcile(
    claimed: &'static str,
    name: &str,
    changes: &DiskChanges,
) -> (&'static str, String, Option<String>) {
    let first_changed = || {
        changes
            .created
            .first()
            .map(|n| ("created", n.clone()))
            .or_else(|| changes.files.keys().next().map(|n| ("enhanced", n.clone())))
    };
    match claimed {
        "created" if changes.created.iter().any(|c| c == name) => ("created", name.into(), None),
        "enhanced" if changes.touched(name) => ("enhanced", name.into(), None),
        "created" | "enhanced" => {
            let note = format!(
                "Note from Synapse: the report says skill {name:?} was {claimed}, but no file of \
                 it {} on disk.",
                if claimed == "created" && changes.touched(name) {
                    "is new (it existed before and was only changed)"
                } else {
                    "changed"
                }
            );
            match first_changed() {
                Some((action, other)) => (action, other, Some(note)),
                None if claimed == "created" && changes.touched(name) => {
                    ("enhanced", name.into(), Some(note))
                }
                None => ("none", String::new(), Some(note)),
            }
        }
        _ => match first_changed() {
            Some((action, other)) => (
                action,
                other.clone(),
                Some(format!(
                    "Note from Synapse: the report claims no skill changed, but {other:?} did."
                )),
            ),
            None => (claimed, String::new(), None),
        },
    }
}

/// The files-changed lines shown under every report.
pub fn render_changes(changes: &DiskChanges) -> String {
    if changes.is_empty() {
        return "\nChanged on disk (checked by Synapse): nothing.".to_string();
    }
    let mut out = String::from("\nChanged on disk (checked by Synapse):");
    for (skill, lines) in &changes.files {
        for l in lines {
            out.push_str(&format!("\n  {skill}/{l}"));
        }
    }
    for r in &changes.removed {
        out.push_str(&format!("\n  {r}/ removed"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    #[test]
    fn a_claimed_creation_with_nothing_on_disk_is_corrected() {
        let t = tempfile::tempdir().unwrap();
        let before = snapshot(t.path());
        let after = snapshot(t.path());
        let changes = diff(&before, &after);
        let (action, name, note) = reconcile("created", "fake-claim", &changes);
        assert_eq!((action, name.as_str()), ("none", ""));
        assert!(
            note.unwrap()
                .contains("\"fake-claim\" was created, but no file")
        );
        assert!(render_changes(&changes).ends_with("nothing."));
    }

    #[test]
    fn real_changes_are_listed_and_confirm_the_claim() {
        let t = tempfile::tempdir().unwrap();
        let old = t.path().join("old");
        fs::create_dir_all(&old).unwrap();
        fs::write(old.join("SKILL.md"), "one").unwrap();
        let before = snapshot(t.path());
        fs::write(old.join("SKILL.md"), "one two").unwrap();
        let new = t.path().join("new-skill/scripts");
        fs::create_dir_all(&new).unwrap();
        fs::write(t.path().join("new-skill/SKILL.md"), "x").unwrap();
        fs::write(new.join("run.sh"), "echo").unwrap();
        let changes = diff(&before, &snapshot(t.path()));
        assert_eq!(changes.created, vec!["new-skill".to_string()]);
        assert_eq!(reconcile("created", "new-skill", &changes).2, None);
        assert_eq!(reconcile("enhanced", "old", &changes).2, None);
        let text = render_changes(&changes);
        assert!(
            text.contains("old/SKILL.md changed (3 → 7 bytes)"),
            "{text}"
        );
        assert!(
            text.contains("new-skill/scripts/run.sh new (4 bytes)"),
            "{text}"
        );

        // "No change" while something changed: the disk wins.
        let (action, name, note) = reconcile("none", "", &changes);
        assert_eq!((action, name.as_str()), ("created", "new-skill"));
        assert!(note.unwrap().contains("claims no skill changed"));
    }
}
