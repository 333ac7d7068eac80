//! Carving protected paths out of a writable folder. Landlock only grants: a rule on a folder
//! covers everything beneath it, and nothing can be subtracted. So a writable folder `W` with
//! protected paths strictly beneath it is not granted itself; [`grants`] lists what is granted
//! instead: each entry of `W` (folders with every right, regular files with the file rights),
//! except the protected ones, going down into the entries that are ancestors of a protected path
//! (which are not granted themselves either).
//!
//! What is left out, failing closed:
//! - symlinks: a rule is opened by following its path, so `~/link -> ~/.claude` would grant
//!   `~/.claude` itself. Each entry is opened relative to its folder's descriptor with
//!   `O_NOFOLLOW` and inspected through that descriptor, so what is granted is what was looked at.
//! - regular files with more than one link: a rule binds to the inode, and any other name of it
//!   (`~/.bashrc` for `~/bashrc-copy`) would be writable too.
//! - anything else that is not a folder or a regular file (fifos, sockets, devices), and every
//!   entry that cannot be opened or inspected.
//!
//! The folders carved (`W` and the ancestors walked through) are not granted, so nothing can be
//! created, removed or renamed directly in them: a protected path that does not exist yet cannot
//! be made, and a granted entry cannot be moved away and replaced. Renames and links between the
//! granted entries follow Landlock's `REFER` rule (the destination must not carry more rights
//! than the source), so a protected file cannot be linked or moved into a granted folder either.

use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::Mode;

/// What one rule grants: a folder (every right beneath it) or a single regular file.
pub(super) struct Grant {
    pub fd: OwnedFd,
    pub folder: bool,
}

/// The protected paths of a spec, as written and with the symlinks of their existing part
/// resolved, and the identity of those that exist.
pub(super) struct Protected {
    paths: Vec<PathBuf>,
    ids: Vec<(u64, u64)>,
}

impl Protected {
    pub fn new(protected: &[PathBuf]) -> Self {
        let mut paths = Vec::new();
        let mut ids = Vec::new();
        for path in protected.iter().filter(|p| p.is_absolute()) {
            paths.push(normalize(path));
            paths.push(real_path(path));
            if let Ok(meta) = std::fs::metadata(path) {
                use std::os::unix::fs::MetadataExt;
                ids.push((meta.dev(), meta.ino()));
            }
        }
        paths.sort();
        paths.dedup();
        Protected { paths, ids }
    }

    /// The forms a folder of the spec is compared in: as written and resolved.
    fn forms(folder: &Path) -> [PathBuf; 2] {
        [normalize(folder), real_path(folder)]
    }

    /// Whether a protected path lies strictly beneath `folder` (in either form).
    pub fn beneath(&self, folder: &Path) -> bool {
        Self::forms(folder).iter().any(|f| self.strictly_below(f))
    }

    fn strictly_below(&self, folder: &Path) -> bool {
        self.paths
            .iter()
            .any(|p| p != folder && p.starts_with(folder))
    }

    /// Whether the entry at `forms` (as written, resolved) with `meta` is a protected path.
    fn is(&self, forms: &[PathBuf; 2], meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        forms.iter().any(|f| self.paths.contains(f)) || self.ids.contains(&(meta.dev(), meta.ino()))
    }
}

/// What to grant for writable `folder` (an existing folder with protected paths beneath it).
pub(super) fn grants(folder: &Path, protected: &Protected) -> Vec<Grant> {
    let mut out = Vec::new();
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    if let Ok(fd) = open(folder, flags, Mode::empty()) {
        walk(&fd, &Protected::forms(folder), protected, &mut out);
    }
    out
}

/// Grants the entries of folder `dir` (at `forms`), going down towards the protected paths.
fn walk(dir: &OwnedFd, forms: &[PathBuf; 2], protected: &Protected, out: &mut Vec<Grant>) {
    // The names come from listing the folder; each is then opened relative to the descriptor,
    // never by path again, so what is granted is what was inspected.
    let listed = std::fs::read_dir(format!("/proc/self/fd/{}", raw(dir)))
        .or_else(|_| std::fs::read_dir(&forms[0]));
    let Ok(entries) = listed else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(fd) = openat(dir, name.as_os_str(), flags, Mode::empty()) else {
            continue;
        };
        let file = std::fs::File::from(fd);
        let Ok(meta) = file.metadata() else {
            continue;
        };
        let child = [forms[0].join(&name), forms[1].join(&name)];
        if protected.is(&child, &meta) {
            continue;
        }
        let kind = meta.file_type();
        if kind.is_dir() {
            let fd = OwnedFd::from(file);
            if child.iter().any(|c| protected.strictly_below(c)) {
                walk(&fd, &child, protected, out);
            } else {
                out.push(Grant { fd, folder: true });
            }
        } else if kind.is_file() && std::os::unix::fs::MetadataExt::nlink(&meta) == 1 {
            out.push(Grant {
                fd: file.into(),
                folder: false,
            });
        }
    }
}

fn raw(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

/// `path` without `.` and `..` (lexically).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `path` with every symlink in its existing part resolved (the rest kept as written).
fn real_path(path: &Path) -> PathBuf {
    let path = normalize(path);
    let mut rest = Vec::new();
    let mut at = path.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path,
        }
    }
}
