//! Rewrites of Claude Code's plugin records — `~/.claude/settings.json`,
//! `plugins/installed_plugins.json`, `plugins/known_marketplaces.json` — the way Claude Code
//! writes them, without losing what another writer (a running Claude Code, the user's editor)
//! put there: each change is a read-modify-write of only the keys it owns, under an exclusive
//! lock, renamed into place atomically. A file that does not parse is never reset: the change
//! fails naming it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use synapse_shared::claude_plugins::{self, INSTALLED_FILE, MARKETPLACES_FILE};

use super::PluginError;

/// The lock every rewrite here holds, below `~/.claude/plugins/`.
const LOCK_FILE: &str = ".synapse-records.lock";

/// Claude Code's records below one home folder.
#[derive(Debug, Clone)]
pub struct Records {
    pub home: PathBuf,
}

impl Records {
    pub fn dir(&self) -> PathBuf {
        claude_plugins::plugins_dir(&self.home)
    }

    pub fn settings(&self) -> PathBuf {
        claude_plugins::user_settings(&self.home)
    }

    pub fn installed(&self) -> PathBuf {
        self.dir().join(INSTALLED_FILE)
    }

    pub fn marketplaces(&self) -> PathBuf {
        self.dir().join(MARKETPLACES_FILE)
    }

    /// `file` as a JSON object (`{}` when missing).
    pub fn read(&self, file: &Path) -> Result<Map<String, Value>, PluginError> {
        match claude_plugins::read_json(file).map_err(PluginError::Record)? {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(PluginError::Record(format!(
                "{} is not a JSON object; fix it by hand (it is left as it is)",
                file.display()
            ))),
        }
    }

    /// Applies `change` to `file` under the lock and writes it back atomically.
    pub fn update(
        &self,
        file: &Path,
        change: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), PluginError> {
        let dir = self.dir();
        std::fs::create_dir_all(&dir).map_err(|e| PluginError::io(&dir, e))?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PluginError::io(parent, e))?;
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| PluginError::io(&lock_path, e))?;
        lock.lock().map_err(|e| PluginError::io(&lock_path, e))?;
        let mut doc = self.read(file)?;
        change(&mut doc);
        let mut text = serde_json::to_string_pretty(&Value::Object(doc))
            .map_err(|e| PluginError::Record(e.to_string()))?;
        text.push('\n');
        synapse_shared::atomic::write_atomic(file, text.as_bytes())
            .map_err(|e| PluginError::io(file, e))
    }

    /// `enabledPlugins.<key>` = `on` in the user's settings.
    pub fn set_enabled(&self, key: &str, on: bool) -> Result<(), PluginError> {
        self.update(&self.settings(), |doc| {
            in_object(doc, "enabledPlugins", |m| {
                m.insert(key.to_string(), Value::Bool(on));
            });
        })
    }

    /// Records a marketplace in `known_marketplaces.json` and the settings'
    /// `extraKnownMarketplaces`, as `claude plugin marketplace add` does.
    pub fn add_marketplace(
        &self,
        name: &str,
        source: &Value,
        location: &Path,
    ) -> Result<(), PluginError> {
        let now = now();
        self.update(&self.marketplaces(), |doc| {
            doc.insert(
                name.to_string(),
                json!({
                    "source": source,
                    "installLocation": location.display().to_string(),
                    "lastUpdated": now,
                }),
            );
        })?;
        self.update(&self.settings(), |doc| {
            in_object(doc, "extraKnownMarketplaces", |m| {
                m.insert(name.to_string(), json!({ "source": source }));
            });
        })
    }

    /// Records an install (or an update) of `key` at `path`, keeping its first install time.
    pub fn record_install(&self, key: &str, path: &Path, version: &str) -> Result<(), PluginError> {
        let now = now();
        self.update(&self.installed(), |doc| {
            doc.entry("version").or_insert(json!(2));
            in_object(doc, "plugins", |plugins| {
                let installed_at = plugins
                    .get(key)
                    .and_then(|v| match v {
                        Value::Array(list) => list.last(),
                        other => Some(other),
                    })
                    .and_then(|e| e.get("installedAt"))
                    .cloned()
                    .unwrap_or_else(|| json!(now));
                plugins.insert(
                    key.to_string(),
                    json!([{
                        "scope": "user",
                        "installPath": path.display().to_string(),
                        "version": version,
                        "installedAt": installed_at,
                        "lastUpdated": now,
                    }]),
                );
            });
        })
    }
}

/// Applies `f` to `doc.<key>` as an object, created (or replaced, when it is not one) as needed.
fn in_object(doc: &mut Map<String, Value>, key: &str, f: impl FnOnce(&mut Map<String, Value>)) {
    if !doc.get(key).is_some_and(Value::is_object) {
        doc.insert(key.to_string(), Value::Object(Map::new()));
    }
    if let Some(m) = doc.get_mut(key).and_then(Value::as_object_mut) {
        f(m);
    }
}

/// Now, as Claude Code writes times (`2026-12-02T01:05:44.435Z`).
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_keep_what_others_wrote_and_bad_files_are_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let r = Records {
            home: t.path().to_path_buf(),
        };
        std::fs::create_dir_all(t.path().join(".claude")).unwrap();
        std::fs::write(
            r.settings(),
            r#"{"model":"opus","enabledPlugins":{"a@m":true}}"#,
        )
        .unwrap();
        r.set_enabled("b@m", false).unwrap();
        let doc = r.read(&r.settings()).unwrap();
        assert_eq!(doc["model"], "opus");
        assert_eq!(doc["enabledPlugins"], json!({"a@m": true, "b@m": false}));

        r.record_install("b@m", Path::new("/c/b/1.0.0"), "1.0.0")
            .unwrap();
        let first = r.read(&r.installed()).unwrap()["plugins"]["b@m"][0]["installedAt"].clone();
        r.record_install("b@m", Path::new("/c/b/1.1.0"), "1.1.0")
            .unwrap();
        let doc = r.read(&r.installed()).unwrap();
        assert_eq!(doc["version"], 2);
        assert_eq!(doc["plugins"]["b@m"][0]["version"], "1.1.0");
        assert_eq!(doc["plugins"]["b@m"][0]["installedAt"], first);

        std::fs::write(r.settings(), "{oops").unwrap();
        let err = r.set_enabled("b@m", true).unwrap_err().to_string();
        assert!(err.contains("settings.json is not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(r.settings()).unwrap(), "{oops");
    }
}
