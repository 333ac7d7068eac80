//! The daemon's shared state: paths, settings, start time and the shutdown token. Subsystems
//! (shell sessions, skills, MCP, agents) hang off this as they land; services get an `Arc` of it.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use synapse_shared::paths::Paths;
use synapse_shared::settings::Settings;
use tokio_util::sync::CancellationToken;

use crate::skills::{SkillStore, SkillWatcher, ToolCatalog};

pub struct DaemonState {
    pub paths: Paths,
    pub started: Instant,
    settings: RwLock<Settings>,
    /// Why settings.json could not be used ("path:line:col: message"); the daemon runs on
    /// defaults meanwhile and never rewrites the file.
    settings_error: RwLock<Option<String>>,
    /// Cancelled to stop the daemon (signal or `Shutdown`).
    pub shutdown: CancellationToken,
    /// Every skill, its wrappers and index.json, kept current by `_skill_watcher`.
    pub skills: Arc<SkillStore>,
    /// Every extension command for `tools search` (skills now; MCP adds itself as a source).
    pub tools: ToolCatalog,
    _skill_watcher: Option<SkillWatcher>,
}

impl DaemonState {
    pub fn new(paths: Paths, settings: Result<Settings, String>) -> Self {
        let (settings, error) = match settings {
            Ok(s) => (s, None),
            Err(e) => (Settings::default(), Some(e)),
        };
        let (skills, skill_watcher) = crate::skills::start(&paths);
        let tools = ToolCatalog::new();
        tools.add_source(skills.clone());
        Self {
            paths,
            started: Instant::now(),
            settings: RwLock::new(settings),
            settings_error: RwLock::new(error),
            shutdown: CancellationToken::new(),
            skills,
            tools,
            _skill_watcher: skill_watcher,
        }
    }

    /// A snapshot of the current settings.
    pub fn settings(&self) -> Settings {
        match self.settings.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn settings_error(&self) -> Option<String> {
        match self.settings_error.read() {
            Ok(e) => e.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the in-memory settings after a successful write or re-read.
    pub fn set_settings(&self, settings: Settings) {
        if let Ok(mut s) = self.settings.write() {
            *s = settings;
        }
        if let Ok(mut e) = self.settings_error.write() {
            *e = None;
        }
    }
}
