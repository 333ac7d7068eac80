//! Where a session's permission rules come from: the user's `settings.json` and, when its
//! folder is trusted, the project's `.synapse/settings.json` (the nearest one at or above the
//! session's folder). Both are re-read when one of them (or the trust list) changes, so an
//! "always" answer or a hand edit counts at the next command. Problems in a file (a bad pattern,
//! a wrong type) are reported and skip only the entry that is wrong.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use synapse_shared::trust;

use synapse_permissions::{Mode, RuleSet, rules};

/// The project settings file found for a session, and whether it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectSettings {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub trusted: bool,
}

/// Rules and settings read from the files, with what was wrong in them.
#[derive(Debug, Clone, Default)]
pub struct LoadedRules {
    pub rules: RuleSet,
    pub default_mode: Option<Mode>,
    pub writable_dirs: Vec<PathBuf>,
    pub project: Option<ProjectSettings>,
    pub problems: Vec<String>,
}

/// The files one session's rules come from.
#[derive(Debug, Clone)]
pub struct RuleFiles {
    pub user_settings: PathBuf,
    pub trust_file: PathBuf,
    /// The session's starting folder: the project lookup starts here.
    pub cwd: PathBuf,
    /// The user's home, for `~/` in writable folders.
    pub home: PathBuf,
}

type Stamp = Vec<Option<SystemTime>>;

/// Cached [`LoadedRules`], reloaded when a file's modification time changes.
pub struct RulesSource {
    files: RuleFiles,
    cache: std::sync::Mutex<Option<(Stamp, Arc<LoadedRules>)>>,
}

impl RulesSource {
    pub fn new(files: RuleFiles) -> Self {
        Self {
            files,
            cache: std::sync::Mutex::new(None),
        }
    }

    pub fn files(&self) -> &RuleFiles {
        &self.files
    }

    /// The current rules; `fresh` is true when they were (re)loaded by this call.
    pub fn get(&self) -> (Arc<LoadedRules>, bool) {
        let project = trust::find_project_settings(&self.files.cwd);
        let stamp: Stamp = [
            Some(self.files.user_settings.as_path()),
            Some(self.files.trust_file.as_path()),
            project.as_ref().map(|(_, f)| f.as_path()),
        ]
        .iter()
        .map(|p| p.and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok()))
        .collect();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((old, rules)) = cache.as_ref()
            && *old == stamp
        {
            return (rules.clone(), false);
        }
        let loaded = Arc::new(self.load(project));
        *cache = Some((stamp, loaded.clone()));
        (loaded, true)
    }

    fn load(&self, project: Option<(PathBuf, PathBuf)>) -> LoadedRules {
        let mut out = LoadedRules::default();
        let user = read_permissions(&self.files.user_settings, &mut out.problems);
        let label = self.files.user_settings.display().to_string();
        self.absorb(&user, &label, &mut out);
        if let Some((dir, file)) = project {
            let trusted = match trust::load(&self.files.trust_file) {
                Ok(list) => trust::is_trusted(&list, &dir),
                Err(e) => {
                    out.problems.push(e.to_string());
                    false
                }
            };
            if trusted {
                let value = read_permissions(&file, &mut out.problems);
                self.absorb(&value, &file.display().to_string(), &mut out);
            }
            out.project = Some(ProjectSettings { dir, file, trusted });
        }
        out
    }

    fn absorb(&self, permissions: &Value, label: &str, out: &mut LoadedRules) {
        let (set, problems) = RuleSet::from_json(permissions, label);
        out.rules.merge(set);
        out.problems
            .extend(problems.into_iter().map(|p| format!("{label}: {p}")));
        let mut problems = Vec::new();
        if let Some(mode) = rules::default_mode(permissions, &mut problems) {
            out.default_mode = Some(mode);
        }
        out.writable_dirs.extend(rules::writable_dirs(
            permissions,
            &self.files.home,
            &mut problems,
        ));
        out.problems
            .extend(problems.into_iter().map(|p| format!("{label}: {p}")));
    }
}

/// The `permissions` object of a settings file (null when missing or unreadable).
fn read_permissions(file: &Path, problems: &mut Vec<String>) -> Value {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Value::Null,
        Err(e) => {
            problems.push(format!("cannot read {}: {e}", file.display()));
            return Value::Null;
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => v.get("permissions").cloned().unwrap_or(Value::Null),
        Err(e) => {
            problems.push(format!(
                "{}:{}:{}: {e}; its permission rules are ignored until it is fixed",
                file.display(),
                e.line(),
                e.column()
            ));
            Value::Null
        }
    }
}
