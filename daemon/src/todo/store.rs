//! Where a session's task list lives: `$SYNAPSE_HOME/sessions/<session>/todo.json`, beside the
//! session's other files, so it survives a daemon restart and a resume. Written atomically; a
//! file that cannot be read is reported with its path and left alone.

use std::io;
use std::path::{Path, PathBuf};

use super::list::TodoList;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the session name {0:?} cannot be used as a folder name")]
    BadSession(String),
    #[error("cannot read {path}: {source}", path = .path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "{path}:{line}:{column}: {message}; fix or delete the file",
        path = .path.display()
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("cannot write {path}: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// Told of every list saved: the session's id and its new list.
pub type OnSave = std::sync::Arc<dyn Fn(&str, &TodoList) + Send + Sync>;

#[derive(Clone)]
pub struct TodoStore {
    sessions_dir: PathBuf,
    on_save: Option<OnSave>,
}

impl std::fmt::Debug for TodoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TodoStore")
            .field("sessions_dir", &self.sessions_dir)
            .finish_non_exhaustive()
    }
}

impl TodoStore {
    pub fn new(sessions_dir: PathBuf) -> Self {
        Self {
            sessions_dir,
            on_save: None,
        }
    }

    /// Calls `on_save` after each list is saved (the assembly sends it to the session's
    /// clients as its plan).
    pub fn with_on_save(mut self, on_save: OnSave) -> Self {
        self.on_save = Some(on_save);
        self
    }

    /// `<sessions>/<session>/todo.json`; names that would leave the folder are refused.
    pub fn path(&self, session: &str) -> Result<PathBuf, StoreError> {
        let plain = !session.is_empty()
            && !session.starts_with('.')
            && !session.contains(['/', '\\', '\0']);
        if !plain {
            return Err(StoreError::BadSession(session.to_string()));
        }
        Ok(self.sessions_dir.join(session).join("todo.json"))
    }

    /// The session's list; empty when it has none yet.
    pub fn load(&self, session: &str) -> Result<TodoList, StoreError> {
        let path = self.path(session)?;
        load_file(&path)
    }

    pub fn save(&self, session: &str, list: &TodoList) -> Result<(), StoreError> {
        let path = self.path(session)?;
        let write_err = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let mut text = serde_json::to_string_pretty(list)
            .map_err(|e| write_err(io::Error::new(io::ErrorKind::InvalidData, e)))?;
        text.push('\n');
        synapse_shared::atomic::write_atomic(&path, text.as_bytes()).map_err(write_err)?;
        if let Some(on_save) = &self.on_save {
            on_save(session, list);
        }
        Ok(())
    }
}

fn load_file(path: &Path) -> Result<TodoList, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(TodoList::default()),
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_and_corrupt_files_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = TodoStore::new(dir.path().to_path_buf());
        assert!(store.load("s1").unwrap().is_empty());
        let mut list = TodoList::default();
        list.add(&["one".into(), "two".into()]).unwrap();
        list.start("2").unwrap();
        store.save("s1", &list).unwrap();
        assert_eq!(store.load("s1").unwrap(), list);
        let file = dir.path().join("s1/todo.json");
        std::fs::write(&file, "{\"items\": [").unwrap();
        let e = store.load("s1").unwrap_err().to_string();
        assert!(
            e.contains("todo.json:1:") && e.contains("fix or delete"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"items\": [");
    }

    #[test]
    fn session_names_stay_inside_the_folder() {
        let store = TodoStore::new(PathBuf::from("/h/sessions"));
        for bad in ["", "..", "../x", "a/b", ".hidden"] {
            assert!(store.path(bad).is_err(), "{bad}");
        }
        assert_eq!(
            store.path("abc-123").unwrap(),
            PathBuf::from("/h/sessions/abc-123/todo.json")
        );
    }
}
