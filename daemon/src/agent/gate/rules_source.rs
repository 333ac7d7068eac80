//! Where a session's permission rules come from: the user's `settings.json` and, when its
//! folder is trusted, the project's `.synapse/settings.json` (the nearest one at or above the
//! session's folder) while it still has the content the user trusted ([`trust_pins`]). Both
//! are re-read when one of them (or the trust list, or the pins) changes, so an "always" answer
//! counts at the next command; a change by anyone else waits for `synapse trust` again.
//!
//! Rules fail closed: a file that does not parse, or has any wrong entry (a typo, a byte-order
//! mark, `"deny": "rm:*"` as a string, `"Deny"`), is not used at all. Its last good content
//! stays in force; when there never was one (first start), nothing from it counts and the gate
//! caps the mode at ask, so every command that is not a plain read asks ([`LoadedRules::fail_closed`]). Either way
//! [`LoadedRules::broken`] says so, and the gate repeats it on every turn until it is fixed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use synapse_shared::trust;

use crate::workspace::SettingsHandle;
use crate::workspace::settings::Snapshot;
use crate::workspace::trust_pins::{self, PinState};
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
    /// One line per rules file that is broken now, saying what is in force instead.
    pub broken: Vec<String>,
    /// A broken file had no last good content: no rule of it counts and the mode is capped.
    pub fail_closed: bool,
}

/// The files one session's rules come from.
#[derive(Debug, Clone)]
pub struct RuleFiles {
    /// The user's `settings.json`, read through the daemon's one settings handle.
    pub user: Arc<SettingsHandle>,
    pub trust_file: PathBuf,
    /// The session's starting folder: the project lookup starts here.
    pub cwd: PathBuf,
    /// The user's home, for `~/` in writable folders.
    pub home: PathBuf,
    /// The last good content of each file, kept across sessions.
    pub last_good: LastGood,
}

/// The last `permissions` object of each settings file that loaded without a problem.
pub type LastGood = Arc<parking_lot::Mutex<HashMap<PathBuf, Value>>>;

/// The user settings' generation and the other files' modification times.
type Stamp = (u64, Vec<Option<SystemTime>>);

/// Cached [`LoadedRules`], reloaded when a file's modification time changes.
pub struct RulesSource {
    files: RuleFiles,
    cache: parking_lot::Mutex<Option<(Stamp, Arc<LoadedRules>)>>,
}

impl RulesSource {
    pub fn new(files: RuleFiles) -> Self {
        Self {
            files,
            cache: parking_lot::Mutex::new(None),
        }
    }

    pub fn files(&self) -> &RuleFiles {
        &self.files
    }

    /// The current rules; `fresh` is true when they were (re)loaded by this call.
    pub fn get(&self) -> (Arc<LoadedRules>, bool) {
        let project = trust::find_project_settings(&self.files.cwd);
        let pins = self.pin_file();
        let user = self.files.user.snapshot();
        let times = [
            Some(self.files.trust_file.as_path()),
            Some(pins.as_path()),
            project.as_ref().map(|(_, f)| f.as_path()),
        ]
        .iter()
        .map(|p| p.and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok()))
        .collect();
        let stamp: Stamp = (user.generation, times);
        let mut cache = self.cache.lock();
        if let Some((old, rules)) = cache.as_ref()
            && *old == stamp
        {
            return (rules.clone(), false);
        }
        let loaded = Arc::new(self.load(&user, project));
        *cache = Some((stamp, loaded.clone()));
        (loaded, true)
    }

    fn load(&self, user: &Snapshot, project: Option<(PathBuf, PathBuf)>) -> LoadedRules {
        let mut out = LoadedRules::default();
        self.load_user(user, &mut out);
        if let Some((dir, file)) = project {
            let trusted = match trust::load(&self.files.trust_file) {
                Ok(list) => trust::is_trusted(&list, &dir),
                Err(e) => {
                    out.problems.push(e.to_string());
                    false
                }
            };
            // Trust counts for the content the user reviewed: a changed file waits for them,
            // while the rules they trusted (read while the file still matched) stay in force, so
            // removing a deny rule from the file (the agent, a `git pull`) takes nothing away.
            let pinned = trusted && self.pinned(&dir, &file, &mut out);
            if pinned {
                let mut problems = Vec::new();
                let value = read_permissions(&file, &mut problems);
                self.use_permissions(&file, value, problems, &mut out);
            } else if trusted {
                self.keep_trusted_rules(&file, &mut out);
            }
            out.project = Some(ProjectSettings {
                dir,
                file,
                trusted: pinned,
            });
        }
        out
    }

    fn pin_file(&self) -> PathBuf {
        let home = self.files.trust_file.parent().unwrap_or(Path::new("/"));
        trust_pins::pin_file(home)
    }

    /// Whether a trusted project's `file` still has the content the user trusted; says why not.
    fn pinned(&self, dir: &Path, file: &Path, out: &mut LoadedRules) -> bool {
        let why = match trust_pins::state(&self.pin_file(), file) {
            PinState::Matches => return true,
            PinState::Unpinned => "was not there when the folder was trusted".to_string(),
            PinState::Changed => "changed since the folder was trusted".to_string(),
            PinState::Unreadable(e) => e,
        };
        out.broken.push(format!(
            "{} {why}, so its rules do not count; review it, then run `synapse trust {}`",
            file.display(),
            dir.display()
        ));
        false
    }

    /// A trusted project's file that differs from its pin: the rules of the content the user
    /// trusted stay in force — the copy kept when it was pinned, else (pinned by an older
    /// version) the rules this daemon last read while the file still matched. A file that was
    /// not there when the folder was trusted had no rules to keep. When the trusted rules can't
    /// be known, the mode is capped (fail closed) until the user trusts the file again.
    fn keep_trusted_rules(&self, file: &Path, out: &mut LoadedRules) {
        let label = file.display().to_string();
        let pins = self.pin_file();
        let good = match trust_pins::trusted_content(&pins, file) {
            Some(content) => Some(content.get("permissions").cloned().unwrap_or(Value::Null)),
            None => self.files.last_good.lock().get(file).cloned(),
        };
        let parsed = good
            .map(|g| Parsed::from(&g, &label, &self.files.home))
            .filter(|p| p.problems.is_empty());
        match parsed {
            Some(parsed) => {
                out.broken.push(format!(
                    "{label}: until then, the rules it had when you trusted it stay in force"
                ));
                parsed.absorb_into(out);
            }
            None if trust_pins::state(&pins, file) == PinState::Unpinned => {}
            None => {
                out.broken.push(format!(
                    "{label}: the rules it had when you trusted it are not known, so every \
                     command that is not a plain read asks until then"
                ));
                out.fail_closed = true;
            }
        }
    }

    /// The user's rules, from the settings handle: a file that does not parse now leaves its
    /// last good version in force there; when none ever parsed, nothing of it counts.
    fn load_user(&self, user: &Snapshot, out: &mut LoadedRules) {
        let file = self.files.user.path();
        if let Some(error) = &user.error {
            out.problems.push(error.clone());
            if !user.from_file {
                out.broken.push(no_good_version(file));
                out.fail_closed = true;
                return;
            }
            out.broken.push(last_good_in_force(file));
        }
        let value = user.settings.permissions.clone();
        self.use_permissions(file, value, Vec::new(), out);
    }

    /// Uses one file's `permissions` only when it has no problem at all, else the last good
    /// `permissions` read from that file.
    fn use_permissions(
        &self,
        file: &Path,
        value: Value,
        mut problems: Vec<String>,
        out: &mut LoadedRules,
    ) {
        let label = file.display().to_string();
        let parsed = Parsed::from(&value, &label, &self.files.home);
        problems.extend(parsed.problems.iter().map(|p| format!("{label}: {p}")));
        let mut last_good = self.files.last_good.lock();
        if problems.is_empty() {
            last_good.insert(file.to_path_buf(), value);
            parsed.absorb_into(out);
            return;
        }
        out.problems.extend(problems);
        match last_good.get(file) {
            Some(good) => {
                let line = last_good_in_force(file);
                if !out.broken.contains(&line) {
                    out.broken.push(line);
                }
                Parsed::from(good, &label, &self.files.home).absorb_into(out);
            }
            None => {
                out.broken.push(no_good_version(file));
                out.fail_closed = true;
            }
        }
    }
}

fn last_good_in_force(file: &Path) -> String {
    format!(
        "{} is broken, so its last good rules stay in force until it is fixed",
        file.display()
    )
}

fn no_good_version(file: &Path) -> String {
    format!(
        "{} is broken and no good version of it was read yet: none of its rules count, and \
         every command that is not a plain read asks, until it is fixed",
        file.display()
    )
}

/// What one `permissions` object says, with its problems.
struct Parsed {
    rules: RuleSet,
    default_mode: Option<Mode>,
    writable_dirs: Vec<PathBuf>,
    problems: Vec<String>,
}

impl Parsed {
    fn from(permissions: &Value, label: &str, home: &Path) -> Self {
        let (rules, mut problems) = RuleSet::from_json(permissions, label);
        let default_mode = rules::default_mode(permissions, &mut problems);
        let writable_dirs = rules::writable_dirs(permissions, home, &mut problems);
        Self {
            rules,
            default_mode,
            writable_dirs,
            problems,
        }
    }

    fn absorb_into(self, out: &mut LoadedRules) {
        out.rules.merge(self.rules);
        if self.default_mode.is_some() {
            out.default_mode = self.default_mode;
        }
        out.writable_dirs.extend(self.writable_dirs);
    }
}

/// The `permissions` object of a settings file (null when missing or unreadable).
fn read_permissions(file: &Path, problems: &mut Vec<String>) -> Value {
    if let Some(why) = synapse_shared::paths::loose_permissions(file) {
        problems.push(format!("{} is not used: {why}", file.display()));
        return Value::Null;
    }
    let text = match synapse_shared::bounded::read_text(
        file,
        None,
        synapse_shared::bounded::CONFIG_MAX_BYTES,
    ) {
        Ok(t) if t.starts_with('\u{feff}') => {
            problems.push(format!(
                "{}:1:1: the file starts with a byte-order mark; save it as UTF-8 without BOM",
                file.display()
            ));
            return Value::Null;
        }
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
                "{}:{}:{}: {e}",
                file.display(),
                e.line(),
                e.column()
            ));
            Value::Null
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_permissions::Verdict;

    struct Project {
        _dir: tempfile::TempDir,
        home: PathBuf,
        root: PathBuf,
        file: PathBuf,
    }

    /// A trusted project whose settings deny `mcp:fs:delete_*`, pinned as it reads now.
    fn trusted_project() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("synapse");
        let root = dir.path().join("proj");
        let file = root.join(trust::PROJECT_SETTINGS);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            &file,
            r#"{"permissions": {"mcp": {"deny": ["mcp:fs:delete_*"]}}}"#,
        )
        .unwrap();
        trust::add(&home.join("trusted.json"), &root).unwrap();
        trust_pins::pin(&trust_pins::pin_file(&home), &file).unwrap();
        Project {
            _dir: dir,
            home,
            root,
            file,
        }
    }

    /// A source as a freshly started daemon has it: nothing read yet.
    fn fresh_source(p: &Project) -> RulesSource {
        RulesSource::new(RuleFiles {
            user: Arc::new(SettingsHandle::open(p.home.join("settings.json"))),
            trust_file: p.home.join("trusted.json"),
            cwd: p.root.clone(),
            home: p.home.clone(),
            last_good: LastGood::default(),
        })
    }

    fn denies_delete(loaded: &LoadedRules) -> bool {
        matches!(
            loaded.rules.mcp_verdict("mcp:fs:delete_file"),
            Some((Verdict::Deny, _))
        )
    }

    #[test]
    fn a_trusted_deny_rule_taken_out_of_the_file_holds_after_a_restart() {
        let p = trusted_project();
        std::fs::write(&p.file, r#"{"permissions": {}}"#).unwrap();
        let (loaded, _) = fresh_source(&p).get();
        assert!(denies_delete(&loaded), "{loaded:?}");
        assert!(!loaded.fail_closed);
        assert!(
            loaded
                .broken
                .iter()
                .any(|b| b.contains("changed since the folder was trusted")),
            "{:?}",
            loaded.broken
        );
    }

    #[test]
    fn a_changed_file_whose_trusted_rules_are_unknown_caps_the_mode() {
        let p = trusted_project();
        std::fs::write(&p.file, r#"{"permissions": {}}"#).unwrap();
        // Pinned by a version that kept no copy of the trusted content.
        std::fs::remove_dir_all(p.home.join("trusted_settings")).unwrap();
        let (loaded, _) = fresh_source(&p).get();
        assert!(loaded.fail_closed, "{loaded:?}");
        // A file that did not exist when the folder was trusted had no rules to keep.
        let q = trusted_project();
        std::fs::remove_file(trust_pins::pin_file(&q.home)).unwrap();
        std::fs::write(&q.file, r#"{"permissions": {"defaultMode": "yolo"}}"#).unwrap();
        let (loaded, _) = fresh_source(&q).get();
        assert!(!loaded.fail_closed, "{loaded:?}");
        assert_eq!(loaded.default_mode, None, "the new file does not count");
    }
}
