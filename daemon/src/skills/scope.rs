//! One workspace's view of the skills: every user-level skill (user, env, plugin roots) plus the
//! project skills of folders at or above the caller's cwd, nearest first, and nothing of any
//! other project. The store keeps every root it was ever shown; this view decides what one
//! caller sees, so the prompt's listing ([`super::awareness`]), `skill list` / `show` / `load` /
//! `search` and `tools search` in project B never answer with project A's skills or copies, and
//! from a folder outside any project the user's own copy comes back. A project skill
//! that hides a user skill of the same name says so in its warnings, for that workspace only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::SkillError;
use super::permissions::SkillPermission;
use super::query::{resolve_from, summary};
use super::record::{Loaded, SkillRecord};
use super::source::SkillSource;
use super::state::State;
use super::store::{LoadDecision, SkillStore, SkillSummary};

/// Winners by name, for each winner the ids and folders of same-named skills it hides, and the
/// roots in view (an id names a record of these only).
pub(super) struct View {
    pub(super) active: BTreeMap<String, Arc<SkillRecord>>,
    hidden: BTreeMap<String, Vec<(String, PathBuf)>>,
    roots: Vec<usize>,
}

/// The folder a project skill root belongs to (`<dir>/.claude/skills` → `<dir>`).
fn project_owner(root: &Path) -> Option<&Path> {
    root.parent()?.parent()
}

/// Indexes of the roots a caller in `cwd` sees: every user-level root, and the project roots of
/// `cwd` and its ancestors.
pub(super) fn roots_in_view(st: &State, cwd: &Path) -> Vec<usize> {
    let mut order: Vec<usize> = (0..st.roots.len()).collect();
    order.retain(|&i| {
        let root = &st.roots[i];
        root.source != SkillSource::Project
            || project_owner(&root.dir).is_some_and(|owner| cwd.starts_with(owner))
    });
    order
}

/// The project skills whose commands a workspace rooted at `root` runs (its bin folder): the
/// winners by name among the project roots of `root`, its ancestors and its subfolders, the
/// deepest first. User-level skills are not among them: their commands are in the shared folder.
pub(super) fn workspace_skills(st: &State, root: &Path) -> Vec<Arc<SkillRecord>> {
    let mut order: Vec<usize> = (0..st.roots.len())
        .filter(|&i| {
            let r = &st.roots[i];
            r.source == SkillSource::Project
                && project_owner(&r.dir)
                    .is_some_and(|owner| root.starts_with(owner) || owner.starts_with(root))
        })
        .collect();
    order.sort_by_key(|&i| (usize::MAX - st.roots[i].dir.components().count(), i));
    let mut winners: BTreeMap<String, Arc<SkillRecord>> = BTreeMap::new();
    for i in order {
        for loaded in st.loaded.get(i).into_iter().flat_map(|m| m.values()) {
            if let Loaded::Skill(rec) = loaded {
                winners
                    .entry(rec.meta.name.clone())
                    .or_insert_with(|| rec.clone());
            }
        }
    }
    winners.into_values().collect()
}

/// What a caller in `cwd` sees: the winner per name among the user-level roots and the project
/// roots of `cwd` and its ancestors (nearest project first).
pub(super) fn view_from(st: &State, cwd: &Path) -> View {
    let mut order = roots_in_view(st, cwd);
    // Projects first, the deepest (nearest) folder first; the others keep their precedence.
    order.sort_by_key(|&i| {
        let root = &st.roots[i];
        match root.source {
            SkillSource::Project => (0, usize::MAX - root.dir.components().count(), i),
            other => (other as usize + 1, 0, i),
        }
    });
    let mut view = View {
        active: BTreeMap::new(),
        hidden: BTreeMap::new(),
        roots: order.clone(),
    };
    for i in order {
        let Some(folders) = st.loaded.get(i) else {
            continue;
        };
        for loaded in folders.values() {
            let Loaded::Skill(rec) = loaded else { continue };
            match view.active.get(&rec.meta.name) {
                Some(winner) if winner.dir != rec.dir => view
                    .hidden
                    .entry(rec.meta.name.clone())
                    .or_default()
                    .push((rec.id.clone(), rec.dir.clone())),
                Some(_) => {}
                None => {
                    view.active.insert(rec.meta.name.clone(), rec.clone());
                }
            }
        }
    }
    view
}

/// Finds skill `name` as a caller in `cwd` sees it (`None`: the user-level skills only).
pub(super) fn resolve_in(
    st: &State,
    cwd: Option<&Path>,
    name: &str,
    settings: &Path,
) -> Result<Arc<SkillRecord>, SkillError> {
    match cwd {
        Some(cwd) => {
            let view = view_from(st, cwd);
            resolve_from(st, &view.active, &view.roots, name, settings)
        }
        None => super::query::resolve(st, name, settings),
    }
}

fn scoped_summary(st: &State, view: &View, r: &SkillRecord) -> SkillSummary {
    let mut s = summary(st, r);
    (s.shadows, s.shadowed_dirs) = view
        .hidden
        .get(&r.meta.name)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .unzip();
    if r.source == SkillSource::Project {
        for id in s.shadows.iter().filter(|id| id.starts_with("user:")) {
            s.warnings.push(format!(
                "project skill {} hides the user's {id} in this workspace ({})",
                r.meta.name,
                r.dir.display()
            ));
        }
    }
    s
}

/// What a full refresh reports to a caller in `cwd`: the skills it sees (visible ones), and the
/// warnings and load errors of those skills only — another project's shadowed or broken skills
/// are that project's business.
pub(super) fn scoped_report(st: &State, cwd: &Path) -> (usize, Vec<String>, Vec<String>) {
    let view = view_from(st, cwd);
    let mut warnings = Vec::new();
    for (name, hidden) in &view.hidden {
        let Some(win) = view.active.get(name) else {
            continue;
        };
        for (id, dir) in hidden {
            warnings.push(format!(
                "{} ({}) shadows {id} ({})",
                win.id,
                win.dir.display(),
                dir.display()
            ));
        }
    }
    for r in view.active.values() {
        warnings.extend(r.warnings.iter().map(|w| w.to_string()));
    }
    let errors = roots_in_view(st, cwd)
        .into_iter()
        .filter_map(|i| st.loaded.get(i))
        .flat_map(|m| m.values())
        .filter_map(|l| match l {
            Loaded::Broken(e) => Some(e.to_string()),
            Loaded::Skill(_) => None,
        })
        .collect();
    let visible = view.active.values().filter(|r| st.is_visible(r)).count();
    (visible, warnings, errors)
}

impl SkillStore {
    /// The commands of the skills a caller in `cwd` sees (`tools search`): another project's
    /// skills and the skills a project one hides are left out.
    pub fn visit_tools_in(&self, cwd: &Path, f: &mut dyn FnMut(&super::ToolEntry)) {
        let st = self.read();
        let view = view_from(&st, cwd);
        for r in view.active.values().filter(|r| st.is_visible(r)) {
            for s in &r.scripts {
                f(&super::state::tool_entry(s));
            }
        }
    }

    /// `skill list` as seen from `cwd`.
    pub fn list_in(&self, cwd: &Path) -> Vec<SkillSummary> {
        let st = self.read();
        let view = view_from(&st, cwd);
        view.active
            .values()
            .filter(|r| st.permission(r) != SkillPermission::Deny)
            .map(|r| scoped_summary(&st, &view, r))
            .collect()
    }

    /// `skill search` (keyword ranking) as seen from `cwd`: the user's skills and this
    /// project's, a project's copy winning only here.
    pub fn search_skills_in(&self, query: &str, limit: usize, cwd: &Path) -> Vec<SkillSummary> {
        let st = self.read();
        let view = view_from(&st, cwd);
        super::query::keyword_hits(&st, view.active.values(), query, limit)
            .into_iter()
            .map(|r| scoped_summary(&st, &view, r))
            .collect()
    }

    /// A file inside skill `name` as seen from `cwd` (path guard applied; denied skills
    /// refused).
    pub fn read_file_in(
        &self,
        name: &str,
        rel: &str,
        cwd: &Path,
    ) -> Result<(PathBuf, Vec<u8>), SkillError> {
        let rec = resolve_in(&self.read(), Some(cwd), name, &self.paths().settings_file)?;
        super::files::read_skill_file(&rec.meta.name, &rec.dir, rel)
    }

    /// The scripts of skill `name` as seen from `cwd`.
    pub fn scripts_of_in(
        &self,
        name: &str,
        cwd: &Path,
    ) -> Result<Vec<super::script::SkillScript>, SkillError> {
        let rec = resolve_in(&self.read(), Some(cwd), name, &self.paths().settings_file)?;
        Ok(rec.scripts.clone())
    }

    /// `skill show` as seen from `cwd`.
    pub fn show_in(&self, name: &str, cwd: &Path) -> Result<SkillSummary, SkillError> {
        let st = self.read();
        let view = view_from(&st, cwd);
        let r = resolve_from(
            &st,
            &view.active,
            &view.roots,
            name,
            &self.paths().settings_file,
        )?;
        Ok(scoped_summary(&st, &view, &r))
    }

    /// `skill load` as seen from `cwd`: refuses denied and disabled skills, asks for `ask` ones.
    pub fn load_in(&self, name: &str, cwd: &Path) -> Result<LoadDecision, SkillError> {
        self.refresh_settings();
        let (rec, perm) = {
            let st = self.read();
            let rec = resolve_in(&st, Some(cwd), name, &self.paths().settings_file)?;
            if !st.settings.is_enabled(&rec.id) {
                return Err(SkillError::Disabled {
                    name: rec.meta.name.clone(),
                });
            }
            (rec.clone(), st.permission(&rec))
        };
        match perm {
            SkillPermission::Ask => Ok(LoadDecision::NeedsApproval {
                id: rec.id.clone(),
                name: rec.meta.name.clone(),
            }),
            _ => self.render_load(&rec).map(LoadDecision::Ready),
        }
    }

    /// `skill load` of an `ask` skill the user approved, as seen from `cwd` (still refuses
    /// denied and disabled ones).
    pub fn load_approved_in(&self, name: &str, cwd: &Path) -> Result<String, SkillError> {
        match self.load_in(name, cwd)? {
            LoadDecision::Ready(text) => Ok(text),
            LoadDecision::NeedsApproval { .. } => {
                let rec = resolve_in(&self.read(), Some(cwd), name, &self.paths().settings_file)?;
                self.render_load(&rec)
            }
        }
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
