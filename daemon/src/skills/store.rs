//! [`SkillStore`]: the daemon's one view of every skill. It scans the roots ([`super::source`]),
//! keeps records, wrappers, index.json and the tool list in step ([`super::state`]), and answers
//! queries: list, show, load (with permissions), read a bundled file (path guard), search.
//!
//! All methods are blocking (file I/O); async callers use `spawn_blocking`. The watcher calls
//! [`SkillStore::apply_paths`] with changed paths; `synapse tools refresh skills` calls
//! [`SkillStore::refresh`].

use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use synapse_shared::paths::Paths;
use synapse_shared::skill::SkillKind;

use super::catalog::{ToolEntry, ToolSource};
use super::permissions::SkillPermission;
use super::settings_view::SkillSettings;
use super::source::{RootConfig, SkillRoot, SkillSource};
use super::state::State;
use crate::workspace::SettingsHandle;
use synapse_command::wrappers::{WrapperChanges, WrapperFolder};

/// Project folders kept scanned and watched outside every attached workspace (see
/// [`SkillStore::add_project_cwd`]).
pub const LOOSE_CWDS_KEPT: usize = 16;

/// Where the store reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorePaths {
    pub skills_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub index_file: PathBuf,
    pub settings_file: PathBuf,
}

impl StorePaths {
    pub fn from_paths(p: &Paths) -> Self {
        Self {
            skills_dir: p.skills_dir(),
            bin_dir: p.bin_dir(),
            index_file: p.skills_dir().join("index.json"),
            settings_file: p.settings_file(),
        }
    }
}

/// What a refresh did, for `synapse tools refresh skills` and logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// Visible skills (enabled, not denied).
    pub skills: usize,
    pub tools: usize,
    pub wrappers_written: usize,
    pub wrappers_removed: usize,
    /// Lenient-rule warnings, shadowed skills, skipped scripts, settings problems.
    pub warnings: Vec<String>,
    /// Skills that could not be loaded, and files that could not be written.
    pub errors: Vec<String>,
}

/// A skill as list/show present it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillSummary {
    pub id: String,
    pub name: String,
    pub description: String,
    pub source: SkillSource,
    pub dir: PathBuf,
    pub skill_md: PathBuf,
    pub enabled: bool,
    pub permission: SkillPermission,
    pub kind: SkillKind,
    pub commands: Vec<String>,
    /// The scripts behind `commands`, same order, with what their sources say of them.
    pub scripts: Vec<ScriptSummary>,
    pub allowed_tools: Vec<String>,
    /// `tags` from the frontmatter (search ranks on them).
    pub tags: Vec<String>,
    /// Ids of skills with the same name that this one hides.
    pub shadows: Vec<String>,
    /// The folders of `shadows`, same order (two copies can share an id).
    pub shadowed_dirs: Vec<PathBuf>,
    pub warnings: Vec<String>,
    /// Claude Code's `user-invocable`, `argument-hint` and `disable-model-invocation`.
    pub user_invocable: bool,
    pub argument_hint: Option<String>,
    pub disable_model_invocation: bool,
}

/// A skill script as listings describe it (read from its source, never run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSummary {
    /// `skill:<skill>:<script>`.
    pub command: String,
    pub summary: Option<String>,
    /// The arguments part of its usage line.
    pub usage_args: Option<String>,
    /// Its whole documentation.
    pub help: String,
}

#[cfg(test)]
impl SkillSummary {
    /// A plain enabled user skill in `/d`, for tests that need only a name and a description.
    pub(crate) fn for_test(name: &str, description: &str) -> Self {
        Self {
            id: format!("user:{name}"),
            name: name.into(),
            description: description.into(),
            source: SkillSource::User,
            dir: "/d".into(),
            skill_md: "/d/SKILL.md".into(),
            enabled: true,
            permission: Default::default(),
            kind: Default::default(),
            commands: vec![],
            scripts: vec![],
            allowed_tools: vec![],
            tags: vec![],
            shadows: vec![],
            warnings: vec![],
            shadowed_dirs: vec![],
            user_invocable: true,
            argument_hint: None,
            disable_model_invocation: false,
        }
    }
}

/// The answer to `skill load`: the text, or a decision the caller must take first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadDecision {
    Ready(String),
    /// `permissions.skill` says `ask`: show the user, then call [`SkillStore::load_approved`]
    /// (or refuse). Non-interactive callers refuse.
    NeedsApproval {
        id: String,
        name: String,
    },
}

/// A SKILL.md body with the (mtime, size) it was read at.
pub(super) type CachedBody = (SystemTime, u64, Arc<str>);

pub struct SkillStore {
    paths: StorePaths,
    /// The user's settings (skill rules, enabled state), through the daemon's one handle.
    settings: Arc<SettingsHandle>,
    state: RwLock<State>,
    pub(super) bodies: Mutex<HashMap<PathBuf, CachedBody>>,
    roots_listeners: Mutex<Vec<Box<dyn Fn() + Send + Sync>>>,
    /// Which skills' `allowed-tools` the user approved (`$SYNAPSE_HOME/skill_approvals.json`).
    approvals: super::grants::ApprovalStore,
    /// The prompt listing's ranking index, rebuilt when the skills it was built from changed.
    pub(super) listing_index: super::awareness::IndexCache,
}

impl std::fmt::Debug for SkillStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillStore")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl SkillStore {
    /// Scans everything once and returns the ready store with the scan's report; settings are
    /// read through a handle of its own (tools, benchmarks).
    pub fn open(paths: StorePaths, config: RootConfig) -> (Arc<Self>, RefreshReport) {
        let settings = Arc::new(SettingsHandle::open(paths.settings_file.clone()));
        Self::open_with_settings(paths, config, settings)
    }

    /// [`open`](Self::open) with the daemon's settings handle.
    pub fn open_with_settings(
        paths: StorePaths,
        config: RootConfig,
        settings: Arc<SettingsHandle>,
    ) -> (Arc<Self>, RefreshReport) {
        let mut view = SkillSettings::default();
        view.refresh(&settings);
        let state = State::new(
            config,
            paths.bin_dir.clone(),
            paths.index_file.clone(),
            view,
        );
        let home = paths
            .settings_file
            .parent()
            .unwrap_or(std::path::Path::new("/"))
            .to_path_buf();
        let store = Arc::new(Self {
            approvals: super::grants::ApprovalStore::new(&home),
            paths,
            settings,
            state: RwLock::new(state),
            bodies: Mutex::new(HashMap::new()),
            roots_listeners: Mutex::new(Vec::new()),
            listing_index: Default::default(),
        });
        let report = store.refresh();
        (store, report)
    }

    /// The store for a daemon: paths from `paths`, `HOME` and `SYNAPSE_SKILLS_DIR` from the
    /// process environment, project roots from `cwd`, settings through the daemon's handle.
    pub fn open_from_env(
        paths: &Paths,
        cwd: Option<PathBuf>,
        settings: Arc<SettingsHandle>,
    ) -> (Arc<Self>, RefreshReport) {
        let mut config = RootConfig::from_lookup(paths.skills_dir(), |k| std::env::var_os(k));
        config.project_cwds.extend(cwd);
        Self::open_with_settings(StorePaths::from_paths(paths), config, settings)
    }

    /// The record of approved `allowed-tools` lists.
    pub fn approvals(&self) -> &super::grants::ApprovalStore {
        &self.approvals
    }

    /// The settings handle the store reads through (and writes `skills.skills.*` with).
    pub fn settings(&self) -> &SettingsHandle {
        &self.settings
    }

    pub fn paths(&self) -> &StorePaths {
        &self.paths
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read()
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write()
    }

    /// Full rescan: roots, records, wrappers, index. The report covers every root (logs).
    pub fn refresh(&self) -> RefreshReport {
        self.refresh_scoped(None)
    }

    /// Full rescan, reported as a caller in `cwd` sees it: its skills' count, warnings and
    /// errors, nothing of another project (`synapse tools refresh skills`).
    pub fn refresh_in(&self, cwd: &Path) -> RefreshReport {
        self.refresh_scoped(Some(cwd))
    }

    fn refresh_scoped(&self, cwd: Option<&Path>) -> RefreshReport {
        let mut st = self.write();
        let old_roots = st.roots.clone();
        st.settings.refresh(&self.settings);
        let changes = st.rebuild();
        let mut report = self.finish(&mut st, changes, true);
        if let Some(cwd) = cwd {
            let (skills, warnings, errors) = super::scope::scoped_report(&st, cwd);
            report.skills = skills;
            report.warnings = st.settings.warnings().into_iter().chain(warnings).collect();
            let global: Vec<String> = st.errors().iter().map(|e| e.to_string()).collect();
            report.errors.retain(|e| !global.contains(e));
            report.errors.extend(errors);
        }
        let roots_changed = st.roots != old_roots;
        drop(st);
        if roots_changed {
            self.notify_roots_changed();
        }
        report
    }

    /// Applies changed paths (from the watcher): folders inside a root are reloaded one by one;
    /// anything touching a root itself or the settings file is handled too. Returns `None` when
    /// nothing changed.
    pub fn apply_paths(&self, changed: &[PathBuf]) -> Option<RefreshReport> {
        let mut st = self.write();
        let mut changes = WrapperChanges::default();
        let mut dirty = false;
        let mut touched_roots: Vec<PathBuf> = Vec::new();
        if changed.iter().any(|p| p == &self.paths.settings_file)
            && st.settings.refresh(&self.settings)
        {
            let names: Vec<String> = st.by_name.keys().cloned().collect();
            for n in names {
                st.sync_name(&n, &mut changes);
            }
            dirty = true;
        }
        let mut seen = std::collections::HashSet::new();
        for p in changed {
            match st.locate(p) {
                Some((root, folder))
                    if !folder.starts_with('.') && seen.insert((root, folder.clone())) =>
                {
                    dirty |= st.reload_dir(root, &folder, &mut changes);
                }
                Some(_) => {}
                None if st.config.touches_roots(p, &st.roots) => touched_roots.push(p.clone()),
                None => {}
            }
        }
        if !touched_roots.is_empty() {
            if st.config.roots() != st.roots {
                drop(st);
                return Some(self.refresh());
            }
            for i in 0..st.roots.len() {
                if touched_roots.iter().any(|p| st.roots[i].dir.starts_with(p)) {
                    dirty |= st.rescan_root(i, &mut changes);
                }
            }
        }
        if !dirty {
            return None;
        }
        Some(self.finish(&mut st, changes, false))
    }

    /// Adds a session's (or a skill command's) working directory; its project roots join (and a
    /// rescan runs) when new. Beyond [`LOOSE_CWDS_KEPT`] folders outside every attached
    /// workspace, the least recently used are let go.
    pub fn add_project_cwd(&self, cwd: &Path) -> Option<RefreshReport> {
        {
            let mut st = self.write();
            if !st.use_cwd(cwd) {
                return None;
            }
            st.prune_cwds(LOOSE_CWDS_KEPT);
            if st.config.roots() == st.roots {
                return None;
            }
        }
        Some(self.refresh())
    }

    /// Attaches the bin folder of workspace `root`: from now on it holds the commands of the
    /// project skills that workspace sees (written now, kept current by every change). Cheap
    /// when already attached and the folder is there.
    pub fn attach_workspace(&self, root: &Path, bin: &Path) -> WrapperChanges {
        self.add_project_cwd(root);
        let mut st = self.write();
        let mut changes = WrapperChanges::default();
        match st.workspaces.get_mut(root) {
            Some(folder) if folder.bin_dir() == bin && bin.is_dir() => return changes,
            Some(folder) => folder.forget(),
            None => {}
        }
        if let Err(e) = std::fs::create_dir_all(bin) {
            changes
                .errors
                .push(format!("cannot create {}: {e}", bin.display()));
            return changes;
        }
        st.workspaces.insert(
            root.to_path_buf(),
            WrapperFolder::open(
                bin.to_path_buf(),
                synapse_shared::skill::SKILL_COMMAND_PREFIX,
            ),
        );
        st.sync_workspace(root, &mut changes);
        for e in &changes.errors {
            tracing::warn!(workspace = %root.display(), "skill wrappers: {e}");
        }
        changes
    }

    /// Forgets workspace `root`'s bin folder (the workspace went idle and its folder was
    /// removed); the next [`attach_workspace`](Self::attach_workspace) writes it again.
    /// Its folders count as loose from now on (let go at a later
    /// [`add_project_cwd`](Self::add_project_cwd) when older than the others); no rescan here,
    /// as the hub calls this under its lock.
    pub fn detach_workspace(&self, root: &Path) {
        self.write().workspaces.remove(root);
    }

    /// Called (on the caller's thread) after the set of roots changed, so the watcher re-plans.
    pub fn on_roots_changed(&self, f: Box<dyn Fn() + Send + Sync>) {
        {
            let mut l = self.roots_listeners.lock();
            l.push(f);
        }
    }

    fn notify_roots_changed(&self) {
        {
            let l = self.roots_listeners.lock();
            l.iter().for_each(|f| f());
        }
    }

    pub fn roots(&self) -> Vec<SkillRoot> {
        self.read().roots.clone()
    }

    pub fn root_config(&self) -> RootConfig {
        self.read().config.clone()
    }

    /// The `SYNAPSE_SKILLS_DIR` folder in force (read once, when the daemon started).
    pub fn env_skills_dir(&self) -> Option<PathBuf> {
        self.read().config.env_dir.clone()
    }

    /// Writes index.json and builds the report.
    fn finish(&self, st: &mut State, mut changes: WrapperChanges, full: bool) -> RefreshReport {
        if !full {
            // A full rebuild synced the workspaces already.
            st.sync_workspaces(&mut changes);
        }
        let mut errors: Vec<String> = changes.errors;
        if let Err(e) = st.index.write() {
            errors.push(format!("cannot write {}: {e}", st.index.path().display()));
        }
        let mut report = RefreshReport {
            skills: st.index.len(),
            tools: st.tools.len(),
            wrappers_written: changes.written.len(),
            wrappers_removed: changes.removed.len(),
            warnings: Vec::new(),
            errors,
        };
        if full {
            report
                .errors
                .extend(st.errors().iter().map(|e| e.to_string()));
            report.warnings.extend(st.settings.warnings());
            report.warnings.extend(st.shadow_reports());
            for r in st.active.values() {
                report
                    .warnings
                    .extend(r.warnings.iter().map(|w| w.to_string()));
            }
        }
        report
    }

    /// Number of visible skills and of their commands.
    pub fn counts(&self) -> (usize, usize) {
        let st = self.read();
        (st.index.len(), st.tools.len())
    }
}

impl crate::workspace::WorkspaceListener for SkillStore {
    fn workspace_up(&self, root: &Path, dirs: &crate::workspace::WorkspaceDirs) {
        self.attach_workspace(root, &dirs.bin_dir);
    }
    fn workspace_down(&self, root: &Path) {
        self.detach_workspace(root);
    }
}

impl ToolSource for SkillStore {
    fn visit_tools(&self, scope: super::catalog::ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        match scope.workspace {
            Some(root) => self.visit_tools_in(root, f),
            None => self.read().tools.values().for_each(f),
        }
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
