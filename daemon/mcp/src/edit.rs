//! `synapse mcp add|remove`: one server entry added to or removed from a JSON config file (the
//! user's `$SYNAPSE_HOME/mcp/mcp_servers.json`, or a project's `.mcp.json`), as `claude mcp add`
//! does. The edit is a locked read-modify-write (an exclusive `flock` on the file's folder, then
//! an atomic rename), keeps every other key and entry as it was, and refuses a file that does not
//! parse rather than overwrite it.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The keys a config file may list its servers under; new files use the first.
const SERVER_KEYS: [&str; 2] = ["mcpServers", "servers"];

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error(
        "invalid server name {0:?}: use letters, digits, `-` and `_` (it becomes part of mcp:<server>:<tool>)"
    )]
    BadName(String),
    #[error("{path} is not valid JSON ({reason}); fix it first, nothing was changed", path = .path.display())]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path} already has a server {name:?}; remove it first (`synapse mcp remove {name}`)", path = .path.display())]
    Exists { path: PathBuf, name: String },
    #[error("no server {name:?} in {path}", path = .path.display())]
    Missing { path: PathBuf, name: String },
    #[error("cannot {action} {path}: {source}", path = .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

/// Checks a server name the way wrappers need it.
pub fn check_name(name: &str) -> Result<(), EditError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(EditError::BadName(name.to_string()))
    }
}

/// Adds `name` → `entry` to `file` (created with its folder when missing).
pub fn add(file: &Path, name: &str, entry: Value) -> Result<(), EditError> {
    check_name(name)?;
    edit(file, |servers| {
        if servers.contains_key(name) {
            return Err(EditError::Exists {
                path: file.to_path_buf(),
                name: name.to_string(),
            });
        }
        servers.insert(name.to_string(), entry);
        Ok(())
    })
}

/// Removes `name` from `file`.
pub fn remove(file: &Path, name: &str) -> Result<(), EditError> {
    edit(file, |servers| match servers.shift_remove(name) {
        Some(_) => Ok(()),
        None => Err(EditError::Missing {
            path: file.to_path_buf(),
            name: name.to_string(),
        }),
    })
}

/// Whether `file` names a server `name` (a missing or unreadable file names none).
pub fn has(file: &Path, name: &str) -> bool {
    entry(file, name).is_some()
}

/// The entry of server `name` in `file`, as written.
pub fn entry(file: &Path, name: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(&read_config(file).ok()?).ok()?;
    SERVER_KEYS
        .iter()
        .find_map(|k| v.get(k).and_then(|s| s.get(name)).cloned())
}

/// A configuration file's text: a regular file (a FIFO or device at its place is refused by
/// name, never waited on), bounded.
fn read_config(file: &Path) -> io::Result<String> {
    synapse_shared::bounded::read_text(file, None, synapse_shared::bounded::CONFIG_MAX_BYTES)
}

fn edit(
    file: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(), EditError>,
) -> Result<(), EditError> {
    let io_err = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| EditError::Io {
            action,
            path,
            source,
        }
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    let folder = std::fs::File::open(dir).map_err(io_err("open", dir))?;
    folder.lock().map_err(io_err("lock", dir))?;
    let mut tree =
        match read_config(file) {
            Ok(text) if text.trim().is_empty() => Value::Object(Map::new()),
            Ok(text) => serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}'))
                .map_err(|e| EditError::Corrupt {
                    path: file.to_path_buf(),
                    reason: e.to_string(),
                })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Value::Object(Map::new()),
            Err(e) => return Err(io_err("read", file)(e)),
        };
    let Some(root) = tree.as_object_mut() else {
        return Err(EditError::Corrupt {
            path: file.to_path_buf(),
            reason: "the top level is not a JSON object".into(),
        });
    };
    let key = SERVER_KEYS
        .iter()
        .find(|k| root.get(**k).is_some_and(Value::is_object))
        .copied()
        .unwrap_or(SERVER_KEYS[0]);
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(EditError::Corrupt {
            path: file.to_path_buf(),
            reason: format!("`{key}` is not an object"),
        });
    };
    change(servers)?;
    let mut text = serde_json::to_string_pretty(&tree).unwrap_or_default();
    text.push('\n');
    // Entries may hold secrets (env values, headers): owner-only.
    synapse_shared::atomic::write_atomic_mode(file, text.as_bytes(), 0o600)
        .map_err(io_err("write", file))?;
    drop(folder);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn add_keeps_what_was_there_and_remove_takes_only_the_one() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("mcp/mcp_servers.json");
        add(&file, "fs", json!({"command": "npx", "args": ["-y", "x"]})).unwrap();
        std::fs::write(
            &file,
            r#"{"comment": "mine", "mcpServers": {"fs": {"command": "npx"}}}"#,
        )
        .unwrap();
        add(&file, "web", json!({"type": "http", "url": "http://h/mcp"})).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["comment"], "mine");
        assert_eq!(v["mcpServers"]["web"]["url"], "http://h/mcp");
        assert!(matches!(
            add(&file, "web", json!({})),
            Err(EditError::Exists { .. })
        ));
        remove(&file, "fs").unwrap();
        assert!(!has(&file, "fs") && has(&file, "web"));
        assert!(matches!(
            remove(&file, "fs"),
            Err(EditError::Missing { .. })
        ));
    }

    #[test]
    fn a_broken_file_is_never_overwritten_and_bad_names_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join(".mcp.json");
        std::fs::write(&file, "{ not json").unwrap();
        assert!(matches!(
            add(&file, "x", json!({})),
            Err(EditError::Corrupt { .. })
        ));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
        assert!(matches!(
            add(&t.path().join("a.json"), "bad name", json!({})),
            Err(EditError::BadName(_))
        ));
    }

    #[test]
    fn vs_code_files_keep_their_servers_key() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("mcp.json");
        std::fs::write(&file, r#"{"servers": {}}"#).unwrap();
        add(&file, "x", json!({"command": "x"})).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(v.get("mcpServers").is_none());
        assert_eq!(v["servers"]["x"]["command"], "x");
    }
}
