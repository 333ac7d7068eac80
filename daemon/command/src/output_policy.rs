//! The one output policy: how much of a result the model receives, whatever produced it (the
//! shell, an agent command, an `mcp:*` short-cut, `skill load`, `web_fetch`, a sub-agent's
//! answer). A result over the cap keeps its head and tail with a marker line in between, and
//! its full text is spilled to a file the model can `read --offset`; the marker says where.
//!
//! The cap comes from the model's context window ([`cap_for_window`]): 30,000 characters by
//! default and never more than about a quarter of the window. Shell output is already capped
//! while it streams (the shell's capture); this policy catches everything produced in-process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Default cap on the characters of one command's result.
pub const OUTPUT_CAP_CHARS: usize = 30_000;

/// Rough characters per token, to turn a context window into a character budget.
const CHARS_PER_TOKEN: u64 = 4;
/// The share of the context window one result may take, in percent.
const WINDOW_SHARE_PERCENT: u64 = 25;
/// Smallest cap, so a tiny window still shows something useful.
const MIN_CAP_CHARS: usize = 2_000;
/// Notes the router adds (timeouts, exit code) may take a result this far over the cap before
/// the policy steps in.
const NOTES_SLACK_CHARS: usize = 2_000;

/// The cap for a model with a context window of `window_tokens` (unknown: the default).
pub fn cap_for_window(window_tokens: Option<u64>) -> usize {
    match window_tokens {
        None | Some(0) => OUTPUT_CAP_CHARS,
        Some(tokens) => {
            let quarter = tokens.saturating_mul(CHARS_PER_TOKEN) * WINDOW_SHARE_PERCENT / 100;
            usize::try_from(quarter)
                .unwrap_or(usize::MAX)
                .clamp(MIN_CAP_CHARS, OUTPUT_CAP_CHARS)
        }
    }
}

/// Caps results and spills the full text of long ones under `spill_dir`.
#[derive(Debug, Clone)]
pub struct OutputPolicy {
    /// The most characters of one result the model reads.
    pub cap_chars: usize,
    /// Where the full text of a longer result is spilled.
    pub spill_dir: PathBuf,
}

impl OutputPolicy {
    /// A policy capping results at `cap_chars`, spilling to `spill_dir`.
    pub fn new(cap_chars: usize, spill_dir: PathBuf) -> Self {
        Self {
            cap_chars,
            spill_dir,
        }
    }

    /// `text` as the model receives it; `label` names the spill file (the session name).
    pub fn apply(&self, label: &str, text: String) -> String {
        self.apply_capped(label, text, None)
    }

    /// [`Self::apply`] with a per-call cap (never above this policy's own), e.g. one sized from
    /// the session model's context window.
    pub fn apply_capped(&self, label: &str, text: String, cap: Option<usize>) -> String {
        let cap_chars = cap.map_or(self.cap_chars, |c| c.min(self.cap_chars));
        let chars = text.chars().count();
        if chars <= cap_chars + NOTES_SLACK_CHARS {
            return text;
        }
        let spilled = spill(&self.spill_dir, label, &text);
        let half = cap_chars / 2;
        let head: String = text.chars().take(half).collect();
        let tail: String = {
            let skip = chars.saturating_sub(half);
            text.chars().skip(skip).collect()
        };
        let lines = text.lines().count();
        let where_ = match &spilled {
            Ok(path) => format!(
                "the full output ({lines} lines) is in {}; see the rest with `read {} \
                 --offset N --limit M` or `search PATTERN --path {}`",
                path.display(),
                path.display(),
                path.display()
            ),
            Err(e) => format!("the full output could not be saved: {e}"),
        };
        let sep = if head.ends_with('\n') { "" } else { "\n" };
        format!(
            "{head}{sep}[... {} characters omitted; {where_} ...]\n{tail}",
            chars - head.chars().count() - tail.chars().count()
        )
    }
}

/// The user's own folder `name` in the temp dir `temp`: `<temp>/synapse-<uid>/<name>` (made
/// private by [`private_dir`] before use), never a folder shared by every user of the machine.
pub fn user_temp_dir(temp: &Path, name: &str) -> PathBuf {
    temp.join(format!("synapse-{}", nix::unistd::getuid().as_raw()))
        .join(name)
}

/// Makes `dir` (and missing parents) 0700, then checks that it is a real folder of ours that
/// nobody else can write, in a parent that nobody else can write either (or a sticky one, as
/// `/tmp`, where nobody else can replace it): a folder another user prepared in a shared temp
/// dir is refused, never written into.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let uid = nix::unistd::getuid().as_raw();
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    for (folder, is_parent) in [(Some(dir), false), (parent, true)] {
        let Some(folder) = folder else { continue };
        let meta = std::fs::symlink_metadata(folder)?;
        let sticky_parent = is_parent && meta.mode() & 0o1000 != 0;
        let ours = meta.uid() == uid || (is_parent && sticky_parent && meta.uid() == 0);
        if !meta.is_dir() || !ours || (meta.mode() & 0o022 != 0 && !sticky_parent) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a folder of ours that only we can write",
                    folder.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The private folder under `spill_dir` holding session `label`'s spill files and job logs;
/// removed when the session closes.
pub fn session_dir(spill_dir: &Path, label: &str) -> PathBuf {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    spill_dir.join(safe)
}

/// Writes `text` to a new private file in session `label`'s folder under `dir`; returns its path.
pub fn spill(dir: &Path, label: &str, text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let mut f = new_spill_file(dir, label)?;
    f.1.write_all(text.as_bytes())?;
    Ok(f.0)
}

/// A new, empty private spill file in session `label`'s folder under `dir`.
pub fn new_spill_file(dir: &Path, label: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    new_file_in(&session_dir(dir, label))
}

/// A new, empty private file `output-<time>-<n>.txt` in `dir` (created private if missing).
pub fn new_file_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let path = dir.join(format!(
        "output-{stamp}-{}.txt",
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    Ok((path, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_follows_the_window_but_never_passes_the_default() {
        assert_eq!(cap_for_window(None), OUTPUT_CAP_CHARS);
        assert_eq!(cap_for_window(Some(200_000)), OUTPUT_CAP_CHARS);
        assert_eq!(cap_for_window(Some(8_000)), 8_000);
        assert_eq!(cap_for_window(Some(100)), MIN_CAP_CHARS);
    }

    #[test]
    fn a_users_temp_folder_is_private_and_refused_when_others_can_write_it() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let temp = tempfile::tempdir().unwrap();
        let dir = user_temp_dir(temp.path(), "mcp");
        let uid = nix::unistd::getuid().as_raw();
        assert!(
            dir.ends_with(format!("synapse-{uid}/mcp")),
            "{}",
            dir.display()
        );
        private_dir(&dir).unwrap();
        for folder in [&dir, &dir.parent().unwrap().to_path_buf()] {
            assert_eq!(std::fs::metadata(folder).unwrap().mode() & 0o777, 0o700);
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(private_dir(&dir).is_err());
        let link = temp.path().join("elsewhere");
        std::os::unix::fs::symlink(temp.path(), &link).unwrap();
        assert!(private_dir(&link).is_err(), "a symlink is not our folder");
    }

    #[test]
    fn a_long_result_keeps_head_and_tail_and_spills_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let policy = OutputPolicy::new(1_000, dir.path().to_path_buf());
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let out = policy.apply("s/1", text.clone());
        assert!(
            out.starts_with("line 0\n") && out.ends_with("line 9999\n"),
            "{out}"
        );
        assert!(out.chars().count() < 1_600, "{}", out.len());
        let path = out
            .split("is in ")
            .nth(1)
            .and_then(|s| s.split(';').next())
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        assert_eq!(policy.apply("s", "short".into()), "short");
    }
}
