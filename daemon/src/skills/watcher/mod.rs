//! Keeps the store in step with the disk: a notify watcher (inotify on Linux) over every skill
//! root (recursive), every not-yet-existing possible root through its nearest existing ancestor
//! (non-recursive), the plugin cache, and the Synapse home (for settings.json).
//!
//! notify's own thread forwards the paths of each event (Access events — opens, reads — dropped
//! there) to the "skill-watcher" thread, which owns the watcher. That thread debounces them
//! ([`debounce`]: quiet time per path, capped) and hands each due batch to
//! [`SkillStore::apply_paths`], then recomputes the watch plan and diffs it against what is
//! watched, so a skills folder that is deleted and recreated, or a project `.claude/skills` that
//! appears, is picked up. With nothing pending it blocks without a timeout: an idle daemon's
//! watcher threads do not wake up. The filesystem side sits behind [`FsWatch`] so planning is
//! testable.
//!
//! A call that wrote under a watched folder does not wait for the quiet time: at its end the
//! shell layer asks [`SkillFlush::flush`] to apply what is pending now (only when an event
//! came that is not applied yet: a counter, no round trip otherwise), so the `skill:` command
//! of a script the line wrote exists when its result returns.

mod debounce;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Instant;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::error::SkillError;
use super::source::{RootConfig, SkillRoot};
use super::store::SkillStore;
use debounce::Pending;
pub use debounce::{WATCH_DEBOUNCE, WATCH_MAX_DELAY};

/// The filesystem watch operations the watcher needs.
pub trait FsWatch: Send {
    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), String>;
    fn unwatch(&mut self, path: &Path);
}

/// Path → recursive, for every folder that must be watched now.
pub fn watch_plan(
    config: &RootConfig,
    roots: &[SkillRoot],
    home: Option<&Path>,
) -> BTreeMap<PathBuf, bool> {
    let mut wanted: Vec<(PathBuf, bool)> = Vec::new();
    let mut dirs = config.candidate_dirs();
    dirs.extend(roots.iter().map(|r| r.dir.clone()));
    for dir in dirs {
        if dir.is_dir() {
            wanted.push((dir, true));
        } else if let Some(a) = dir.ancestors().skip(1).find(|a| a.is_dir()) {
            wanted.push((a.to_path_buf(), false));
        }
    }
    if let Some(h) = home.filter(|h| h.is_dir()) {
        wanted.push((h.to_path_buf(), false));
    }
    let recursive: Vec<PathBuf> = wanted
        .iter()
        .filter(|(_, r)| *r)
        .map(|(p, _)| p.clone())
        .collect();
    let mut plan = BTreeMap::new();
    for (p, rec) in wanted {
        // A folder inside a recursive watch is already covered (and inotify would share the watch).
        if recursive
            .iter()
            .any(|r| p.starts_with(r) && (p != *r || !rec))
        {
            continue;
        }
        let e = plan.entry(p).or_insert(rec);
        *e |= rec;
    }
    plan
}

/// Applies `plan` to `fs`, given what is watched now; returns the new current set.
pub fn apply_plan(
    fs: &mut dyn FsWatch,
    current: &BTreeMap<PathBuf, bool>,
    plan: BTreeMap<PathBuf, bool>,
) -> BTreeMap<PathBuf, bool> {
    for (p, rec) in current {
        if plan.get(p) != Some(rec) {
            fs.unwatch(p);
        }
    }
    let mut now = BTreeMap::new();
    for (p, rec) in plan {
        if current.get(&p) == Some(&rec) {
            now.insert(p, rec);
            continue;
        }
        match fs.watch(&p, rec) {
            Ok(()) => {
                now.insert(p, rec);
            }
            Err(e) => tracing::warn!(path = %p.display(), "cannot watch skill folder: {e}"),
        }
    }
    now
}

enum Msg {
    Changed(Vec<PathBuf>),
    Rescan,
    Replan,
    /// Apply everything pending now, then answer.
    Flush(tokio::sync::oneshot::Sender<()>),
    Stop,
}

/// Events forwarded to the watcher thread, and how many of them it has applied.
#[derive(Default)]
struct Counts {
    sent: std::sync::atomic::AtomicU64,
    applied: std::sync::atomic::AtomicU64,
}

/// Makes the watcher apply its pending paths at once (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct SkillFlush {
    tx: Arc<parking_lot::Mutex<Sender<Msg>>>,
    counts: Arc<Counts>,
}

/// How long a flush waits for the watcher thread (it applies one burst of changes).
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl SkillFlush {
    /// Applies what the watcher has seen and not applied yet; returns at once when nothing is.
    pub async fn flush(&self) {
        use std::sync::atomic::Ordering;
        if self.counts.sent.load(Ordering::Acquire) == self.counts.applied.load(Ordering::Acquire) {
            return;
        }
        let (ack, done) = tokio::sync::oneshot::channel();
        if self.tx.lock().send(Msg::Flush(ack)).is_err() {
            return;
        }
        let _ = tokio::time::timeout(FLUSH_WAIT, done).await;
    }
}

/// The running watcher; stops when dropped.
pub struct SkillWatcher {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    counts: Arc<Counts>,
}

impl std::fmt::Debug for SkillWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillWatcher").finish_non_exhaustive()
    }
}

struct NotifyFs(RecommendedWatcher);

impl FsWatch for NotifyFs {
    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), String> {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        self.0.watch(path, mode).map_err(|e| e.to_string())
    }
    fn unwatch(&mut self, path: &Path) {
        let _ = self.0.unwatch(path);
    }
}

impl SkillWatcher {
    /// Starts watching the store's roots.
    pub fn start(store: Arc<SkillStore>) -> Result<Self, SkillError> {
        let (tx, rx) = mpsc::channel();
        let events_tx = tx.clone();
        let counts = Arc::new(Counts::default());
        let sent = counts.clone();
        let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let msg = match res {
                Ok(event) if event.need_rescan() => Msg::Rescan,
                // Opens and reads (every skill script run, every `cat`) change nothing.
                Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
                Ok(event) if event.paths.is_empty() => return,
                Ok(event) => {
                    sent.sent.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    Msg::Changed(event.paths)
                }
                Err(e) => {
                    tracing::warn!("skill watcher: {e}");
                    Msg::Rescan
                }
            };
            let _ = events_tx.send(msg);
        })
        .map_err(|e| SkillError::Watch(e.to_string()))?;
        let replan_tx = parking_lot::Mutex::new(tx.clone());
        store.on_roots_changed(Box::new(move || {
            let tx = replan_tx.lock();
            let _ = tx.send(Msg::Replan);
        }));
        // The first watches go in before `start` returns, so a script saved the moment the daemon
        // answers is never missed (the thread would otherwise race the first write).
        let mut fs = NotifyFs(watcher);
        let home = store.paths().settings_file.parent().map(Path::to_path_buf);
        let plan = watch_plan(&store.root_config(), &store.roots(), home.as_deref());
        let current = apply_plan(&mut fs, &BTreeMap::new(), plan);
        let thread = std::thread::Builder::new()
            .name("skill-watcher".into())
            .spawn({
                let counts = counts.clone();
                move || run(store, fs, current, rx, &counts)
            })
            .map_err(|e| SkillError::Watch(e.to_string()))?;
        Ok(Self {
            tx,
            thread: Some(thread),
            counts,
        })
    }

    /// A handle that makes the watcher apply its pending paths now.
    pub fn flusher(&self) -> SkillFlush {
        SkillFlush {
            tx: Arc::new(parking_lot::Mutex::new(self.tx.clone())),
            counts: self.counts.clone(),
        }
    }
}

impl Drop for SkillWatcher {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(
    store: Arc<SkillStore>,
    mut fs: NotifyFs,
    mut current: BTreeMap<PathBuf, bool>,
    rx: Receiver<Msg>,
    counts: &Counts,
) {
    let home = store.paths().settings_file.parent().map(Path::to_path_buf);
    let mut pending = Pending::default();
    // `Changed` messages received so far (each counted in `counts.sent` before it was sent).
    let mut received = 0u64;
    loop {
        // Asleep until a message comes, or until the earliest pending path is due.
        let first = match pending.next_due() {
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return,
            },
            Some(due) => match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            },
        };
        let mut rescan = false;
        let mut replan = false;
        let mut acks = Vec::new();
        let now = Instant::now();
        for m in first.into_iter().chain(rx.try_iter()) {
            match m {
                Msg::Changed(paths) => {
                    received += 1;
                    paths.into_iter().for_each(|p| pending.touch(p, now));
                }
                Msg::Rescan => rescan = true,
                Msg::Replan => replan = true,
                Msg::Flush(ack) => acks.push(ack),
                Msg::Stop => return,
            }
        }
        let due = if acks.is_empty() {
            pending.take_due(Instant::now())
        } else {
            pending.take_all()
        };
        if rescan {
            pending.clear();
            let r = store.refresh();
            tracing::info!(
                skills = r.skills,
                tools = r.tools,
                "skills rescanned after watcher overflow"
            );
        } else if !due.is_empty() {
            // Every due path in one call: one index write per burst.
            if let Some(r) = store.apply_paths(&due) {
                tracing::debug!(
                    skills = r.skills,
                    tools = r.tools,
                    written = r.wrappers_written,
                    removed = r.wrappers_removed,
                    "skills updated"
                );
                for e in &r.errors {
                    tracing::warn!("skills: {e}");
                }
            }
        } else if !replan {
            mark_applied(counts, &pending, received, acks);
            continue;
        }
        let plan = watch_plan(&store.root_config(), &store.roots(), home.as_deref());
        current = apply_plan(&mut fs, &current, plan);
        mark_applied(counts, &pending, received, acks);
    }
}

/// With nothing pending, every event received so far is applied; then the flushes waiting
/// are answered.
fn mark_applied(
    counts: &Counts,
    pending: &Pending,
    received: u64,
    acks: Vec<tokio::sync::oneshot::Sender<()>>,
) {
    if pending.is_empty() {
        counts
            .applied
            .store(received, std::sync::atomic::Ordering::Release);
    }
    for ack in acks {
        let _ = ack.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[derive(Default)]
    struct FakeFs(Vec<String>);
    impl FsWatch for FakeFs {
        fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), String> {
            self.0.push(format!("+{} {recursive}", path.display()));
            Ok(())
        }
        fn unwatch(&mut self, path: &Path) {
            self.0.push(format!("-{}", path.display()));
        }
    }

    #[test]
    fn missing_roots_are_watched_through_ancestors_and_replanned() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let syn = t.path().join("syn");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&syn).unwrap();
        let cfg = RootConfig {
            synapse_skills: syn.join("skills"),
            user_home: Some(home.clone()),
            ..Default::default()
        };
        let plan = watch_plan(&cfg, &cfg.roots(), Some(&syn));
        assert_eq!(
            plan,
            BTreeMap::from([(home.clone(), false), (syn.clone(), false)])
        );
        let mut fs = FakeFs::default();
        let cur = apply_plan(&mut fs, &BTreeMap::new(), plan);

        std::fs::create_dir_all(syn.join("skills")).unwrap();
        let plan = watch_plan(&cfg, &cfg.roots(), Some(&syn));
        assert_eq!(plan.get(&syn.join("skills")), Some(&true));
        fs.0.clear();
        let cur = apply_plan(&mut fs, &cur, plan);
        assert_eq!(
            fs.0,
            vec![format!("+{} true", syn.join("skills").display())]
        );

        std::fs::remove_dir_all(syn.join("skills")).unwrap();
        fs.0.clear();
        apply_plan(&mut fs, &cur, watch_plan(&cfg, &cfg.roots(), Some(&syn)));
        assert_eq!(fs.0, vec![format!("-{}", syn.join("skills").display())]);
    }
}
