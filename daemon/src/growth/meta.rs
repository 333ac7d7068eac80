//! The meta skills: SKILL.md files with `type: meta` that steer the skill sub-agent (seed 003).
//!
//! Synapse's own (`skill-creator`, `enhancing-skills`, `evaluating-skills`) ship inside the
//! binary, live in their own folder (`$SYNAPSE_HOME/meta-skills`, or
//! `$SYNAPSE_META_SKILLS_DIR`) apart from the user's skills, and are named `synapse:<name>`:
//! they are never loaded as user skills, so a user's own `skill-creator` keeps its name and
//! nothing shadows it. A missing file is written at daemon start; an existing one (the user's
//! edit) is never touched. Copies an older Synapse installed into the user skills folder are
//! removed when they are unedited.
//!
//! The sub-agent's prompt ([`contents`]) holds the built-in meta skills and, after them, every
//! enabled user or project skill that says `type: meta`.

use std::path::{Path, PathBuf};

use synapse_shared::skill::SkillKind;

use crate::skills::SkillStore;

/// Where meta skills live (`$SYNAPSE_META_SKILLS_DIR`, default `$SYNAPSE_HOME/meta-skills`).
pub const ENV_META_SKILLS_DIR: &str = "SYNAPSE_META_SKILLS_DIR";

/// The namespace of Synapse's own meta skills.
pub const META_NAMESPACE: &str = "synapse";

/// (name, embedded SKILL.md).
pub const META_SKILLS: &[(&str, &str)] = &[
    ("skill-creator", include_str!("meta/skill-creator.md")),
    ("enhancing-skills", include_str!("meta/enhancing-skills.md")),
    (
        "evaluating-skills",
        include_str!("meta/evaluating-skills.md"),
    ),
];

/// The meta skills folder of a daemon whose home is `home`.
pub fn meta_dir(home: &Path, env: Option<std::ffi::OsString>) -> PathBuf {
    match env {
        Some(v) if !v.is_empty() && Path::new(&v).is_absolute() => PathBuf::from(v),
        _ => home.join("meta-skills"),
    }
}

/// Writes each missing meta skill into `dir`; returns the names written. Existing files stay
/// as they are.
pub fn install(dir: &Path) -> Vec<String> {
    let mut written = Vec::new();
    for (name, text) in META_SKILLS {
        let file = dir.join(name).join("SKILL.md");
        if file.exists() {
            continue;
        }
        let result = std::fs::create_dir_all(dir.join(name))
            .and_then(|()| synapse_shared::atomic::write_atomic(&file, text.as_bytes()));
        match result {
            Ok(()) => written.push(name.to_string()),
            Err(e) => tracing::error!("cannot install meta skill {}: {e}", file.display()),
        }
    }
    written
}

/// Removes the unedited copies of the built-in meta skills that an older Synapse wrote into
/// the user skills folder (a folder holding exactly the embedded SKILL.md and nothing else);
/// an edited copy is the user's now and stays. Returns the folders removed.
pub fn remove_legacy_copies(skills_dir: &Path, meta_dir: &Path) -> Vec<PathBuf> {
    if skills_dir == meta_dir {
        return Vec::new();
    }
    let mut removed = Vec::new();
    for (name, text) in META_SKILLS {
        let dir = skills_dir.join(name);
        let only_skill_md = std::fs::read_dir(&dir)
            .map(|entries| {
                let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
                names.len() == 1 && names[0] == "SKILL.md"
            })
            .unwrap_or(false);
        let unedited = std::fs::read_to_string(dir.join("SKILL.md")).is_ok_and(|t| t == *text);
        if only_skill_md && unedited && std::fs::remove_dir_all(&dir).is_ok() {
            removed.push(dir);
        }
    }
    removed
}

/// The full text of every meta skill, as the sub-agent's prompt shows them: the built-in ones
/// (the installed file when readable, else the embedded one), then the enabled user skills and
/// the caller's project skills (those a caller in `cwd` sees) with `type: meta`.
pub fn contents(dir: &Path, store: &SkillStore, cwd: &Path) -> String {
    let mut parts: Vec<String> = META_SKILLS
        .iter()
        .map(|(name, embedded)| {
            let text = std::fs::read_to_string(dir.join(name).join("SKILL.md"))
                .unwrap_or_else(|_| embedded.to_string());
            format!(
                "### {name} ({META_NAMESPACE}:{name}, built in)\n\n{}",
                text.trim()
            )
        })
        .collect();
    for s in super::skills_seen_from(store, cwd) {
        if s.kind != SkillKind::Meta || !s.enabled {
            continue;
        }
        match synapse_shared::bounded::read_text(
            &s.skill_md,
            None,
            synapse_shared::bounded::SKILL_MD_MAX_BYTES,
        ) {
            Ok(text) => parts.push(format!("### {} ({})\n\n{}", s.name, s.id, text.trim())),
            Err(e) => tracing::warn!("meta skill {}: {e}", s.skill_md.display()),
        }
    }
    parts.join("\n\n---\n\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use synapse_shared::skill::{SkillKind, parse_skill_md};

    #[test]
    fn embedded_meta_skills_are_valid_and_meta() {
        for (name, text) in META_SKILLS {
            let parsed = parse_skill_md(Path::new("SKILL.md"), text, Some(name)).unwrap();
            assert_eq!(parsed.meta.name, *name);
            assert_eq!(parsed.meta.kind, SkillKind::Meta);
            assert!(parsed.warnings.is_empty(), "{name}: {:?}", parsed.warnings);
        }
    }

    #[test]
    fn install_writes_missing_and_keeps_edits() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(install(dir.path()).len(), 3);
        let edited = dir.path().join("skill-creator/SKILL.md");
        std::fs::write(&edited, "mine").unwrap();
        assert!(install(dir.path()).is_empty());
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "mine");
    }

    #[test]
    fn unedited_legacy_copies_go_and_edited_ones_stay() {
        let home = tempfile::tempdir().unwrap();
        let skills = home.path().join("skills");
        install(&skills);
        let edited = skills.join("skill-creator/SKILL.md");
        std::fs::write(&edited, "mine").unwrap();
        let removed = remove_legacy_copies(&skills, &meta_dir(home.path(), None));
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "mine");
        assert!(!skills.join("enhancing-skills").exists());
    }
}
