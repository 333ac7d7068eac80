//! `settings.json`: the user's configuration. Read with errors that name file, line, column and
//! key; created with defaults on first run; rewritten atomically through [`update`], which edits
//! the JSON tree in place so keys Synapse does not know survive. A file that cannot be parsed is
//! reported and never overwritten. Every update holds an exclusive `flock` on the file's folder
//! from the read to the rename, so concurrent writers (several daemons' threads, a client) never
//! lose each other's edits; the folder is locked rather than the file because the rename
//! replaces the file's inode.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::atomic::write_atomic_mode;

/// Default for `skillEnhance.maxEnhanceContextChars`.
pub const MAX_ENHANCE_CONTEXT_CHARS_DEFAULT: usize = 50_000;

/// Why a settings file could not be read, used or rewritten.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The text is not valid JSON (or starts with a byte-order mark), or a known key holds a
    /// value of the wrong type.
    #[error("{path}:{line}:{column}: {message}", path = .path.display())]
    Parse {
        /// The settings file.
        path: PathBuf,
        /// 1-based line of the fault.
        line: usize,
        /// 1-based column of the fault.
        column: usize,
        /// What is wrong, prefixed with the key path (`skillEnhance.autoEnhance: …`) when known.
        message: String,
    },
    /// The file exists but could not be read: an I/O error, not a regular file, not UTF-8, or
    /// over [`crate::bounded::CONFIG_MAX_BYTES`].
    #[error("cannot read {path}: {source}", path = .path.display())]
    Read {
        /// The settings file.
        path: PathBuf,
        /// What the OS or the check answered.
        source: io::Error,
    },
    /// The file (first-run defaults or a rewrite) could not be written; an existing file is
    /// left as it was.
    #[error("cannot write {path}: {source}", path = .path.display())]
    Write {
        /// The settings file.
        path: PathBuf,
        /// What the OS answered.
        source: io::Error,
    },
    /// The file is valid JSON but its top level is not an object (`[]`, `null`, a string…).
    #[error("{path} must hold a JSON object at the top level", path = .path.display())]
    NotAnObject {
        /// The settings file.
        path: PathBuf,
    },
    /// The folder lock that serialises updates could not be taken.
    #[error("cannot lock {path} for an update: {source}", path = .path.display())]
    Lock {
        /// The folder that was to be locked (the settings file's parent).
        path: PathBuf,
        /// What the OS answered.
        source: io::Error,
    },
    /// Another user could change the file ([`crate::paths::loose_permissions`]), so it is
    /// ignored rather than trusted.
    #[error("{path} is not used: {why}", path = .path.display())]
    Unsafe {
        /// The settings file.
        path: PathBuf,
        /// What is loose and the command that fixes it.
        why: String,
    },
}

/// The typed view of settings.json. Unknown keys are kept in `other` so a rewrite loses nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// The model id to ask for (`SYNAPSE_MODEL` overrides it); `None` or blank uses the
    /// provider's default.
    pub model: Option<String>,
    /// Which LLM API to talk to (`anthropic`, `openai`, `ollama`…; `SYNAPSE_PROVIDER` overrides
    /// it); `None` or blank picks one from the API keys and base URLs that are set.
    pub provider: Option<String>,
    /// Variables such as `ANTHROPIC_API_KEY`; the process environment overrides them.
    pub env: BTreeMap<String, String>,
    /// `skillEnhance`: whether and how the skill sub-agent reviews finished turns.
    pub skill_enhance: SkillEnhance,
    /// Permission rules; each subsystem reads its own part.
    pub permissions: Value,
    /// Every other top-level key (`shell`, `mcp`, `llm`…), kept as written for the subsystems
    /// that read them and for a rewrite.
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

/// `skillEnhance` in settings.json: self-growth, where a skill sub-agent reads the end of a
/// finished turn's session log and may create or improve a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SkillEnhance {
    /// `autoEnhance`: run the sub-agent after every turn that completed normally (costs extra
    /// tokens per turn); off by default.
    pub auto_enhance: bool,
    /// `maxEnhanceContextChars`: how many characters of the session log's end the sub-agent
    /// reads; default [`MAX_ENHANCE_CONTEXT_CHARS_DEFAULT`].
    pub max_enhance_context_chars: usize,
    /// Keys of `skillEnhance` Synapse does not know, kept so a rewrite loses nothing.
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            model: None,
            provider: None,
            env: BTreeMap::new(),
            skill_enhance: SkillEnhance::default(),
            permissions: Value::Object(serde_json::Map::new()),
            other: serde_json::Map::new(),
        }
    }
}

impl Default for SkillEnhance {
    fn default() -> Self {
        Self {
            auto_enhance: false,
            max_enhance_context_chars: MAX_ENHANCE_CONTEXT_CHARS_DEFAULT,
            other: serde_json::Map::new(),
        }
    }
}

/// The file written on first run: every documented key with its default, so users can see them.
pub fn default_file_contents() -> String {
    let doc = serde_json::json!({
        "model": null,
        "provider": null,
        "env": {},
        "skillEnhance": {
            "autoEnhance": false,
            "maxEnhanceContextChars": MAX_ENHANCE_CONTEXT_CHARS_DEFAULT
        },
        "permissions": {}
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// Reads settings from `path`; a missing file yields the defaults.
pub fn load(path: &Path) -> Result<Settings, SettingsError> {
    if let Some(why) = crate::paths::loose_permissions(path) {
        return Err(SettingsError::Unsafe {
            path: path.to_path_buf(),
            why,
        });
    }
    match crate::bounded::read_text(path, None, crate::bounded::CONFIG_MAX_BYTES) {
        Ok(text) => parse(path, &text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(source) => Err(SettingsError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses settings text; errors carry the file, line, column and the key that was wrong.
pub fn parse(path: &Path, text: &str) -> Result<Settings, SettingsError> {
    if text.starts_with('\u{feff}') {
        return Err(SettingsError::Parse {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "the file starts with a byte-order mark; save it as UTF-8 without BOM".into(),
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(path, &e, None))?;
    if !value.is_object() {
        return Err(SettingsError::NotAnObject {
            path: path.to_path_buf(),
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let key = e.path().to_string();
        json_error(path, e.inner(), Some(key))
    })
}

/// Creates the file with defaults when it does not exist. An existing file is never touched.
pub fn ensure_exists(path: &Path) -> Result<bool, SettingsError> {
    if path.exists() {
        return Ok(false);
    }
    write_atomic_mode(path, default_file_contents().as_bytes(), 0o600).map_err(|source| {
        SettingsError::Write {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(true)
}

/// Edits the JSON tree of settings.json in place and rewrites it atomically. Refuses (and leaves
/// the file alone) when the current file is corrupt or the edit produces invalid settings.
pub fn update(path: &Path, edit: impl FnOnce(&mut Value)) -> Result<Settings, SettingsError> {
    let _lock = lock_folder(path)?;
    let text = match crate::bounded::read_text(path, None, crate::bounded::CONFIG_MAX_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => default_file_contents(),
        Err(source) => {
            return Err(SettingsError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse(path, &text)?;
    let mut tree: Value = serde_json::from_str(&text).map_err(|e| json_error(path, &e, None))?;
    edit(&mut tree);
    let mut new_text = serde_json::to_string_pretty(&tree).unwrap_or_default();
    new_text.push('\n');
    let settings = parse(path, &new_text)?;
    write_atomic_mode(path, new_text.as_bytes(), 0o600).map_err(|source| SettingsError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(settings)
}

/// Holds an exclusive advisory lock on the folder of `path` until dropped (released on close).
fn lock_folder(path: &Path) -> Result<std::fs::File, SettingsError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let lock_err = |source| SettingsError::Lock {
        path: dir.to_path_buf(),
        source,
    };
    let folder = std::fs::File::open(dir).map_err(lock_err)?;
    folder.lock().map_err(lock_err)?;
    Ok(folder)
}

/// Sets `tree[a][b]...` = value, creating objects on the way (replacing non-objects).
pub fn set_key(tree: &mut Value, keys: &[&str], value: Value) {
    let mut node = tree;
    for (i, key) in keys.iter().enumerate() {
        if !node.is_object() {
            *node = Value::Object(serde_json::Map::new());
        }
        let Value::Object(map) = node else { return };
        if i + 1 == keys.len() {
            map.insert((*key).to_string(), value);
            return;
        }
        node = map
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
}

fn json_error(path: &Path, e: &serde_json::Error, key: Option<String>) -> SettingsError {
    let full = e.to_string();
    // serde_json appends " at line L column C"; we print the position in front instead.
    let message = match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    };
    let message = match key {
        Some(k) if !k.is_empty() && k != "." => format!("{k}: {message}"),
        _ => message,
    };
    SettingsError::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn wrong_type_names_file_line_column_and_key() {
        let text = "{\n  \"skillEnhance\": {\n    \"autoEnhance\": \"yes\"\n  }\n}\n";
        let err = parse(Path::new("/h/settings.json"), text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/h/settings.json:3:"), "{err}");
        assert!(err.contains("skillEnhance.autoEnhance"), "{err}");
        assert!(err.contains("expected a boolean"), "{err}");
    }

    #[test]
    fn a_byte_order_mark_is_named() {
        let err = parse(Path::new("s.json"), "\u{feff}{}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.json:1:1: "), "{err}");
        assert!(err.contains("byte-order mark"), "{err}");
    }

    #[test]
    fn syntax_error_has_position() {
        let err = parse(Path::new("s.json"), "{\n  \"model\": ,\n}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.json:2:12: "), "{err}");
    }

    #[test]
    fn defaults_roundtrip_and_unknown_keys_survive_update() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        assert!(ensure_exists(&p).unwrap());
        assert!(!ensure_exists(&p).unwrap());
        assert_eq!(load(&p).unwrap(), Settings::default());
        update(&p, |t| set_key(t, &["mine"], Value::from(7))).unwrap();
        let s = update(&p, |t| {
            set_key(t, &["skillEnhance", "autoEnhance"], Value::from(true))
        })
        .unwrap();
        assert!(s.skill_enhance.auto_enhance);
        assert_eq!(s.other.get("mine"), Some(&Value::from(7)));
    }

    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    update(&p, |t| set_key(t, &["k", &format!("s{i}")], Value::from(i))).unwrap();
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let s = load(&p).unwrap();
        assert_eq!(s.other["k"].as_object().unwrap().len(), 16);
    }

    #[test]
    fn corrupt_file_is_never_overwritten_by_update() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        std::fs::write(&p, "{ not json").unwrap();
        assert!(update(&p, |t| set_key(t, &["model"], Value::from("m"))).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{ not json");
    }
}

#[cfg(test)]
#[path = "settings_props.rs"]
mod props;
