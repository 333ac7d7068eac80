//! The store's in-memory state and its invariants: for every skill name, the winner among the
//! user-level roots (user, env, plugin) is in `active`, the index entry (`index.json`), the
//! wrappers in the shared bin folder and the tool entries, and the last three exist only while
//! that skill is visible (enabled and not denied). A project's skills are in none of them: they
//! are answered per workspace ([`super::scope`]), and each attached workspace's bin folder holds
//! the commands of the project skills that workspace sees ([`State::sync_workspaces`]), so one
//! project's skills are never listed, searched or on the PATH of another, and a project's copy
//! of a skill never replaces the user's anywhere else.
//!
//! Every mutation goes through [`State::reload_dir`] (one folder changed) or
//! [`State::rebuild`] (everything), which both end in [`State::sync_name`]; the store then brings
//! the workspace folders in step.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use synapse_shared::skill::SkillFormatError;

use super::catalog::ToolEntry;
use super::index::SkillIndex;
use super::permissions::SkillPermission;
use super::record::{Loaded, SkillRecord, load_skill_dir};
use super::settings_view::SkillSettings;
use super::source::{RootConfig, SkillRoot, SkillSource};
use super::wrapper;
use synapse_command::wrappers::{WrapperChanges, WrapperFolder};
use synapse_shared::skill::SKILL_COMMAND_PREFIX;

pub(crate) struct State {
    pub config: RootConfig,
    pub roots: Vec<SkillRoot>,
    /// Per root (same order as `roots`): folder name → what is there.
    pub loaded: Vec<BTreeMap<String, Loaded>>,
    /// Skill name → the (root, folder) pairs that define it.
    pub by_name: HashMap<String, BTreeSet<(usize, String)>>,
    /// Skill name → winning record among the user-level roots (projects: [`super::scope`]).
    pub active: BTreeMap<String, Arc<SkillRecord>>,
    pub settings: SkillSettings,
    /// `skill:*` in the shared bin folder: the user-level skills' commands.
    pub wrappers: WrapperFolder,
    /// Workspace root → `skill:*` in its bin folder: its project skills' commands.
    pub workspaces: BTreeMap<PathBuf, WrapperFolder>,
    pub index: SkillIndex,
    /// Commands of visible user-level skills (a project's are answered per workspace).
    pub tools: BTreeMap<String, ToolEntry>,
    /// Skill name → its commands currently installed in the shared bin folder.
    pub owned: HashMap<String, Vec<String>>,
    /// Project cwd → when it last asked for skills (a counter), to let go of the oldest.
    pub cwd_used: HashMap<PathBuf, u64>,
    pub cwd_clock: u64,
}

impl State {
    pub fn new(config: RootConfig, bin: PathBuf, index: PathBuf, settings: SkillSettings) -> Self {
        Self {
            roots: Vec::new(),
            config,
            loaded: Vec::new(),
            by_name: HashMap::new(),
            active: BTreeMap::new(),
            settings,
            wrappers: WrapperFolder::open(bin, SKILL_COMMAND_PREFIX),
            workspaces: BTreeMap::new(),
            index: SkillIndex::new(index),
            tools: BTreeMap::new(),
            owned: HashMap::new(),
            cwd_used: HashMap::new(),
            cwd_clock: 0,
        }
    }

    /// Records that `cwd` asked for skills now; true when it is new to the store.
    pub fn use_cwd(&mut self, cwd: &Path) -> bool {
        self.cwd_clock += 1;
        self.cwd_used.insert(cwd.to_path_buf(), self.cwd_clock);
        if self.config.project_cwds.iter().any(|c| c == cwd) {
            return false;
        }
        self.config.project_cwds.push(cwd.to_path_buf());
        true
    }

    /// Lets go of the least recently used project cwds beyond `kept` that no attached workspace
    /// holds (a `skill list` run here and there), so the roots scanned and watched stay bounded
    /// however many folders a long-running daemon has seen.
    pub fn prune_cwds(&mut self, kept: usize) {
        let held = |c: &Path| self.workspaces.keys().any(|root| c.starts_with(root));
        let mut loose: Vec<(u64, PathBuf)> = self
            .config
            .project_cwds
            .iter()
            .filter(|c| !held(c))
            .map(|c| (self.cwd_used.get(c).copied().unwrap_or(0), c.clone()))
            .collect();
        if loose.len() <= kept {
            return;
        }
        loose.sort();
        let gone: BTreeSet<PathBuf> = loose.into_iter().rev().skip(kept).map(|(_, c)| c).collect();
        self.config.project_cwds.retain(|c| !gone.contains(c));
        self.cwd_used.retain(|c, _| !gone.contains(c));
    }

    pub fn permission(&self, r: &SkillRecord) -> SkillPermission {
        self.settings.rules.decide(&r.meta.name, &r.id)
    }

    pub fn is_visible(&self, r: &SkillRecord) -> bool {
        self.settings.is_enabled(&r.id) && self.permission(r) != SkillPermission::Deny
    }

    /// Rescans every root from scratch and brings wrappers and index in line.
    pub fn rebuild(&mut self) -> WrapperChanges {
        self.roots = self.config.roots();
        self.loaded = self
            .roots
            .iter()
            .enumerate()
            .map(|(i, r)| scan_root(r, i))
            .collect();
        self.by_name.clear();
        for (i, root) in self.loaded.iter().enumerate() {
            for (folder, l) in root {
                if let Loaded::Skill(rec) = l {
                    self.by_name
                        .entry(rec.meta.name.clone())
                        .or_default()
                        .insert((i, folder.clone()));
                }
            }
        }
        self.active.clear();
        self.tools.clear();
        self.owned.clear();
        self.index.clear();
        let names: Vec<String> = self.by_name.keys().cloned().collect();
        let mut wanted = BTreeMap::new();
        let mut errors = Vec::new();
        for name in names {
            let Some(user) = self.user_winner(&name) else {
                continue;
            };
            self.active.insert(name.clone(), user.clone());
            if !self.is_visible(&user) {
                continue;
            }
            self.index.set(&user);
            let mut cmds = Vec::new();
            for s in &user.scripts {
                match wrapper::render(&user.id, s) {
                    Ok(text) => {
                        wanted.insert(s.command.clone(), text);
                    }
                    Err(e) => errors.push(format!("{}: no wrapper: {e}", s.command)),
                }
                self.tools.insert(s.command.clone(), tool_entry(s));
                cmds.push(s.command.clone());
            }
            self.owned.insert(name, cmds);
        }
        let mut changes = self.wrappers.sync(wanted, &|_| false);
        changes.errors.extend(errors);
        self.sync_workspaces(&mut changes);
        changes
    }

    /// Makes every attached workspace's folder hold the commands of the project skills it sees.
    pub fn sync_workspaces(&mut self, changes: &mut WrapperChanges) {
        let roots: Vec<PathBuf> = self.workspaces.keys().cloned().collect();
        for root in roots {
            self.sync_workspace(&root, changes);
        }
    }

    /// Makes workspace `root`'s folder hold the commands of the project skills it sees.
    pub fn sync_workspace(&mut self, root: &Path, changes: &mut WrapperChanges) {
        let mut wanted = BTreeMap::new();
        for rec in super::scope::workspace_skills(self, root) {
            if !self.is_visible(&rec) {
                continue;
            }
            for s in &rec.scripts {
                match wrapper::render(&rec.id, s) {
                    Ok(text) => {
                        wanted.insert(s.command.clone(), text);
                    }
                    Err(e) => changes
                        .errors
                        .push(format!("{}: no wrapper: {e}", s.command)),
                }
            }
        }
        if let Some(folder) = self.workspaces.get_mut(root) {
            let c = folder.sync(wanted, &|_| false);
            changes.written.extend(c.written);
            changes.removed.extend(c.removed);
            changes.errors.extend(c.errors);
        }
    }

    /// Reloads folder `folder` of root `root`; returns false when nothing changed.
    pub fn reload_dir(&mut self, root: usize, folder: &str, changes: &mut WrapperChanges) -> bool {
        let Some(r) = self.roots.get(root) else {
            return false;
        };
        let dir = r.dir.join(folder);
        let new = load_skill_dir(&dir, r.source, root);
        let old = self.loaded.get_mut(root).and_then(|m| m.remove(folder));
        if old == new {
            if let (Some(m), Some(old)) = (self.loaded.get_mut(root), old) {
                m.insert(folder.to_string(), old);
            }
            return false;
        }
        let mut affected = BTreeSet::new();
        if let Some(Loaded::Skill(rec)) = &old {
            affected.insert(rec.meta.name.clone());
            if let Some(set) = self.by_name.get_mut(&rec.meta.name) {
                set.remove(&(root, folder.to_string()));
            }
        }
        if let Some(l) = new {
            if let Loaded::Skill(rec) = &l {
                affected.insert(rec.meta.name.clone());
                self.by_name
                    .entry(rec.meta.name.clone())
                    .or_default()
                    .insert((root, folder.to_string()));
            }
            if let Some(m) = self.loaded.get_mut(root) {
                m.insert(folder.to_string(), l);
            }
        }
        for name in affected {
            self.sync_name(&name, changes);
        }
        true
    }

    /// Reloads every folder of root `i` that is there now or was there before.
    pub fn rescan_root(&mut self, i: usize, changes: &mut WrapperChanges) -> bool {
        let Some(root) = self.roots.get(i) else {
            return false;
        };
        let mut folders: BTreeSet<String> = self
            .loaded
            .get(i)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if let Ok(entries) = std::fs::read_dir(&root.dir) {
            folders.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.')),
            );
        }
        let mut dirty = false;
        for f in folders {
            dirty |= self.reload_dir(i, &f, changes);
        }
        dirty
    }

    /// Re-derives wrappers, index entry and tools of one skill name.
    pub fn sync_name(&mut self, name: &str, changes: &mut WrapperChanges) {
        if self.by_name.get(name).is_some_and(BTreeSet::is_empty) {
            self.by_name.remove(name);
        }
        let winner = self.user_winner(name);
        // The user-level index holds the user's skills only: a project's same-named skill
        // never replaces the user's entry (projects are answered per workspace).
        match winner.clone().filter(|r| self.is_visible(r)) {
            Some(rec) => self.index.set(&rec),
            None => self.index.remove(name),
        }
        let previous = self.owned.remove(name).unwrap_or_default();
        let mut now = Vec::new();
        if let Some(rec) = winner.clone().filter(|r| self.is_visible(r)) {
            for s in &rec.scripts {
                match wrapper::render(&rec.id, s) {
                    Ok(text) => self.wrappers.put(&s.command, text, changes),
                    Err(e) => changes
                        .errors
                        .push(format!("{}: no wrapper: {e}", s.command)),
                }
                self.tools.insert(s.command.clone(), tool_entry(s));
                now.push(s.command.clone());
            }
        }
        for cmd in previous.iter().filter(|c| !now.contains(c)) {
            self.wrappers.remove(cmd, changes);
            self.tools.remove(cmd);
        }
        if !now.is_empty() {
            self.owned.insert(name.to_string(), now);
        }
        match winner {
            Some(rec) => self.active.insert(name.to_string(), rec),
            None => self.active.remove(name),
        };
    }

    /// The winner of `name` among the user-level roots: what the shared bin folder runs.
    fn user_winner(&self, name: &str) -> Option<Arc<SkillRecord>> {
        self.user_records(name).next()
    }

    /// Whether root `i` is a user-level one (user, env, plugin), seen by every workspace.
    pub fn is_user_root(&self, i: usize) -> bool {
        self.roots
            .get(i)
            .is_some_and(|r| r.source != SkillSource::Project)
    }

    /// The records named `name` in the user-level roots, in precedence order.
    pub fn user_records<'a>(&'a self, name: &str) -> impl Iterator<Item = Arc<SkillRecord>> + 'a {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|(root, _)| self.is_user_root(*root))
            .filter_map(
                |(root, folder)| match self.loaded.get(*root)?.get(folder)? {
                    Loaded::Skill(rec) => Some(rec.clone()),
                    Loaded::Broken(_) => None,
                },
            )
    }

    /// Index of the root that contains `path` (strictly inside), and the first component.
    pub fn locate(&self, path: &Path) -> Option<(usize, String)> {
        self.roots.iter().enumerate().find_map(|(i, r)| {
            let rel = path.strip_prefix(&r.dir).ok()?;
            let first = rel.components().next()?;
            Some((i, first.as_os_str().to_string_lossy().into_owned()))
        })
    }

    /// Every broken SKILL.md.
    pub fn errors(&self) -> Vec<&SkillFormatError> {
        self.loaded
            .iter()
            .flat_map(|m| m.values())
            .filter_map(|l| match l {
                Loaded::Broken(e) => Some(e),
                Loaded::Skill(_) => None,
            })
            .collect()
    }

    /// `"<winner id> (<dir>) shadows <loser id> (<dir>)"` for every name the user-level roots
    /// define more than once (a project's shadowing is reported to that project only).
    pub fn shadow_reports(&self) -> Vec<String> {
        let mut out = Vec::new();
        for name in self.by_name.keys() {
            let mut records = self.user_records(name);
            let Some(win) = records.next() else {
                continue;
            };
            for loser in records {
                out.push(format!(
                    "{} ({}) shadows {} ({})",
                    win.id,
                    win.dir.display(),
                    loser.id,
                    loser.dir.display()
                ));
            }
        }
        out
    }

    /// All loaded records of a root order, winners and shadowed alike.
    pub fn all_records(&self) -> impl Iterator<Item = &SkillRecord> {
        self.loaded
            .iter()
            .flat_map(|m| m.values())
            .filter_map(|l| match l {
                Loaded::Skill(r) => Some(&**r),
                Loaded::Broken(_) => None,
            })
    }
}

pub(crate) fn tool_entry(s: &super::script::SkillScript) -> ToolEntry {
    ToolEntry {
        command: s.command.clone(),
        description: wrapper::description(s),
    }
}

/// Loads every skill folder of a root, spreading the work over the available cores.
fn scan_root(root: &SkillRoot, index: usize) -> BTreeMap<String, Loaded> {
    let Ok(entries) = std::fs::read_dir(&root.dir) else {
        return BTreeMap::new();
    };
    let folders: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    let load = |names: &[String]| -> Vec<(String, Loaded)> {
        names
            .iter()
            .filter_map(|n| {
                load_skill_dir(&root.dir.join(n), root.source, index).map(|l| (n.clone(), l))
            })
            .collect()
    };
    if threads < 2 || folders.len() < 64 {
        return load(&folders).into_iter().collect();
    }
    let chunk = folders.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = folders
            .chunks(chunk)
            .map(|c| s.spawn(move || load(c)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}
