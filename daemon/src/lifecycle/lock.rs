//! One daemon per socket: an exclusive `flock` on `<socket>.lock`, held for the life of the
//! process and released by the kernel when it dies (so a SIGKILLed daemon never blocks the next).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("synapsed is already running{} (lock {path} is held)", pid_text(*.pid), path = .path.display())]
    AlreadyRunning { path: PathBuf, pid: Option<u32> },
    #[error("cannot open lock file {path}: {source}", path = .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot lock {path}: {source}", path = .path.display())]
    Lock { path: PathBuf, source: Errno },
}

fn pid_text(pid: Option<u32>) -> String {
    pid.map(|p| format!(" with pid {p}")).unwrap_or_default()
}

/// Holds the lock until dropped.
#[derive(Debug)]
pub struct DaemonLock {
    _lock: Flock<File>,
    path: PathBuf,
}

impl DaemonLock {
    /// Takes the lock without waiting; fails with [`LockError::AlreadyRunning`] when another
    /// process holds it, and records our pid in the file.
    pub fn acquire(path: &Path) -> Result<Self, LockError> {
        let file = open(path)?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut lock) => {
                let _ = lock.set_len(0);
                let _ = lock.seek(SeekFrom::Start(0));
                let _ = writeln!(lock, "{}", std::process::id());
                let _ = lock.sync_data();
                Ok(Self {
                    _lock: lock,
                    path: path.to_path_buf(),
                })
            }
            Err((mut file, Errno::EWOULDBLOCK)) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Err(LockError::AlreadyRunning {
                    path: path.to_path_buf(),
                    pid: text.trim().parse().ok(),
                })
            }
            Err((_, source)) => Err(LockError::Lock {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn open(path: &Path) -> Result<File, LockError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|source| LockError::Open {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_reports_the_holder_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.sock.lock");
        let first = DaemonLock::acquire(&path).unwrap();
        let err = DaemonLock::acquire(&path).unwrap_err();
        let pid = std::process::id();
        assert!(
            err.to_string()
                .contains(&format!("already running with pid {pid}")),
            "{err}"
        );
        drop(first);
        DaemonLock::acquire(&path).unwrap();
    }
}
