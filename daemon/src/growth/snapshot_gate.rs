//! Versions before every automatic change: the gate the skill sub-agent's commands pass.
//!
//! **Guarantee.** For one run of the skill sub-agent, every user skill (a folder of the user
//! skills folder with a `SKILL.md`) that existed when the run started and differs when it ends
//! has a version holding its bytes from the start of the run — whether the change came from
//! `write`/`edit`, from a native command whose targets the command parser sees (`sed -i`,
//! `cp`, `mv`, `tee`, `>`), or from one it cannot see into (`python3 -c …`, a script, `eval`).
//! Skills created during the run get no version (there is nothing to go back to).
//!
//! How, in the order a run meets them:
//! 1. Before `write`/`edit`, and before a native command for each target it names inside the
//!    skills folder ([`synapse_permissions::parse`] + [`synapse_permissions::write_targets`]):
//!    that skill is saved as a version, once per run.
//! 2. Before the run's first native command (runs that only search, or only use
//!    `write`/`edit`, never pay for it): a baseline — the fingerprint (size, mtime, inode,
//!    mode of every file and folder) of each skill, and a copy of the whole skills folder into
//!    a staging folder beside the versions, when it holds at most [`STAGING_MAX_BYTES`]. From
//!    then on, step 1 saves from that copy, so a skill changed unseen by one command and named
//!    by a later one still gets its start-of-run bytes.
//! 3. When the run ends (completed, failed or cancelled), [`SnapshotGate::finish`]: each skill
//!    whose fingerprint changed and that has no version from this run is saved from the copy.
//!
//! Limits, said plainly: when the skills folder is over [`STAGING_MAX_BYTES`] there is no
//! copy, so a change step 1 could not see is only detected and reported as unversioned
//! ([`RunVersions::unversioned`]). A background process the sub-agent leaves running may
//! change a skill after step 3. Symlinks inside a skill are not versioned (as in
//! [`super::versions`]).

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;

use super::versions::{Versions, copy_tree};
use synapse_command::gate::{CommandGate, Effect, GateAction, GateInfo, GateVerdict};
use synapse_permissions::{Context, parse, resolve, write_targets};

/// The largest skills folder copied before a run's first native command.
pub const STAGING_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Why a version was saved.
pub const REASON_BEFORE: &str = "before an automatic change";
const REASON_AFTER: &str = "before an automatic change (found after a shell command)";

/// What one run saved, and what it changed without a version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunVersions {
    /// (skill, version number), in the order they were saved.
    pub saved: Vec<(String, u32)>,
    /// Skills changed by a command no version could be taken for (see the module limits).
    pub unversioned: Vec<String>,
}

impl RunVersions {
    /// Lines for the user about the versions saved, or not saved, by the run.
    pub fn notes(&self) -> String {
        let mut out = String::new();
        for (name, number) in &self.saved {
            out.push_str(&format!(
                "\n(The previous {name} was saved as version {number}: `synapse skill rollback {name} {number}` restores it.)"
            ));
        }
        for name in &self.unversioned {
            out.push_str(&format!(
                "\n(Warning: {name} was changed by a shell command and no version of it could be saved; see the daemon log.)"
            ));
        }
        out
    }
}

/// Every file and folder of one skill: (relative path, size, mtime s, mtime ns, inode, mode).
type Fingerprint = Vec<(PathBuf, u64, i64, i64, u64, u32)>;

struct Baseline {
    prints: BTreeMap<String, Fingerprint>,
    /// The skills folder as it was; `None` when it was too large to copy.
    copy: Option<tempfile::TempDir>,
}

#[derive(Default)]
struct RunState {
    /// Skills present at the run's first command (nothing had changed yet).
    existing: Option<HashSet<String>>,
    baseline: Option<Baseline>,
    versions: RunVersions,
}

struct Inner {
    root: PathBuf,
    versions: Versions,
    /// The largest skills folder copied for the baseline.
    copy_limit: u64,
    /// For `~` in command paths.
    home: PathBuf,
    state: Mutex<RunState>,
}

/// One run's gate: never refuses, saves versions first. Make one per run.
#[derive(Clone)]
pub struct SnapshotGate(Arc<Inner>);

/// What a command may do to the skills folder.
enum Work {
    Paths(Vec<PathBuf>),
    Shell(String),
}

impl SnapshotGate {
    /// A gate for skills under `root`, saving into `versions`.
    pub fn new(root: PathBuf, versions: Versions) -> Self {
        Self::with_copy_limit(root, versions, STAGING_MAX_BYTES)
    }

    /// The same, copying the skills folder only up to `copy_limit` bytes.
    pub fn with_copy_limit(root: PathBuf, versions: Versions, copy_limit: u64) -> Self {
        Self(Arc::new(Inner {
            root,
            versions,
            copy_limit,
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/".into()),
            state: Mutex::new(RunState::default()),
        }))
    }

    /// Step 3 (blocking I/O): versions for skills changed unseen; what the run saved.
    pub fn finish(&self) -> RunVersions {
        let inner = &self.0;
        let mut state = inner.state.lock();
        let mut versions = std::mem::take(&mut state.versions);
        let Some(baseline) = state.baseline.take() else {
            return versions;
        };
        for (name, before) in &baseline.prints {
            if versions.saved.iter().any(|(n, _)| n == name)
                || fingerprint(&inner.root.join(name)).0 == *before
            {
                continue;
            }
            match &baseline.copy {
                Some(copy) => {
                    inner.save_from(&mut versions, name, &copy.path().join(name), REASON_AFTER)
                }
                None => {
                    tracing::warn!(skill = %name, "changed by the skill sub-agent without a version (the skills folder is too large to copy)");
                    versions.unversioned.push(name.clone());
                }
            }
        }
        versions
    }
}

impl CommandGate for SnapshotGate {
    fn check<'a>(
        &'a self,
        action: GateAction<'a>,
        info: GateInfo<'a>,
    ) -> BoxFuture<'a, GateVerdict> {
        let work = match (&action, action.shell_line()) {
            (_, Some(line)) => Some(Work::Shell(line)),
            (
                GateAction::Agent {
                    effect: Effect::Writes(paths),
                    ..
                },
                None,
            ) => Some(Work::Paths(paths.clone())),
            _ => None,
        };
        let inner = self.0.clone();
        let cwd = info.cwd.to_path_buf();
        Box::pin(async move {
            if let Some(work) = work {
                let _ = tokio::task::spawn_blocking(move || inner.before(work, &cwd)).await;
            }
            GateVerdict::Run
        })
    }
}

impl Inner {
    /// Steps 1 and 2 for one command.
    fn before(&self, work: Work, cwd: &Path) {
        let mut state = self.state.lock();
        if state.existing.is_none() {
            state.existing = Some(skill_names(&self.root));
        }
        let targets = match work {
            Work::Paths(paths) => paths,
            Work::Shell(line) => {
                if state.baseline.is_none() {
                    state.baseline = Some(self.baseline());
                }
                let no_pids = |_: i32| false;
                let ctx = Context {
                    cwd,
                    home: &self.home,
                    synapse_home: &self.root,
                    temp_dir: &self.root,
                    extra_writable: &[],
                    sandboxed: false,
                    is_session_pid: &no_pids,
                    // Only used to place write targets, which never depend on command names.
                    agent_commands: &Default::default(),
                };
                parse(&line)
                    .all_commands()
                    .flat_map(write_targets)
                    .map(|t| resolve(&ctx, &t))
                    .collect()
            }
        };
        for target in targets {
            let Some(name) = self.skill_of(&target) else {
                continue;
            };
            let state = &mut *state;
            let existed = state.existing.as_ref().is_some_and(|e| e.contains(&name));
            if !existed || state.versions.saved.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let copied = state
                .baseline
                .as_ref()
                .and_then(|b| b.copy.as_ref())
                .map(|c| c.path().join(&name))
                .filter(|p| p.is_dir());
            let source = copied.unwrap_or_else(|| self.root.join(&name));
            self.save_from(&mut state.versions, &name, &source, REASON_BEFORE);
        }
    }

    /// The skill a path inside the skills folder belongs to.
    fn skill_of(&self, path: &Path) -> Option<String> {
        let rel = synapse_shared::paths::normalize(path);
        let rel = rel.strip_prefix(&self.root).ok()?;
        Some(rel.components().next()?.as_os_str().to_str()?.to_string())
    }

    fn save_from(&self, versions: &mut RunVersions, name: &str, source: &Path, reason: &str) {
        match self.versions.snapshot(name, source, reason) {
            Ok(number) => versions.saved.push((name.to_string(), number)),
            Err(e) => {
                tracing::error!("cannot save a version of skill {name}: {e}");
                versions.unversioned.push(name.to_string());
            }
        }
    }

    /// Step 2: fingerprints of every skill, and a copy of the folder when small enough.
    fn baseline(&self) -> Baseline {
        let mut prints = BTreeMap::new();
        let mut bytes = 0u64;
        for name in skill_names(&self.root) {
            let (print, size) = fingerprint(&self.root.join(&name));
            bytes += size;
            prints.insert(name, print);
        }
        let copy = if bytes <= self.copy_limit {
            self.copy_of(prints.keys())
        } else {
            tracing::warn!(
                bytes,
                limit = self.copy_limit,
                "skills folder too large to copy before the skill sub-agent's shell commands"
            );
            None
        };
        Baseline { prints, copy }
    }

    fn copy_of<'n>(&self, names: impl Iterator<Item = &'n String>) -> Option<tempfile::TempDir> {
        let staging = match self.versions.staging() {
            Ok(dir) => dir,
            Err(e) => {
                tracing::error!("cannot make a staging folder for skill versions: {e}");
                return None;
            }
        };
        for name in names {
            if let Err(e) = copy_tree(&self.root.join(name), &staging.path().join(name)) {
                tracing::error!("cannot copy skill {name} before a shell command: {e}");
                return None;
            }
        }
        Some(staging)
    }
}

/// Folders of `root` that hold a SKILL.md.
fn skill_names(root: &Path) -> HashSet<String> {
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("SKILL.md").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect()
}

/// The fingerprint of the tree at `dir` (empty when it is gone) and its size in bytes.
fn fingerprint(dir: &Path) -> (Fingerprint, u64) {
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let path = rel.join(entry.file_name());
            if meta.is_dir() {
                pending.push(path.clone());
            } else if !meta.is_file() {
                continue;
            }
            bytes += meta.len();
            out.push((
                path,
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ino(),
                meta.mode(),
            ));
        }
    }
    out.sort();
    (out, bytes)
}

#[cfg(test)]
#[path = "snapshot_gate_tests.rs"]
mod tests;
