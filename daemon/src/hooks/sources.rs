//! Where hooks come from, in order: `$SYNAPSE_HOME/settings.json` (through the daemon's settings
//! handle), `~/.claude/settings.json`, the enabled Claude Code plugins' `hooks/hooks.json` (enabled
//! by the user's settings, overridden by a trusted project's as pinned:
//! [`crate::plugins::project`]), and —
//! only in a trusted project, and only as the content the user trusted (the copy pinned by
//! `synapse trust`, [`trust_pins`]) — the workspace's `.synapse/settings.json`,
//! `.claude/settings.json` and `.claude/settings.local.json`. A project file that changed since
//! it was trusted keeps the hooks it had then; its new hooks wait for `synapse trust` again.
//!
//! [`HookSources::get`] costs one `stat` per file when nothing changed: the set is rebuilt only
//! when a file's modification time (or the settings handle's generation) moves.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde_json::Value;
use synapse_shared::claude_plugins::{self, Plugin, ProjectPluginSettings};
use synapse_shared::trust;

use super::config::{HookOrigin, HookSet};
use crate::plugins::project::TrustedProjectPlugins;
use crate::workspace::SettingsHandle;
use crate::workspace::trust_pins::{self, PinState};

/// A project's settings files that may hold hooks, relative to its root: the ones `synapse
/// trust` pins.
pub const PROJECT_HOOK_FILES: [&str; 3] = trust_pins::PINNED_PROJECT_FILES;

/// The files hooks are read from, for every workspace of the daemon.
pub struct HookSources {
    user: Arc<SettingsHandle>,
    /// The daemon user's home (`~/.claude`).
    home: PathBuf,
    trust_file: PathBuf,
    cache: Mutex<HashMap<Option<PathBuf>, Cached<Stamp, HookSet>>>,
    /// Which project settings may turn plugins on or off.
    project_plugins: TrustedProjectPlugins,
    /// The enabled plugins of each workspace root (`None`: no project layer), by the stamp of the
    /// files that decide them.
    plugins: Mutex<HashMap<Option<PathBuf>, Cached<Times, EnabledPlugins>>>,
}

/// The user settings' generation and every source file's modification time.
type Stamp = (u64, Times);

/// The plugins enabled for one workspace.
type EnabledPlugins = Vec<Plugin>;

/// Modification times of files (`None`: missing).
type Times = Vec<Option<SystemTime>>;

/// A value derived from files, with the stamp of the files it was derived from.
type Cached<S, T> = (S, Arc<T>);

impl HookSources {
    pub fn new(user: Arc<SettingsHandle>, home: PathBuf, trust_file: PathBuf) -> Self {
        let project_plugins =
            TrustedProjectPlugins::new(trust_file.parent().unwrap_or(Path::new("/")));
        Self {
            user,
            home,
            project_plugins,
            trust_file,
            cache: Mutex::default(),
            plugins: Mutex::default(),
        }
    }

    /// The daemon user's home (`~`, `$HOME` in hook commands).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The pin file of `synapse trust` (`$SYNAPSE_HOME/trusted_settings.json`).
    pub fn pin_file(&self) -> PathBuf {
        trust_pins::pin_file(self.trust_file.parent().unwrap_or(Path::new("/")))
    }

    fn claude_settings(&self) -> PathBuf {
        self.home.join(".claude").join("settings.json")
    }

    /// The plugins enabled for a session of workspace `root`, found again only when Claude
    /// Code's settings, its installed-plugins list or the project's trusted settings changed.
    fn plugin_roots(&self, root: Option<&Path>) -> Arc<Vec<Plugin>> {
        let mut deciding = claude_plugins::deciding_files(&self.home);
        if let Some(root) = root {
            deciding.extend(self.project_plugins.deciding_files(root));
        }
        let times: Times = deciding.iter().map(|p| modified(p)).collect();
        let key = root.map(Path::to_path_buf);
        let mut cached = self.plugins.lock();
        if let Some((t, roots)) = cached.get(&key)
            && *t == times
        {
            return roots.clone();
        }
        let layers = root.and_then(|r| self.project_plugins.layers(r));
        let scan = claude_plugins::scan_layered(&self.home, layers.as_ref());
        for problem in &scan.problems {
            tracing::warn!("Claude plugins: {problem}");
        }
        let roots = Arc::new(scan.enabled().cloned().collect::<Vec<_>>());
        cached.insert(key, (times, roots.clone()));
        roots
    }

    /// The hooks in force for a session of workspace `root` (`None`: no project layer).
    pub fn get(&self, root: Option<&Path>) -> Arc<HookSet> {
        let plugins = self.plugin_roots(root);
        let mut files = vec![
            self.claude_settings(),
            self.trust_file.clone(),
            self.pin_file(),
        ];
        files.extend(plugins.iter().map(|p| plugin_hooks_file(&p.root)));
        if let Some(root) = root {
            files.extend(PROJECT_HOOK_FILES.iter().map(|f| root.join(f)));
        }
        let user = self.user.snapshot();
        let stamp: Stamp = (user.generation, files.iter().map(|p| modified(p)).collect());
        let key = root.map(Path::to_path_buf);
        let mut cache = self.cache.lock();
        if let Some((old, set)) = cache.get(&key)
            && *old == stamp
        {
            return set.clone();
        }
        let set = Arc::new(self.load(&user.settings, &plugins, root));
        cache.insert(key, (stamp, set.clone()));
        set
    }

    /// Every hook that could run in a project at `root` if it were trusted as it reads now: the
    /// user's and the plugins' hooks, and the project files' current hooks (`synapse trust`
    /// reviews the files they run before it pins them).
    pub fn review_entries(&self, root: &Path) -> Vec<super::HookEntry> {
        // The plugins the project's settings would turn on once trusted as they read now.
        let scan = claude_plugins::scan(&self.home, Some(root));
        let plugins: Vec<Plugin> = scan.enabled().cloned().collect();
        let user = self.user.snapshot();
        let mut set = self.load(&user.settings, &plugins, None);
        for name in PROJECT_HOOK_FILES {
            let file = root.join(name);
            let mut ignored = Vec::new();
            if let Some(hooks) =
                read_json(&file, &mut ignored).and_then(|v| v.get("hooks").cloned())
            {
                set.add(&hooks, &origin(&file));
            }
        }
        set.entries
    }

    fn load(
        &self,
        user: &synapse_shared::settings::Settings,
        plugins: &[Plugin],
        root: Option<&Path>,
    ) -> HookSet {
        let mut set = HookSet::default();
        if let Some(hooks) = user.other.get("hooks") {
            set.add(hooks, &origin(self.user.path()));
        }
        let claude = self.claude_settings();
        if let Some(v) = read_json(&claude, &mut set.problems)
            && let Some(hooks) = v.get("hooks")
        {
            set.add(hooks, &origin(&claude));
        }
        for plugin in plugins {
            let file = plugin_hooks_file(&plugin.root);
            if let Some(v) = read_json(&file, &mut set.problems)
                && let Some(hooks) = v.get("hooks")
            {
                let origin = HookOrigin {
                    file,
                    plugin_root: Some(plugin.root.clone()),
                    plugin_data: Some(plugin.data_dir.clone()),
                };
                set.add(hooks, &origin);
            }
        }
        if let Some(root) = root {
            self.load_project(root, &mut set);
        }
        set
    }

    /// A trusted project's hooks, as the user trusted them; an untrusted project's hooks are
    /// only named, so the user knows what waits for `synapse trust`.
    fn load_project(&self, root: &Path, set: &mut HookSet) {
        let trusted = match trust::load(&self.trust_file) {
            Ok(list) => trust::is_trusted(&list, root),
            Err(e) => {
                set.problems.push(e.to_string());
                false
            }
        };
        let pins = self.pin_file();
        for name in PROJECT_HOOK_FILES {
            let file = root.join(name);
            if !file.is_file() {
                continue;
            }
            let has_hooks = |v: &Value| v.get("hooks").is_some_and(|h| !h.is_null());
            if !trusted {
                // Read only to tell the user: nothing of it runs.
                let mut ignored = Vec::new();
                if read_json(&file, &mut ignored).is_some_and(|v| has_hooks(&v)) {
                    set.problems.push(format!(
                        "{}: its hooks do not run until you trust the project: `synapse trust {}`",
                        file.display(),
                        root.display()
                    ));
                }
                continue;
            }
            let state = trust_pins::state(&pins, &file);
            // A file pinned before copies were kept: while it matches its pin, it is the copy.
            let kept = trust_pins::trusted_content(&pins, &file).or_else(|| {
                (state == PinState::Matches)
                    .then(|| read_json(&file, &mut set.problems))
                    .flatten()
            });
            if state != PinState::Matches {
                let mut ignored = Vec::new();
                if read_json(&file, &mut ignored).is_some_and(|v| has_hooks(&v)) {
                    let then = if kept.is_some() {
                        "the hooks it had when you trusted it run instead"
                    } else {
                        "none of its hooks run"
                    };
                    set.problems.push(format!(
                        "{} changed since you trusted the project, so {then}; review it, then run \
                         `synapse trust {}`",
                        file.display(),
                        root.display()
                    ));
                }
            }
            if let Some(hooks) = kept.as_ref().and_then(|v| v.get("hooks")) {
                set.add(hooks, &origin(&file));
            }
        }
    }
}

fn origin(file: &Path) -> HookOrigin {
    HookOrigin {
        file: file.to_path_buf(),
        plugin_root: None,
        plugin_data: None,
    }
}

fn plugin_hooks_file(root: &Path) -> PathBuf {
    root.join("hooks").join("hooks.json")
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// A JSON file's content; a missing file is `None` quietly, a broken one (or a FIFO, a device,
/// one past the size cap: read without blocking, [`synapse_shared::bounded`]) is a problem.
fn read_json(file: &Path, problems: &mut Vec<String>) -> Option<Value> {
    let text = match synapse_shared::bounded::read_text(
        file,
        None,
        synapse_shared::bounded::CONFIG_MAX_BYTES,
    ) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(format!("cannot read {}: {e}", file.display()));
            return None;
        }
    };
    match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(format!(
                "{}:{}:{}: not valid JSON ({e}); its hooks do not run until it parses",
                file.display(),
                e.line(),
                e.column()
            ));
            None
        }
    }
}
