//! The bound on a session's private temporary folder (its shell's `TMPDIR`, the one temporary
//! folder its sandbox may write): after every call the folder is measured, and when it holds
//! more than `shell.maxTmpMiB` its files are removed and the model is told why — so a session
//! cannot fill the disk through it, as the spill budget keeps it from doing through its output.
//! The measure counts regular files' sizes without following links, and stops early: past the
//! budget, or after [`ENTRIES_MAX`] entries (then what was counted stands).

use std::path::Path;

/// The most entries one measure visits.
const ENTRIES_MAX: usize = 20_000;
const MIB: u64 = 1024 * 1024;

/// Measures `dir` against `budget_bytes`; when it holds more, empties it and returns the note for
/// the model. `None`: within the budget (or not a folder).
pub fn enforce(dir: &Path, budget_bytes: u64) -> Option<String> {
    let mut seen = 0usize;
    let held = size_beyond(dir, budget_bytes, &mut seen)?;
    let mut left = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let gone = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            if let Err(e) = gone {
                left.push(format!("{} ({e})", path.display()));
            }
        }
    }
    tracing::warn!(
        "session temp folder {} held over {} MiB: emptied",
        dir.display(),
        budget_bytes / MIB
    );
    let mut note = format!(
        "this session's temporary folder ({}) held more than its limit of {} MiB (settings.json \
         shell.maxTmpMiB; over {} MiB counted): its files were removed; keep large files in your \
         project folder",
        dir.display(),
        budget_bytes / MIB,
        held / MIB
    );
    if !left.is_empty() {
        note.push_str(&format!("; could not remove: {}", left.join(", ")));
    }
    Some(note)
}

/// The bytes below `dir` when they pass `budget`, counting from `seen` entries on; `None` while
/// within it.
fn size_beyond(dir: &Path, budget: u64, seen: &mut usize) -> Option<u64> {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            *seen += 1;
            if *seen > ENTRIES_MAX {
                return None;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total = total.saturating_add(meta.len());
                if total > budget {
                    return Some(total);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_within_its_budget_is_left_alone_and_one_past_it_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/small"), vec![0u8; 1000]).unwrap();
        assert_eq!(enforce(dir.path(), MIB), None);
        assert!(dir.path().join("a/b/small").exists());
        std::fs::write(dir.path().join("a/big"), vec![0u8; (MIB + 1) as usize]).unwrap();
        let note = enforce(dir.path(), MIB).unwrap();
        assert!(
            note.contains("more than its limit of 1 MiB") && note.contains("shell.maxTmpMiB"),
            "{note}"
        );
        assert!(dir.path().exists(), "the folder itself stays");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_link_out_is_not_counted_nor_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("big"), vec![0u8; (2 * MIB) as usize]).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("link")).unwrap();
        assert_eq!(enforce(dir.path(), MIB), None);
        assert!(elsewhere.path().join("big").exists());
    }
}
