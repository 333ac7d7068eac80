//! Skills whose SKILL.md cannot be loaded, as a caller in one workspace sees them: `skill list`
//! shows each with its error, and `skill show <folder>` finds it, so a YAML typo never makes a
//! skill silently disappear. They have no commands and never reach the model.

use std::path::{Path, PathBuf};

use super::record::{Loaded, skill_md_path};
use super::scope::roots_in_view;
use super::source::SkillSource;
use super::store::SkillStore;

/// One skill folder that did not load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenSkill {
    /// `source:folder`, e.g. `user:bad-yaml`.
    pub id: String,
    /// The folder name (the frontmatter's name could not be trusted).
    pub folder: String,
    pub source: SkillSource,
    pub dir: PathBuf,
    pub skill_md: PathBuf,
    /// `path:line: why`.
    pub error: String,
}

impl SkillStore {
    /// Every broken skill a caller in `cwd` would see, by folder name.
    pub fn broken_in(&self, cwd: &Path) -> Vec<BrokenSkill> {
        let st = self.read();
        let mut out = Vec::new();
        for i in roots_in_view(&st, cwd) {
            let (Some(root), Some(folders)) = (st.roots.get(i), st.loaded.get(i)) else {
                continue;
            };
            for (folder, loaded) in folders {
                let Loaded::Broken(e) = loaded else { continue };
                let dir = root.dir.join(folder);
                out.push(BrokenSkill {
                    id: format!("{}:{folder}", root.source.as_str()),
                    folder: folder.clone(),
                    source: root.source,
                    skill_md: skill_md_path(&dir).unwrap_or_else(|| dir.join("SKILL.md")),
                    dir,
                    error: e.to_string(),
                });
            }
        }
        out.sort_by(|a, b| a.folder.cmp(&b.folder).then(a.id.cmp(&b.id)));
        out
    }

    /// The broken skill `name` (folder name or `source:folder` id) seen from `cwd`, if any.
    pub fn broken_named(&self, name: &str, cwd: &Path) -> Option<BrokenSkill> {
        let name = name.trim();
        self.broken_in(cwd)
            .into_iter()
            .find(|b| b.id == name || b.folder == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::store::StorePaths;
    use synapse_shared::paths::Paths;

    #[test]
    fn a_skill_with_bad_yaml_is_listed_with_its_line_and_found_by_folder() {
        let t = tempfile::tempdir().unwrap();
        let p = Paths::with_home(t.path());
        p.ensure_layout().unwrap();
        let skills = p.skills_dir();
        std::fs::create_dir_all(skills.join("bad-yaml")).unwrap();
        std::fs::create_dir_all(skills.join("good")).unwrap();
        std::fs::write(
            skills.join("bad-yaml/SKILL.md"),
            "---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n",
        )
        .unwrap();
        std::fs::write(
            skills.join("good/SKILL.md"),
            "---\nname: good\ndescription: Fine.\n---\nbody\n",
        )
        .unwrap();
        let (store, _) = SkillStore::open(
            StorePaths::from_paths(&p),
            crate::skills::RootConfig {
                synapse_skills: skills.clone(),
                ..Default::default()
            },
        );
        let broken = store.broken_in(Path::new("/"));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!(broken[0].id, "user:bad-yaml");
        assert!(broken[0].error.contains("SKILL.md:"), "{}", broken[0].error);
        assert!(store.broken_named("bad-yaml", Path::new("/")).is_some());
        assert!(
            store
                .broken_named("user:bad-yaml", Path::new("/"))
                .is_some()
        );
        assert!(store.broken_named("good", Path::new("/")).is_none());
    }
}
