//! Reading a file that someone else wrote — a cloned repository's `SKILL.md`, `.mcp.json` or
//! project settings — without trusting its shape: [`read_text`] reads only a regular file, only
//! up to a cap, and (given a folder) only one that really lies inside that folder.
//!
//! A repository can make `.claude/skills/x/SKILL.md` a symlink to `/proc/self/pagemap` (endless),
//! `/dev/zero`, or a file elsewhere on the disk; a plain `read_to_string` would then grow the
//! daemon's memory without bound or read what the folder does not hold. The check is made on the
//! opened descriptor (its `/proc/self/fd` link and `fstat`), so swapping a path component after
//! the check changes nothing.
//!
//! Nothing here blocks on what a path is: a FIFO named `SKILL.md` would hold a plain `open` until
//! a writer came (and with it the skills scan, the session, the daemon). [`open_regular`] looks at
//! the type first, opens non-blocking, and refuses anything but a regular file with a
//! [`NotRegular`] that names what it is ("it is a FIFO, not a regular file"). Every read of
//! repository content goes through here.

use std::io::{self, Read};
use std::path::Path;

/// The most of a configuration file (settings, `.mcp.json`, `~/.claude.json`) that is read.
pub const CONFIG_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// The most of a `SKILL.md` that is read. The Agent Skills format asks for under 500 lines, but
/// long reference documents exist: the cap is there against a link to an endless or huge file,
/// not against long skills.
pub const SKILL_MD_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Reads `path` as UTF-8 text: a regular file of at most `max_bytes`, lying inside `within`
/// (after every symlink is resolved) when that is given. Errors name what was wrong.
pub fn read_text(path: &Path, within: Option<&Path>, max_bytes: u64) -> io::Result<String> {
    let bytes = read_bytes(path, within, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// [`read_text`] for bytes.
pub fn read_bytes(path: &Path, within: Option<&Path>, max_bytes: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_checked(path, within)?;
    if meta.len() > max_bytes {
        return Err(too_large(max_bytes));
    }
    let mut out = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max_bytes {
        return Err(too_large(max_bytes));
    }
    Ok(out)
}

/// The first `max_bytes` of `path` as text, with the file's whole size: for a file that is shown
/// cut rather than refused when it is long (an `AGENTS.md`). The same checks as [`read_text`]
/// (a regular file, inside `within`); a character split by the cut is dropped, and bytes that are
/// not UTF-8 are shown as U+FFFD.
pub fn read_text_head(
    path: &Path,
    within: Option<&Path>,
    max_bytes: u64,
) -> io::Result<(String, u64)> {
    let (out, size) = read_bytes_head(path, within, max_bytes)?;
    let text = match std::str::from_utf8(&out) {
        Ok(t) => t.to_owned(),
        // Only the cut split a character: keep what came before it.
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&out[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(&out).into_owned(),
    };
    Ok((text, size))
}

/// The first `max_bytes` of `path` as bytes, with the file's whole size (a script's head, read
/// for its documentation). The same checks as [`read_text`].
pub fn read_bytes_head(
    path: &Path,
    within: Option<&Path>,
    max_bytes: u64,
) -> io::Result<(Vec<u8>, u64)> {
    let (file, meta) = open_checked(path, within)?;
    let mut out = Vec::with_capacity(usize::try_from(meta.len().min(max_bytes)).unwrap_or(0));
    file.take(max_bytes).read_to_end(&mut out)?;
    let size = meta.len().max(out.len() as u64);
    Ok((out, size))
}

/// What a path is when it is not a regular file: the reason a read refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("it is {}, not a regular file", self.kind())]
pub enum NotRegular {
    /// A named pipe: opening it for reading waits for a writer.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A folder.
    Directory,
    /// Anything else (a symlink looked at without following it).
    Other,
}

impl NotRegular {
    /// Why `file_type` is not read; `None` for a regular file. A symlink's own type is
    /// [`NotRegular::Other`]: callers pass the type of what it points at when they follow it.
    pub fn of(file_type: std::fs::FileType) -> Option<Self> {
        use std::os::unix::fs::FileTypeExt;
        Some(if file_type.is_file() {
            return None;
        } else if file_type.is_fifo() {
            Self::Fifo
        } else if file_type.is_socket() {
            Self::Socket
        } else if file_type.is_char_device() {
            Self::CharDevice
        } else if file_type.is_block_device() {
            Self::BlockDevice
        } else if file_type.is_dir() {
            Self::Directory
        } else {
            Self::Other
        })
    }

    /// What the file is, in a few words ("a FIFO").
    pub fn kind(self) -> &'static str {
        match self {
            Self::Fifo => "a FIFO",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
            Self::Directory => "a directory",
            Self::Other => "an unknown kind of file",
        }
    }

    /// The refusal carried by an error of this module, if that was why it failed.
    pub fn in_error(e: &io::Error) -> Option<Self> {
        e.get_ref()?.downcast_ref::<Self>().copied()
    }
}

impl From<NotRegular> for io::Error {
    fn from(why: NotRegular) -> Self {
        io::Error::new(io::ErrorKind::InvalidInput, why)
    }
}

/// Opens `path` for reading when it is a regular file, without ever blocking on what it is: the
/// path's type is looked at first (a FIFO, socket or device is refused before any open), the
/// open itself is non-blocking and takes no controlling terminal (so a FIFO swapped in after the
/// look returns at once), and the opened descriptor's own type decides. The descriptor is
/// blocking again when returned.
pub fn open_regular(path: &Path) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(why) = NotRegular::of(std::fs::metadata(path)?.file_type()) {
        return Err(why.into());
    }
    let flags = nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if let Some(why) = NotRegular::of(meta.file_type()) {
        return Err(why.into());
    }
    let status =
        nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let status = nix::fcntl::OFlag::from_bits_truncate(status) - nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(status)).map_err(io::Error::from)?;
    Ok((file, meta))
}

/// Opens `path` when it is a regular file ([`open_regular`]) lying inside `within` (when given).
fn open_checked(
    path: &Path,
    within: Option<&Path>,
) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    let (file, meta) = open_regular(path)?;
    if let Some(folder) = within {
        let real = opened_path(&file, path)?;
        let folder = folder.canonicalize()?;
        if !real.starts_with(&folder) || real.starts_with("/proc") || real.starts_with("/sys") {
            return Err(invalid(&format!(
                "it resolves to {}, outside {}",
                real.display(),
                folder.display()
            )));
        }
    }
    Ok((file, meta))
}

/// Where an opened file really is.
fn opened_path(file: &std::fs::File, path: &Path) -> io::Result<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let _ = path;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        path.canonicalize()
    }
}

fn invalid(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why.to_string())
}

fn too_large(max: u64) -> io::Error {
    let shown = if max >= 1024 * 1024 && max.is_multiple_of(1024 * 1024) {
        format!("{} MiB", max / (1024 * 1024))
    } else {
        format!("{max} bytes")
    };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {shown}, the most that is read"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_file_inside_its_folder_is_read() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.md"), "hello").unwrap();
        let got = read_text(&d.path().join("a.md"), Some(d.path()), 10).unwrap();
        assert_eq!(got, "hello");
    }

    #[test]
    fn links_out_devices_procfs_and_oversized_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        symlink(outside.path().join("secret"), d.path().join("out.md")).unwrap();
        symlink("/proc/self/pagemap", d.path().join("proc.md")).unwrap();
        symlink("/dev/zero", d.path().join("dev.md")).unwrap();
        std::fs::write(d.path().join("big.md"), "x".repeat(11)).unwrap();
        for (name, says) in [
            ("out.md", "outside"),
            ("proc.md", "outside"),
            ("dev.md", "not a regular file"),
            ("big.md", "larger than 10 bytes"),
        ] {
            let e = read_text(&d.path().join(name), Some(d.path()), 10).unwrap_err();
            assert!(e.to_string().contains(says), "{name}: {e}");
        }
        // procfs files report size 0: the cap still holds without a folder to check.
        let e = read_bytes(Path::new("/proc/self/smaps"), None, 256).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn a_head_is_cut_at_a_character_boundary_and_knows_the_whole_size() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.md"), "abcé-tail").unwrap();
        let (head, size) = read_text_head(&d.path().join("a.md"), Some(d.path()), 4).unwrap();
        assert_eq!((head.as_str(), size), ("abc", 10));
        let (whole, _) = read_text_head(&d.path().join("a.md"), Some(d.path()), 100).unwrap();
        assert_eq!(whole, "abcé-tail");
        let outside = tempfile::tempdir().unwrap();
        symlink("/etc/passwd", outside.path().join("l.md")).unwrap();
        assert!(read_text_head(&outside.path().join("l.md"), Some(outside.path()), 100).is_err());
        assert!(read_text_head(Path::new("/dev/zero"), None, 100).is_err());
    }

    /// Runs `f` on a thread and fails the test (instead of hanging it) when it does not return
    /// within a few seconds: a read that blocks on a FIFO would never return.
    fn within_deadline<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the read blocked instead of refusing the file")
    }

    #[test]
    fn fifos_sockets_devices_and_folders_are_refused_at_once_by_name() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("SKILL.md");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let socket = d.path().join("mcp.json");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        symlink(&fifo, d.path().join("link-to-fifo.md")).unwrap();
        std::fs::create_dir(d.path().join("folder.md")).unwrap();
        let cases = [
            (
                fifo.clone(),
                NotRegular::Fifo,
                "it is a FIFO, not a regular file",
            ),
            (d.path().join("link-to-fifo.md"), NotRegular::Fifo, "a FIFO"),
            (
                socket,
                NotRegular::Socket,
                "it is a socket, not a regular file",
            ),
            (
                "/dev/zero".into(),
                NotRegular::CharDevice,
                "a character device",
            ),
            (
                d.path().join("folder.md"),
                NotRegular::Directory,
                "a directory",
            ),
        ];
        for (path, kind, says) in cases {
            let shown = path.display().to_string();
            let (e, head) = within_deadline(move || {
                let e = read_text(&path, None, 1024).unwrap_err();
                let head = read_text_head(&path, None, 1024).unwrap_err();
                (e, head)
            });
            assert_eq!(NotRegular::in_error(&e), Some(kind), "{shown}: {e}");
            assert!(e.to_string().contains(says), "{shown}: {e}");
            assert_eq!(NotRegular::in_error(&head), Some(kind), "{shown}: {head}");
        }
        // Open straight, too: the descriptor's own type decides (a FIFO swapped in after a look).
        let e = within_deadline(move || open_regular(&fifo).unwrap_err());
        assert_eq!(NotRegular::in_error(&e), Some(NotRegular::Fifo));
    }

    #[test]
    fn a_regular_file_opened_non_blocking_reads_as_usual() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.md");
        std::fs::write(&p, "body").unwrap();
        let (file, meta) = open_regular(&p).unwrap();
        assert_eq!(meta.len(), 4);
        let flags = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL).unwrap();
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags);
        assert!(!flags.contains(nix::fcntl::OFlag::O_NONBLOCK));
        let (head, size) = read_bytes_head(&p, None, 2).unwrap();
        assert_eq!((head.as_slice(), size), (&b"bo"[..], 4));
        let missing = read_text(&d.path().join("none"), None, 10).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
