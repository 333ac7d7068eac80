//! The meta skills (`skill-creator`, `enhancing-skills`, `evaluating-skills`): SKILL.md files
//! with `type: meta` that steer the skill sub-agent. They ship inside the binary and are
//! written into the meta skills folder at daemon start when missing; a file that exists (a
//! user's edit) is never touched. The sub-agent's prompt reads them back from that folder, so
//! a user's edit takes effect.

use std::path::{Path, PathBuf};

/// Where meta skills live (`$SYNAPSE_META_SKILLS_DIR`, default `$SYNAPSE_HOME/skills`).
pub const ENV_META_SKILLS_DIR: &str = "SYNAPSE_META_SKILLS_DIR";

/// (name, embedded SKILL.md).
pub const META_SKILLS: &[(&str, &str)] = &[
    ("skill-creator", include_str!("meta/skill-creator.md")),
    ("enhancing-skills", include_str!("meta/enhancing-skills.md")),
    (
        "evaluating-skills",
        include_str!("meta/evaluating-skills.md"),
    ),
];

/// The meta skills folder for a daemon whose user skills folder is `skills_dir`.
pub fn meta_dir(skills_dir: &Path, env: Option<std::ffi::OsString>) -> PathBuf {
    match env {
        Some(v) if !v.is_empty() && Path::new(&v).is_absolute() => PathBuf::from(v),
        _ => skills_dir.to_path_buf(),
    }
}

/// Writes each missing meta skill; returns the names written. Existing files stay as they are.
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

/// The full text of every meta skill, as the sub-agent's prompt shows them: the installed
/// file when readable, else the embedded one.
pub fn contents(dir: &Path) -> String {
    META_SKILLS
        .iter()
        .map(|(name, embedded)| {
            let text = std::fs::read_to_string(dir.join(name).join("SKILL.md"))
                .unwrap_or_else(|_| embedded.to_string());
            format!("### {name}\n\n{}", text.trim())
        })
        .collect::<Vec<_>>()
        .join("\n\n---\n\n")
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
        assert!(contents(dir.path()).contains("mine"));
    }
}
