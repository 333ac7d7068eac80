//! Reading a file that someone else wrote — a cloned repository's `SKILL.md`, `.mcp.json` or
//! project settings — without trusting its shape: [`read_text`] reads only a regular file, only
//! up to a cap, and (given a folder) only one that really lies inside that folder.
//!
//! A repository can make `.claude/skills/x/SKILL.md` a symlink to `/proc/self/pagemap` (endless),
//! `/dev/zero`, or a file elsewhere on the disk; a plain `read_to_string` would then grow the
//! daemon's memory without bound or read what the folder does not hold. The check is made on the
//! opened descriptor (its `/proc/self/fd` link and `fstat`), so swapping a path component after
//! the check changes nothing.

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
    let (file, meta) = open_checked(path, within)?;
    let mut out = Vec::with_capacity(usize::try_from(meta.len().min(max_bytes)).unwrap_or(0));
    file.take(max_bytes).read_to_end(&mut out)?;
    let text = match std::str::from_utf8(&out) {
        Ok(t) => t.to_owned(),
        // Only the cut split a character: keep what came before it.
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&out[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(&out).into_owned(),
    };
    Ok((text, meta.len().max(out.len() as u64)))
}

/// Opens `path` when it is a regular file lying inside `within` (when given).
fn open_checked(
    path: &Path,
    within: Option<&Path>,
) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid("not a regular file"));
    }
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
}
