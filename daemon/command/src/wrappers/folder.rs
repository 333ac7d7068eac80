//! [`WrapperFolder`]: the files of one command prefix (`skill:`, `mcp:`) in one bin folder, kept
//! equal to a wanted set. It remembers what it wrote, so an unchanged wrapper is never rewritten,
//! and removes what is no longer wanted.
//!
//! Atomicity: a replaced wrapper is written to a temp file and renamed over the old one; a new one
//! is created with mode 0600 and made executable only once complete, so no shell ever runs a
//! half-written wrapper. Neither is fsynced: wrappers are derived state that every start compares
//! and rewrites, and skipping the fsyncs is what lets a cold start write 10,000 of them in a
//! second.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Mode of a wrapper.
pub const WRAPPER_MODE: u32 = 0o755;

/// Longest file name most filesystems accept, in bytes.
const FILE_NAME_MAX_BYTES: usize = 255;

/// Below this many wrappers to write, one thread does it.
const PARALLEL_WRITE_MIN: usize = 256;

/// Replaces `path` atomically (temp file in the same folder, then rename) without fsync.
pub fn write_replace(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .and_then(|mut f| f.write_all(contents))
        .and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `path`, which must not exist yet, and makes it executable only once its content is
/// complete (until then it has mode 0600). Fails with `AlreadyExists` when the file is there.
pub fn write_new(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let result = f
        .write_all(contents)
        .and_then(|()| f.set_permissions(fs::Permissions::from_mode(mode)));
    if result.is_err() {
        let _ = fs::remove_file(path);
    }
    result
}

/// Writes one wrapper: created when new, replaced when it was there.
fn write_one(path: &Path, content: &str, exists: bool) -> io::Result<()> {
    let bytes = content.as_bytes();
    if exists {
        write_replace(path, bytes, WRAPPER_MODE)
    } else {
        write_new(path, bytes, WRAPPER_MODE).or_else(|_| write_replace(path, bytes, WRAPPER_MODE))
    }
}

/// What a sync changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrapperChanges {
    /// The commands written (new or changed).
    pub written: Vec<String>,
    /// The commands removed.
    pub removed: Vec<String>,
    /// One line per wrapper that could not be written or removed: one bad wrapper never keeps
    /// the others from being written.
    pub errors: Vec<String>,
}

/// The files starting with `prefix` in `bin`.
#[derive(Debug)]
pub struct WrapperFolder {
    bin: PathBuf,
    prefix: &'static str,
    /// Command → content as last written (or found at open).
    current: BTreeMap<String, String>,
}

impl WrapperFolder {
    /// Reads the wrappers of `prefix` already in `bin`, so a restart rewrites nothing unchanged,
    /// and removes the temp files a crash left between write and rename.
    pub fn open(bin: PathBuf, prefix: &'static str) -> Self {
        let mut current = BTreeMap::new();
        if let Ok(entries) = fs::read_dir(&bin) {
            for e in entries.filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(&format!(".{prefix}")) && name.contains(".tmp.") {
                    let _ = fs::remove_file(e.path());
                } else if name.starts_with(prefix) {
                    let text = fs::read_to_string(e.path()).unwrap_or_default();
                    current.insert(name, text);
                }
            }
        }
        Self {
            bin,
            prefix,
            current,
        }
    }

    /// The folder the wrappers are written to.
    pub fn bin_dir(&self) -> &Path {
        &self.bin
    }

    /// The commands this folder holds.
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.current.keys().map(String::as_str)
    }

    /// Why `command` cannot be a file name here, if it cannot.
    fn bad_name(&self, command: &str) -> Option<String> {
        if !command.starts_with(self.prefix) || command.contains('/') || command.contains('\0') {
            Some(format!("{command:?} is not a {}* file name", self.prefix))
        } else if command.len() > FILE_NAME_MAX_BYTES {
            Some(format!(
                "the command name is {} bytes, over the {FILE_NAME_MAX_BYTES}-byte file name limit",
                command.len()
            ))
        } else {
            None
        }
    }

    /// Writes `command` when its content differs from what is there.
    pub fn put(&mut self, command: &str, content: String, changes: &mut WrapperChanges) {
        if self.current.get(command) == Some(&content) {
            return;
        }
        if let Some(why) = self.bad_name(command) {
            changes.errors.push(format!("no wrapper: {why}"));
            return;
        }
        let path = self.bin.join(command);
        let exists = self.current.contains_key(command);
        let mut result = write_one(&path, &content, exists);
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::NotFound) {
            // The bin folder was removed under us: recreate it once.
            result = fs::create_dir_all(&self.bin).and_then(|()| write_one(&path, &content, false));
        }
        match result {
            Ok(()) => {
                self.current.insert(command.to_string(), content);
                changes.written.push(command.to_string());
            }
            Err(e) => changes
                .errors
                .push(format!("cannot write {}: {e}", path.display())),
        }
    }

    /// Deletes the wrapper `command`.
    pub fn remove(&mut self, command: &str, changes: &mut WrapperChanges) {
        if self.current.remove(command).is_none() {
            return;
        }
        let path = self.bin.join(command);
        match fs::remove_file(&path) {
            Ok(()) => changes.removed.push(command.to_string()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                changes.removed.push(command.to_string())
            }
            Err(e) => changes
                .errors
                .push(format!("cannot remove {}: {e}", path.display())),
        }
    }

    /// Makes the folder hold exactly `wanted` among its prefix's files, plus the ones `keep`
    /// says to leave as they are.
    pub fn sync(
        &mut self,
        wanted: BTreeMap<String, String>,
        keep: &dyn Fn(&str) -> bool,
    ) -> WrapperChanges {
        let mut changes = WrapperChanges::default();
        let stale: Vec<String> = self
            .current
            .keys()
            .filter(|k| !wanted.contains_key(*k) && !keep(k))
            .cloned()
            .collect();
        for command in stale {
            self.remove(&command, &mut changes);
        }
        let mut to_write: Vec<(String, String, bool)> = Vec::new();
        for (command, content) in wanted {
            if self.current.get(&command) == Some(&content) {
                continue;
            }
            match self.bad_name(&command) {
                Some(why) => changes.errors.push(format!("no wrapper: {why}")),
                None => {
                    let exists = self.current.contains_key(&command);
                    to_write.push((command, content, exists));
                }
            }
        }
        if to_write.len() < PARALLEL_WRITE_MIN {
            for (command, content, _) in to_write {
                self.put(&command, content, &mut changes);
            }
            return changes;
        }
        // A cold start writes thousands of small files: spread them over the cores.
        if let Err(e) = fs::create_dir_all(&self.bin) {
            changes
                .errors
                .push(format!("cannot create {}: {e}", self.bin.display()));
            return changes;
        }
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8);
        let chunk = to_write.len().div_ceil(threads);
        let bin = &self.bin;
        let results: Vec<(String, String, io::Result<()>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = to_write
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(command, content, exists)| {
                                let result = write_one(&bin.join(command), content, *exists);
                                (command.clone(), content.clone(), result)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        for (command, content, result) in results {
            match result {
                Ok(()) => {
                    changes.written.push(command.clone());
                    self.current.insert(command, content);
                }
                Err(e) => changes.errors.push(format!(
                    "cannot write {}: {e}",
                    self.bin.join(&command).display()
                )),
            }
        }
        changes
    }

    /// Forgets every file (the folder was removed as a whole); the next sync writes them again.
    pub fn forget(&mut self) {
        self.current.clear();
    }
}

#[cfg(test)]
#[path = "folder_tests.rs"]
mod tests;
