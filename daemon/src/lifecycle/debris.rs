//! Files a daemon that died (SIGKILL, a crash, a power cut) left behind, removed by the next one
//! once it holds the socket's lock — so nothing it removes can belong to a live daemon of the
//! same socket:
//!
//! - temp files of interrupted atomic writes ([`synapse_shared::atomic`]: `.<name>.tmp.<pid>.<n>`)
//!   in `$SYNAPSE_HOME` and its folders (skills, `bin/`, `mcp/`, workspaces, trusted copies), when
//!   their writer is gone or they are older than [`TEMP_FILE_STALE_AFTER`] (a client may be
//!   writing one right now);
//! - the private `TMPDIR`s of sessions that no longer exist. They live in a folder of this
//!   daemon's own, `<temp>/synapse-<uid>/d-<hash of the socket path>/session-…`
//!   ([`session_tmp_base`]), so a daemon that just started knows that every one of them is dead,
//!   and never touches another daemon's.
//!
//! Session cgroups of a dead daemon are [`crate::shell::cgroup`]'s to remove, processes
//! [`super::orphans`]'.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A temp file this old is debris even if a process with its writer's pid is alive (the pid was
/// reused): an atomic write takes milliseconds.
pub const TEMP_FILE_STALE_AFTER: Duration = Duration::from_secs(60);
/// How deep below `$SYNAPSE_HOME` atomic writes happen (`workspaces/<id>/bin/<file>`).
const HOME_DEPTH: usize = 3;

/// What [`clean`] removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Removed {
    pub temp_files: Vec<PathBuf>,
    pub session_tmp_dirs: Vec<PathBuf>,
}

/// Removes the debris of earlier daemons of this home and socket; call once the lock is held
/// and the owner set ([`synapse_command::daemon_process::set_owner`]).
pub fn clean(home: &Path, temp: &Path) -> Removed {
    let mut removed = Removed::default();
    remove_temp_files(home, HOME_DEPTH, &mut removed.temp_files);
    let base = session_tmp_base(temp);
    if let Ok(entries) = std::fs::read_dir(&base) {
        for entry in entries.flatten() {
            let path = entry.path();
            let is_session = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("session-"));
            if is_session && std::fs::remove_dir_all(&path).is_ok() {
                removed.session_tmp_dirs.push(path);
            }
        }
    }
    if !removed.temp_files.is_empty() || !removed.session_tmp_dirs.is_empty() {
        tracing::info!(
            temp_files = removed.temp_files.len(),
            session_tmp_dirs = removed.session_tmp_dirs.len(),
            "removed what a daemon that died left behind"
        );
    }
    removed
}

/// Removes this daemon's session `TMPDIR` folder when it is empty (a clean stop).
pub fn release(temp: &Path) {
    let _ = std::fs::remove_dir(session_tmp_base(temp));
}

/// The folder holding this daemon's private session `TMPDIR`s: `<temp>/synapse-<uid>/d-<hash>`,
/// the hash naming the daemon's socket (one daemon per socket at a time).
pub fn session_tmp_base(temp: &Path) -> PathBuf {
    let uid = nix::unistd::getuid().as_raw();
    let owner = synapse_command::daemon_process::owner_env().map_or("", |(_, v)| v);
    temp.join(format!("synapse-{uid}"))
        .join(format!("d-{:016x}", fnv1a(owner.as_bytes())))
}

/// FNV-1a: a hash that stays the same across builds (std's does not promise to).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn remove_temp_files(dir: &Path, depth: usize, removed: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if depth > 0 {
                remove_temp_files(&path, depth - 1, removed);
            }
        } else if kind.is_file()
            && let Some(writer) = entry.file_name().to_str().and_then(temp_file_writer)
            && stale(&path, writer)
            && std::fs::remove_file(&path).is_ok()
        {
            removed.push(path);
        }
    }
}

/// The writer's pid when `name` is an atomic write's temp file, `.<name>.tmp.<pid>[.<n>]`.
fn temp_file_writer(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?;
    let (target, suffix) = rest.rsplit_once(".tmp.")?;
    if target.is_empty() {
        return None;
    }
    let mut parts = suffix.split('.');
    let pid = parts.next()?.parse::<i32>().ok().filter(|p| *p > 0)?;
    match (parts.next(), parts.next()) {
        (None, None) => Some(pid),
        (Some(n), None) if n.parse::<u64>().is_ok() => Some(pid),
        _ => None,
    }
}

fn stale(path: &Path, writer: i32) -> bool {
    let writer_alive = writer == std::process::id() as i32
        || nix::sys::signal::kill(nix::unistd::Pid::from_raw(writer), None).is_ok();
    let old = std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= TEMP_FILE_STALE_AFTER);
    !writer_alive || old
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_file_names_are_recognised_as_the_atomic_writer_makes_them() {
        assert_eq!(temp_file_writer(".settings.json.tmp.123"), Some(123));
        assert_eq!(temp_file_writer(".settings.json.tmp.4567.3"), Some(4567));
        assert_eq!(temp_file_writer(".index.json.tmp.9.0"), Some(9));
        for not_ours in [
            "settings.json.tmp.123",
            ".settings.json",
            ".tmp.123",
            ".x.tmp.abc",
            ".x.tmp.12.3.4",
            ".x.tmp.-5",
            ".x.tmp.12.y",
        ] {
            assert_eq!(temp_file_writer(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn dead_writers_files_go_and_a_live_writers_fresh_file_stays() {
        let home = tempfile::tempdir().unwrap();
        let skill = home.path().join("skills/s");
        std::fs::create_dir_all(&skill).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_file = home.path().join(format!(".settings.json.tmp.{dead}.0"));
        let deep_dead = skill.join(format!(".SKILL.md.tmp.{dead}"));
        let live_file = home
            .path()
            .join(format!(".settings.json.tmp.{}.1", std::process::id()));
        let plain = home.path().join("settings.json");
        for f in [&dead_file, &deep_dead, &live_file, &plain] {
            std::fs::write(f, "x").unwrap();
        }
        let temp = tempfile::tempdir().unwrap();
        let removed = clean(home.path(), temp.path());
        let mut gone = removed.temp_files.clone();
        gone.sort();
        let mut wanted = vec![dead_file, deep_dead];
        wanted.sort();
        assert_eq!(gone, wanted);
        assert!(live_file.exists() && plain.exists());
    }

    #[test]
    fn this_daemons_dead_session_folders_go_and_others_stay() {
        let temp = tempfile::tempdir().unwrap();
        let base = session_tmp_base(temp.path());
        let dead = base.join("session-abc");
        std::fs::create_dir_all(dead.join("inner")).unwrap();
        let other_daemon = temp.path().join(format!(
            "synapse-{}/d-0000000000000000/session-x",
            nix::unistd::getuid().as_raw()
        ));
        std::fs::create_dir_all(&other_daemon).unwrap();
        let home = tempfile::tempdir().unwrap();
        let removed = clean(home.path(), temp.path());
        assert_eq!(removed.session_tmp_dirs, vec![dead.clone()]);
        assert!(!dead.exists() && other_daemon.exists());
        release(temp.path());
        assert!(!base.exists(), "an empty base goes at a clean stop");
    }
}
