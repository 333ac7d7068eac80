//! Loading one skill folder into a [`SkillRecord`]: its parsed SKILL.md metadata, scripts and
//! the latest modification time. The body is not kept (it is read on demand by the store).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use synapse_shared::skill::{SkillFormatError, SkillMeta, SkillWarning, parse_skill_md};

use super::script::{SkillScript, scan_scripts};
use super::source::SkillSource;

/// The SKILL.md file name (also accepted: `skill.md`).
pub const SKILL_MD: &str = "SKILL.md";

/// A loaded skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRecord {
    /// `source:name`.
    pub id: String,
    pub source: SkillSource,
    /// Index of its root in precedence order.
    pub root: usize,
    pub dir: PathBuf,
    pub skill_md: PathBuf,
    pub meta: SkillMeta,
    pub scripts: Vec<SkillScript>,
    pub warnings: Vec<SkillWarning>,
    /// Newest mtime of SKILL.md and the scripts.
    pub modified: SystemTime,
}

impl SkillRecord {
    pub fn name(&self) -> &str {
        &self.meta.name
    }
}

/// The outcome of looking at one folder of a root.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    Skill(std::sync::Arc<SkillRecord>),
    Broken(SkillFormatError),
}

/// Finds the SKILL.md of a folder, if it has one — whatever it is: a SKILL.md that is a device or
/// a link out is found, and then refused with the reason when it is read.
pub fn skill_md_path(dir: &Path) -> Option<PathBuf> {
    [SKILL_MD, "skill.md"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()))
}

/// Loads the skill in `dir`; `None` when the folder has no SKILL.md (not a skill, or not yet).
pub fn load_skill_dir(dir: &Path, source: SkillSource, root: usize) -> Option<Loaded> {
    let skill_md = skill_md_path(dir)?;
    // A repository's SKILL.md may be a link to anything (`/proc/self/pagemap`, `/dev/zero`, a
    // file elsewhere): only a bounded regular file inside the skill folder is read.
    let text = match synapse_shared::bounded::read_text(
        &skill_md,
        Some(dir),
        synapse_shared::bounded::SKILL_MD_MAX_BYTES,
    ) {
        Ok(t) => t,
        Err(e) => {
            return Some(Loaded::Broken(SkillFormatError::Unreadable {
                path: skill_md,
                reason: e.to_string(),
            }));
        }
    };
    let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned());
    let parsed = match parse_skill_md(&skill_md, &text, folder.as_deref()) {
        Ok(p) => p,
        Err(e) => return Some(Loaded::Broken(e)),
    };
    let mut parsed = parsed;
    // Claude Code names plugin skills `<plugin>:<skill>`; they never shadow a user's skill.
    if source == SkillSource::Plugin
        && let Some(plugin) = super::plugins::plugin_of_skill_dir(dir)
    {
        parsed.meta.name = format!("{plugin}:{}", parsed.meta.name);
    }
    let mut warnings = parsed.warnings;
    let scripts = scan_scripts(&parsed.meta.name, dir, &text, &mut warnings);
    let mut modified = mtime(&skill_md);
    for s in &scripts {
        modified = modified.max(mtime(&s.path));
    }
    Some(Loaded::Skill(std::sync::Arc::new(SkillRecord {
        id: format!("{}:{}", source.as_str(), parsed.meta.name),
        source,
        root,
        dir: dir.to_path_buf(),
        skill_md,
        meta: parsed.meta,
        scripts,
        warnings,
        modified,
    })))
}

pub fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}
