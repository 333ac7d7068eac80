//! Binding the daemon socket. Called with the daemon lock held, so a socket file that is already
//! there belongs to a daemon that died: it is removed (after checking nobody answers on it). The
//! socket is made 0600 inside a 0700 folder, so only its owner can even connect.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("another process is serving {path} without holding its lock; stop it first", path = .path.display())]
    InUse { path: PathBuf },
    #[error("{path} exists and is not a socket; move it away or set SYNAPSE_SOCKET", path = .path.display())]
    NotASocket { path: PathBuf },
    #[error("cannot bind {path}: {source}", path = .path.display())]
    Bind { path: PathBuf, source: io::Error },
    #[error("refusing to serve in {path}: {why}; remove it or point SYNAPSE_HOME/SYNAPSE_SOCKET at a folder of your own", path = .path.display())]
    UnsafeFolder { path: PathBuf, why: String },
}

/// ssh's StrictModes for the socket's folder, as the client checks it: not a symlink, owned by
/// this user, not writable by group or others.
fn check_folder(dir: &Path) -> Result<(), SocketError> {
    use std::os::unix::fs::MetadataExt;
    let unsafe_folder = |why: String| SocketError::UnsafeFolder {
        path: dir.to_path_buf(),
        why,
    };
    let meta = fs::symlink_metadata(dir).map_err(|e| unsafe_folder(e.to_string()))?;
    let own = nix::unistd::Uid::current().as_raw();
    if meta.file_type().is_symlink() {
        return Err(unsafe_folder("it is a symlink".into()));
    }
    if meta.uid() != own {
        return Err(unsafe_folder(format!(
            "it belongs to uid {}, not to uid {own}",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(unsafe_folder(format!(
            "it is writable by group or others (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// What happened to an earlier socket file at the same path.
#[derive(Debug, PartialEq, Eq)]
pub enum Previous {
    None,
    StaleRemoved,
}

/// Binds `path`, removing a stale socket file first.
pub fn bind(path: &Path) -> Result<(UnixListener, Previous), SocketError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        check_folder(dir)?;
    }
    let previous = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(SocketError::InUse {
                    path: path.to_path_buf(),
                });
            }
            fs::remove_file(path).map_err(|source| SocketError::Bind {
                path: path.to_path_buf(),
                source,
            })?;
            Previous::StaleRemoved
        }
        Ok(_) => {
            return Err(SocketError::NotASocket {
                path: path.to_path_buf(),
            });
        }
        Err(_) => Previous::None,
    };
    let listener = UnixListener::bind(path).map_err(|source| SocketError::Bind {
        path: path.to_path_buf(),
        source,
    })?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(|source| {
        SocketError::Bind {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok((listener, previous))
}

/// Removes the socket file at shutdown (only if it is still a socket).
pub fn remove(path: &Path) {
    if let Ok(meta) = fs::symlink_metadata(path)
        && meta.file_type().is_socket()
    {
        let _ = fs::remove_file(path);
    }
}
