//! The one owner of the user's `settings.json` in the daemon: [`SettingsHandle`].
//!
//! Every subsystem reads settings through [`SettingsHandle::current`], which compares a cheap
//! stamp of the file (one `stat`: modification and change time, size, inode) with the one it
//! last parsed and re-reads only when it differs, so a hand edit counts at the next turn or
//! command without a restart. A file that stops parsing keeps the last good settings in force;
//! [`SettingsHandle::error`] reports why until the file is fixed. Writes go through
//! [`SettingsHandle::update`]: a locked read-modify-write in `synapse_shared::settings::update`.
//! Views derived from the settings — the skill store's rules and enabled state, the permission
//! gates' rules — take a [`Snapshot`] and derive again when its generation moves; none of them
//! reads the file itself.

use parking_lot::RwLock;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use synapse_shared::settings::{self, Settings, SettingsError};

/// What identifies one version of the file on disk; `None` when the file does not exist.
type Stamp = Option<(i64, i64, i64, i64, u64, u64)>;

struct Loaded {
    stamp: Stamp,
    /// The settings in force: the last version that parsed (defaults before any did).
    good: Arc<Settings>,
    /// Whether `good` came from the file (or its absence), not from defaults put in place
    /// because no version of it parsed yet.
    from_file: bool,
    /// Why the file on disk is not in force ("path:line:col: message").
    error: Option<String>,
    /// Counts every change of `good` or `error`, so views derived from them know when to
    /// derive again.
    generation: u64,
}

/// What the handle holds at one moment: for subsystems that derive their own view (skill rules,
/// permission rules) and must tell "last good" from "never good".
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub settings: Arc<Settings>,
    pub error: Option<String>,
    /// False when no version of the file ever parsed: `settings` are only defaults.
    pub from_file: bool,
    pub generation: u64,
}

impl std::fmt::Debug for SettingsHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsHandle")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The live, layered-from-disk settings, shared by every subsystem.
pub struct SettingsHandle {
    path: PathBuf,
    loaded: RwLock<Loaded>,
}

impl SettingsHandle {
    /// Opens the handle on `path`; `first` is what start-up read (the file is stamped now, so
    /// the next [`current`](Self::current) reads it again only when it changed since).
    pub fn new(path: PathBuf, first: Result<Settings, String>) -> Self {
        let stamp = stamp(&path);
        let (good, error) = match first {
            Ok(s) => (s, None),
            Err(e) => (Settings::default(), Some(e)),
        };
        Self {
            path,
            loaded: RwLock::new(Loaded {
                stamp,
                good: Arc::new(good),
                from_file: error.is_none(),
                error,
                generation: 0,
            }),
        }
    }

    /// Reads the file now (start-up, tests).
    pub fn open(path: PathBuf) -> Self {
        let first = settings::load(&path).map_err(|e| e.to_string());
        Self::new(path, first)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The settings in force, re-read first when the file changed since the last look.
    pub fn current(&self) -> Arc<Settings> {
        let now = stamp(&self.path);
        {
            let loaded = self.read();
            if loaded.stamp == now {
                return loaded.good.clone();
            }
        }
        self.reload(now)
    }

    /// [`current`](Self::current) with what a derived view needs besides the settings.
    pub fn snapshot(&self) -> Snapshot {
        let _ = self.current();
        let loaded = self.read();
        Snapshot {
            settings: loaded.good.clone(),
            error: loaded.error.clone(),
            from_file: loaded.from_file,
            generation: loaded.generation,
        }
    }

    /// Why the file on disk is not in force, checked against the file as it is now.
    pub fn error(&self) -> Option<String> {
        let _ = self.current();
        self.read().error.clone()
    }

    /// Edits the file under its lock and puts the result in force. A corrupt file is left alone
    /// and the error returned.
    pub fn update(&self, edit: impl FnOnce(&mut Value)) -> Result<Arc<Settings>, SettingsError> {
        // Held across the write, so the stamp taken after it is of this write, not of another
        // writer of this daemon that came in between (a writer outside it changes the stamp
        // again, and the next look re-reads).
        let mut loaded = self.write();
        let written = Arc::new(settings::update(&self.path, edit)?);
        loaded.stamp = stamp(&self.path);
        loaded.put(written.clone());
        Ok(written)
    }

    fn reload(&self, now: Stamp) -> Arc<Settings> {
        let mut loaded = self.write();
        if loaded.stamp == now {
            return loaded.good.clone();
        }
        match settings::load(&self.path) {
            Ok(s) => {
                if loaded.error.is_some() {
                    tracing::info!(path = %self.path.display(), "settings.json parses again");
                }
                loaded.put(Arc::new(s));
            }
            Err(e) => {
                tracing::warn!("{e} (the last good settings stay in force)");
                loaded.error = Some(format!(
                    "{e} (the last good settings stay in force until the file is fixed)"
                ));
                loaded.generation += 1;
            }
        }
        loaded.stamp = now;
        loaded.good.clone()
    }

    fn read(&self) -> parking_lot::RwLockReadGuard<'_, Loaded> {
        self.loaded.read()
    }

    fn write(&self) -> parking_lot::RwLockWriteGuard<'_, Loaded> {
        self.loaded.write()
    }
}

impl Loaded {
    fn put(&mut self, good: Arc<Settings>) {
        self.good = good;
        self.from_file = true;
        self.error = None;
        self.generation += 1;
    }
}

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.size(),
        m.ino(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_edit_counts_at_next_read_and_corrupt_file_keeps_last_good() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        std::fs::write(&p, r#"{"model":"one"}"#).unwrap();
        let h = SettingsHandle::open(p.clone());
        assert_eq!(h.current().model.as_deref(), Some("one"));
        std::fs::write(&p, r#"{"model":"two-longer"}"#).unwrap();
        assert_eq!(h.current().model.as_deref(), Some("two-longer"));
        std::fs::write(&p, "{ broken").unwrap();
        assert_eq!(h.current().model.as_deref(), Some("two-longer"));
        let err = h.error().unwrap();
        assert!(err.contains("settings.json:1:"), "{err}");
        std::fs::write(&p, r#"{"model":"three"}"#).unwrap();
        assert_eq!(h.current().model.as_deref(), Some("three"));
        assert_eq!(h.error(), None);
    }

    #[test]
    fn a_snapshot_tells_last_good_from_never_good() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        std::fs::write(&p, "{ broken").unwrap();
        let h = SettingsHandle::open(p.clone());
        let never = h.snapshot();
        assert!(!never.from_file && never.error.is_some());
        std::fs::write(&p, r#"{"model":"one"}"#).unwrap();
        let good = h.snapshot();
        assert!(good.from_file && good.error.is_none());
        assert!(good.generation > never.generation);
        assert_eq!(h.snapshot().generation, good.generation, "nothing changed");
        std::fs::write(&p, "{ broken again").unwrap();
        let last_good = h.snapshot();
        assert!(last_good.from_file && last_good.error.is_some());
        assert_eq!(last_good.settings.model.as_deref(), Some("one"));
        assert!(last_good.generation > good.generation);
    }

    #[test]
    fn update_is_in_force_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        let h = SettingsHandle::open(p.clone());
        h.update(|t| settings::set_key(t, &["model"], Value::from("m")))
            .unwrap();
        assert_eq!(h.current().model.as_deref(), Some("m"));
        assert!(std::fs::read_to_string(&p).unwrap().contains("\"m\""));
    }
}
