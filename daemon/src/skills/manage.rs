//! Management calls (seed 004): create a user skill, delete one, enable or disable one. Each
//! writes the disk first, then updates the store through the same path the watcher uses, so the
//! answer already reflects the change. `create` is atomic: the skill is built in a hidden
//! staging folder and renamed into place.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use synapse_shared::atomic::write_atomic;
use synapse_shared::settings::set_key;
use synapse_shared::skill::spec::{DESCRIPTION_MAX_CHARS, validate_name};

use super::error::SkillError;
use super::record::SKILL_MD;
use super::scope::resolve_in;
use super::source::SkillSource;
use super::store::{SkillStore, SkillSummary};

/// An empty folder where a skill should be (left by an older, non-atomic create) is removed
/// so the name is free again; a folder with anything in it is the user's and stays.
fn remove_if_stuck(dir: &std::path::Path) {
    let empty = fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
    if empty {
        let _ = fs::remove_dir(dir);
    }
}

impl SkillStore {
    /// Creates `$SYNAPSE_HOME/skills/<name>/SKILL.md`; refuses invalid names and existing skills.
    pub fn create(
        &self,
        name: &str,
        description: &str,
        body: &str,
    ) -> Result<SkillSummary, SkillError> {
        validate_name(name).map_err(|reason| SkillError::InvalidName {
            name: name.to_string(),
            reason,
        })?;
        let description = description.trim();
        if description.is_empty() || description.chars().count() > DESCRIPTION_MAX_CHARS {
            return Err(SkillError::InvalidDescription {
                reason: format!(
                    "it must be 1-{DESCRIPTION_MAX_CHARS} characters saying what the skill does and when to use it"
                ),
            });
        }
        let dir = self.paths().skills_dir.join(name);
        remove_if_stuck(&dir);
        if dir.exists() {
            return Err(SkillError::AlreadyExists {
                name: name.to_string(),
                path: dir,
            });
        }
        // A JSON string is a valid YAML double-quoted scalar: no quoting surprises.
        let quoted = Value::from(description).to_string();
        let body = if body.trim().is_empty() {
            format!("# {name}\n")
        } else {
            body.trim_end().to_string() + "\n"
        };
        let text = format!("---\nname: {name}\ndescription: {quoted}\n---\n\n{body}");
        // Built in a hidden temp folder (never scanned) and renamed into place: a crash leaves
        // either no skill or the whole skill, never a folder without SKILL.md.
        let staging = self
            .paths()
            .skills_dir
            .join(format!(".creating-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        let staged = fs::create_dir_all(&staging)
            .and_then(|()| write_atomic(&staging.join(SKILL_MD), text.as_bytes()))
            .and_then(|()| fs::rename(&staging, &dir));
        if let Err(e) = staged {
            let _ = fs::remove_dir_all(&staging);
            return Err(SkillError::io("create", &dir, e));
        }
        let file = dir.join(SKILL_MD);
        let _ = self.apply_paths(&[file]);
        self.show(name)
    }

    /// Removes the staging folders a crashed `create` left behind (`.creating-*`).
    pub fn remove_stale_staging(&self) {
        let Ok(entries) = fs::read_dir(&self.paths().skills_dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(".creating-") {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }

    /// Deletes a user skill's folder (project, env and plugin skills are refused); `cwd` is the
    /// caller's folder (`None`: the user's skills only), so a name a project's copy hides there
    /// names that copy, which is refused.
    pub fn delete(&self, name: &str, cwd: Option<&Path>) -> Result<PathBuf, SkillError> {
        let rec = resolve_in(&self.read(), cwd, name, &self.paths().settings_file)?;
        if rec.source != SkillSource::User {
            return Err(SkillError::NotDeletable {
                id: rec.id.clone(),
                origin: rec.source.as_str(),
            });
        }
        let is_link = fs::symlink_metadata(&rec.dir)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        let removed = if is_link {
            fs::remove_file(&rec.dir)
        } else {
            fs::remove_dir_all(&rec.dir)
        };
        removed.map_err(|e| SkillError::io("delete", &rec.dir, e))?;
        let _ = self.apply_paths(std::slice::from_ref(&rec.dir.join(SKILL_MD)));
        // Its cached body goes, and the memory with it.
        self.bodies.lock().remove(&rec.skill_md);
        synapse_command::daemon_process::give_back();
        Ok(rec.dir.clone())
    }

    /// Records `skills.skills.<id>.enabled` in settings.json and applies it; `name` is looked up
    /// as a caller in `cwd` sees it (`None`: the user's skills only).
    pub fn set_enabled(
        &self,
        name: &str,
        enabled: bool,
        cwd: Option<&Path>,
    ) -> Result<SkillSummary, SkillError> {
        let id = resolve_in(&self.read(), cwd, name, &self.paths().settings_file)?
            .id
            .clone();
        self.settings().update(|tree| {
            set_key(
                tree,
                &["skills", "skills", &id, "enabled"],
                Value::from(enabled),
            )
        })?;
        self.refresh_settings();
        match cwd {
            Some(cwd) => self.show_in(&id, cwd),
            None => self.show(&id),
        }
    }
}
