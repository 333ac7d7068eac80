//! Where skills come from, highest precedence first:
//! 1. project: `.synapse/skills`, `.claude/skills`, `.agents/skills` in the session's cwd and every
//!    ancestor (nearest first);
//! 2. user: `$SYNAPSE_HOME/skills`, `~/.claude/skills`, `~/.agents/skills`;
//! 3. env: `$SYNAPSE_SKILLS_DIR`;
//! 4. plugin: `~/.claude/plugins/cache/<marketplace>/<plugin>/<version>/skills/` of enabled
//!    plugins ([`super::plugins`]).
//!
//! A folder reached twice (the home folder is also an ancestor of the cwd) keeps its first,
//! higher class. The discovered [`SkillRoot`]s are ordered by precedence.

use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable naming an extra skills folder.
pub const ENV_SKILLS_DIR: &str = "SYNAPSE_SKILLS_DIR";

/// The class of a skill folder; part of a skill's id (`user:pdf-editor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkillSource {
    Project,
    User,
    Env,
    Plugin,
}

impl SkillSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
            Self::Env => "env",
            Self::Plugin => "plugin",
        }
    }
}

impl fmt::Display for SkillSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A folder whose sub-folders are skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    pub source: SkillSource,
    pub dir: PathBuf,
}

/// What decides the roots: the Synapse home, the user's home, the env folder, project cwds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RootConfig {
    /// `$SYNAPSE_HOME/skills`.
    pub synapse_skills: PathBuf,
    /// The user's home (`~`), when known.
    pub user_home: Option<PathBuf>,
    /// `$SYNAPSE_SKILLS_DIR`.
    pub env_dir: Option<PathBuf>,
    /// Working directories of sessions; each contributes its project roots, first cwd first.
    pub project_cwds: Vec<PathBuf>,
}

impl RootConfig {
    /// Reads `HOME` and `SYNAPSE_SKILLS_DIR` from `get` (the process environment in production).
    pub fn from_lookup(
        synapse_skills: PathBuf,
        get: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Self {
        let nonempty = |k: &str| get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Self {
            synapse_skills,
            user_home: nonempty("HOME"),
            env_dir: nonempty(ENV_SKILLS_DIR).filter(|p| p.is_absolute()),
            project_cwds: Vec::new(),
        }
    }

    /// The plugin cache folder (`~/.claude/plugins/cache`), watched as a whole.
    pub fn plugin_cache(&self) -> Option<PathBuf> {
        self.user_home
            .as_ref()
            .map(|h| h.join(".claude").join("plugins").join("cache"))
    }

    /// Every root that could hold skills, existing or not (plugin roots only when they exist,
    /// since their paths are found by listing the cache), highest precedence first.
    pub fn roots(&self) -> Vec<SkillRoot> {
        let mut roots: Vec<SkillRoot> = Vec::new();
        let mut user = vec![self.synapse_skills.clone()];
        if let Some(h) = &self.user_home {
            user.push(h.join(".claude").join("skills"));
            user.push(h.join(".agents").join("skills"));
        }
        let reserved: Vec<&PathBuf> = user.iter().chain(self.env_dir.iter()).collect();
        for cwd in &self.project_cwds {
            for dir in project_dirs(cwd) {
                if !reserved.contains(&&dir) {
                    push_unique(&mut roots, SkillSource::Project, dir);
                }
            }
        }
        for dir in user {
            push_unique(&mut roots, SkillSource::User, dir);
        }
        if let Some(d) = &self.env_dir {
            push_unique(&mut roots, SkillSource::Env, d.clone());
        }
        if let Some(home) = &self.user_home {
            for dir in super::plugins::enabled_skill_dirs(home) {
                push_unique(&mut roots, SkillSource::Plugin, dir);
            }
        }
        roots
    }
}

impl RootConfig {
    /// Folders whose appearance or disappearance changes the roots: every possible root (user,
    /// env, project candidates in each ancestor of each cwd) and the plugin cache.
    pub fn candidate_dirs(&self) -> Vec<PathBuf> {
        let mut out = vec![self.synapse_skills.clone()];
        if let Some(h) = &self.user_home {
            out.push(h.join(".claude").join("skills"));
            out.push(h.join(".agents").join("skills"));
        }
        out.extend(self.env_dir.iter().cloned());
        for cwd in &self.project_cwds {
            for dir in cwd.ancestors() {
                for sub in [".synapse", ".claude", ".agents"] {
                    out.push(dir.join(sub).join("skills"));
                }
            }
        }
        out.extend(self.plugin_cache());
        out.sort();
        out.dedup();
        out
    }

    /// Whether a change at `path` (outside every root's folders) can change `roots` or remove
    /// one: it is a root, an ancestor of a possible root, or inside the plugin cache.
    pub fn touches_roots(&self, path: &Path, roots: &[SkillRoot]) -> bool {
        roots.iter().any(|r| r.dir.starts_with(path))
            || self
                .plugin_cache()
                .is_some_and(|c| path.starts_with(&c) || c.starts_with(path))
            || self.candidate_dirs().iter().any(|c| c.starts_with(path))
    }
}

fn push_unique(roots: &mut Vec<SkillRoot>, source: SkillSource, dir: PathBuf) {
    if !roots.iter().any(|r| r.dir == dir) {
        roots.push(SkillRoot { source, dir });
    }
}

/// Project skill folders that exist in `cwd` and its ancestors, nearest first.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        for sub in [".synapse", ".claude", ".agents"] {
            let candidate = dir.join(sub).join("skills");
            if candidate.is_dir() {
                out.push(candidate);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    #[test]
    fn precedence_project_user_env_plugin_and_upward_traversal() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let proj = home.join("work").join("proj");
        let deep = proj.join("src").join("deep");
        fs::create_dir_all(&deep).unwrap();
        fs::create_dir_all(proj.join(".claude/skills")).unwrap();
        fs::create_dir_all(home.join("work/.synapse/skills")).unwrap();
        // The home folder is an ancestor too: its folders stay user roots.
        fs::create_dir_all(home.join(".claude/skills")).unwrap();
        let plugin = home.join(".claude/plugins/cache/official/pdf/1.0.0/skills");
        fs::create_dir_all(&plugin).unwrap();
        fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"pdf@official": true}}"#,
        )
        .unwrap();
        let cfg = RootConfig {
            synapse_skills: home.join(".synapse/skills"),
            user_home: Some(home.clone()),
            env_dir: Some(t.path().join("envskills")),
            project_cwds: vec![deep],
        };
        let got: Vec<(SkillSource, PathBuf)> =
            cfg.roots().into_iter().map(|r| (r.source, r.dir)).collect();
        assert_eq!(
            got,
            vec![
                (SkillSource::Project, proj.join(".claude/skills")),
                (SkillSource::Project, home.join("work/.synapse/skills")),
                (SkillSource::User, home.join(".synapse/skills")),
                (SkillSource::User, home.join(".claude/skills")),
                (SkillSource::User, home.join(".agents/skills")),
                (SkillSource::Env, t.path().join("envskills")),
                (SkillSource::Plugin, plugin),
            ]
        );
    }

    #[test]
    fn env_dir_must_be_absolute() {
        let cfg = RootConfig::from_lookup(PathBuf::from("/s"), |k| match k {
            "SYNAPSE_SKILLS_DIR" => Some("relative".into()),
            "HOME" => Some("/h".into()),
            _ => None,
        });
        assert_eq!(cfg.env_dir, None);
        assert_eq!(cfg.user_home, Some(PathBuf::from("/h")));
    }
}
