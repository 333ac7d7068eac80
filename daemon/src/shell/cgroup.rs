//! How a session's process limit is enforced, chosen once at start and logged:
//!
//! 1. **A pids cgroup per session** where the daemon can make one: cgroup v2 when the pids
//!    controller is available in the daemon's own cgroup and the daemon is alone there (a
//!    service with `Delegate=yes`): the daemon moves itself into a leaf `synapsed/`, enables
//!    `+pids` for the children and makes each session a sibling `session-<n>/`; else cgroup v1
//!    when the `pids` hierarchy is writable (root, or a delegated subtree): each session is
//!    `<daemon's pids cgroup>/synapsed-<pid>/session-<n>/`. The session's keepers join it before
//!    they start anything ([`synapse_sandbox::KeeperSpec::cgroup`]), so its `pids.max` counts
//!    every process of the session — shells, jobs, `setsid` daemons — and `fork` fails with
//!    `EAGAIN` past it, for root too. At the session's end whatever is still listed there is
//!    killed and the folder removed; at start, folders of daemons that are gone are removed.
//! 2. **`RLIMIT_NPROC`** otherwise (not root): each keeper sets the limit to the processes the
//!    user has at that moment plus the session's maximum. The kernel counts every process of the
//!    real uid, so this bounds a fork bomb but is shared with the user's other processes.
//! 3. **Nothing** for root without a writable pids cgroup: root is not bound by `RLIMIT_NPROC`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use synapse_sandbox::KeeperSpec;

/// Prefix of the per-daemon folder in a v1 pids hierarchy (followed by the daemon's pid).
const DAEMON_PREFIX: &str = "synapsed-";
/// The v2 leaf the daemon moves itself into.
const V2_DAEMON_LEAF: &str = "synapsed";
/// Prefix of a session's cgroup folder.
const SESSION_PREFIX: &str = "session-";
/// How long ending a cgroup's processes may take before its folder is left for the next start.
const END_DEADLINE: Duration = Duration::from_secs(2);
const END_POLL: Duration = Duration::from_millis(10);

/// The mechanism in force for every session of this daemon.
#[derive(Debug)]
pub enum Enforcement {
    Cgroup(PidsRoot),
    Rlimit,
    Unenforced { reason: String },
}

/// Where session cgroups are made.
#[derive(Debug)]
pub struct PidsRoot {
    version: u8,
    dir: PathBuf,
}

impl Enforcement {
    /// One line for the log: what is enforced where.
    pub fn describe(&self) -> String {
        match self {
            Enforcement::Cgroup(root) => format!(
                "a pids cgroup per session (cgroup v{}, under {}): every process of the session \
                 counts, root's too",
                root.version,
                root.dir.display()
            ),
            Enforcement::Rlimit => "RLIMIT_NPROC per session shell: the processes this user \
                                    already has plus the session's maximum (no writable pids \
                                    cgroup here)"
                .into(),
            Enforcement::Unenforced { reason } => format!("not enforced: {reason}"),
        }
    }
}

/// The mechanism, detected (and logged) on first use.
pub fn enforcement() -> &'static Enforcement {
    static ENFORCEMENT: OnceLock<Enforcement> = OnceLock::new();
    ENFORCEMENT.get_or_init(|| {
        let found = detect();
        match &found {
            Enforcement::Unenforced { .. } => {
                tracing::warn!("per-session process limit: {}", found.describe());
            }
            _ => tracing::info!("per-session process limit: {}", found.describe()),
        }
        found
    })
}

fn detect() -> Enforcement {
    let mut why = Vec::new();
    #[cfg(target_os = "linux")]
    {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        match v2_root(&mounts, &own) {
            Ok(root) => return Enforcement::Cgroup(root),
            Err(e) => why.push(format!("cgroup v2: {e}")),
        }
        match v1_root(&mounts, &own) {
            Ok(root) => return Enforcement::Cgroup(root),
            Err(e) => why.push(format!("cgroup v1: {e}")),
        }
    }
    #[cfg(not(target_os = "linux"))]
    why.push("cgroups are Linux-only".to_owned());
    if nix::unistd::geteuid().is_root() {
        Enforcement::Unenforced {
            reason: format!(
                "the daemon runs as root, which RLIMIT_NPROC does not bind, and has no writable \
                 pids cgroup ({})",
                why.join("; ")
            ),
        }
    } else {
        tracing::debug!("no pids cgroup: {}", why.join("; "));
        Enforcement::Rlimit
    }
}

/// One mount from `/proc/self/mountinfo`: its root within the hierarchy, where it is mounted,
/// its type and its super options.
struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

fn mounts(text: &str) -> impl Iterator<Item = Mount> + '_ {
    text.lines().filter_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let mut after = after.split(' ');
        Some(Mount {
            root: unescape(fields.get(3)?),
            point: PathBuf::from(unescape(fields.get(4)?)),
            fstype: after.next()?.to_owned(),
            options: after.nth(1).unwrap_or("").to_owned(),
        })
    })
}

/// mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = field
                .get(i + 1..i + 4)
                .and_then(|o| u8::from_str_radix(o, 8).ok())
        {
            out.push(code);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The daemon's folder in the hierarchy mounted at `mount`: its mount point plus the daemon's
/// cgroup path (relative to the mount's own root).
fn cgroup_dir(mount: &Mount, path: &str) -> PathBuf {
    let rel = path
        .strip_prefix(mount.root.trim_end_matches('/'))
        .unwrap_or(path)
        .trim_start_matches('/');
    mount.point.join(rel)
}

/// The daemon's cgroup path in the hierarchy whose controller list `matches`.
fn own_path(own: &str, matches: impl Fn(&str) -> bool) -> Option<&str> {
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        matches(controllers).then_some(path)
    })
}

fn v2_root(mounts_text: &str, own: &str) -> Result<PidsRoot, String> {
    let mount = mounts(mounts_text)
        .find(|m| m.fstype == "cgroup2")
        .ok_or("no cgroup2 mount")?;
    let path = own_path(own, str::is_empty).ok_or("the daemon has no v2 cgroup")?;
    let dir = cgroup_dir(&mount, path);
    let controllers = read(&dir.join("cgroup.controllers"))?;
    if !controllers.split_whitespace().any(|c| c == "pids") {
        return Err(format!(
            "the pids controller is not available in {}",
            dir.display()
        ));
    }
    let me = std::process::id().to_string();
    let procs = read(&dir.join("cgroup.procs"))?;
    if procs.split_whitespace().any(|p| p != me) {
        return Err(format!(
            "other processes share the daemon's cgroup {} (run it as a service with Delegate=yes)",
            dir.display()
        ));
    }
    let leaf = dir.join(V2_DAEMON_LEAF);
    make_dir(&leaf)?;
    write(&leaf.join("cgroup.procs"), &me)?;
    if let Err(e) = write(&dir.join("cgroup.subtree_control"), "+pids") {
        let _ = write(&dir.join("cgroup.procs"), &me);
        let _ = std::fs::remove_dir(&leaf);
        return Err(e);
    }
    remove_stale_sessions(&dir);
    Ok(PidsRoot { version: 2, dir })
}

fn v1_root(mounts_text: &str, own: &str) -> Result<PidsRoot, String> {
    let has_pids = |list: &str| list.split(',').any(|c| c == "pids");
    let mount = mounts(mounts_text)
        .find(|m| m.fstype == "cgroup" && has_pids(&m.options))
        .ok_or("no pids hierarchy mounted")?;
    let path = own_path(own, has_pids).ok_or("the daemon has no pids cgroup")?;
    let parent = cgroup_dir(&mount, path);
    remove_stale_daemons(&parent);
    let dir = parent.join(format!("{DAEMON_PREFIX}{}", std::process::id()));
    make_dir(&dir)?;
    // A folder left by an earlier daemon with this pid is ours now: empty it.
    remove_stale_sessions(&dir);
    Ok(PidsRoot { version: 1, dir })
}

/// Removes the per-daemon folders whose daemon is gone, with every session in them.
fn remove_stale_daemons(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DAEMON_PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() as i32 || kill(Pid::from_raw(pid), None).is_ok() {
            continue;
        }
        remove_stale_sessions(&entry.path());
        if std::fs::remove_dir(entry.path()).is_ok() {
            tracing::info!(folder = %entry.path().display(), "removed the cgroup of a daemon that is gone");
        }
    }
}

/// Ends and removes every `session-*` folder in `dir` (left by a daemon that is gone).
fn remove_stale_sessions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(SESSION_PREFIX))
        {
            end_and_remove(&entry.path(), END_DEADLINE);
        }
    }
}

/// Removes the daemon's own per-daemon folder (v1) once its sessions are gone.
pub fn release_daemon_folder() {
    if let Enforcement::Cgroup(root) = enforcement()
        && root.version == 1
    {
        let _ = std::fs::remove_dir(&root.dir);
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn make_dir(path: &Path) -> Result<(), String> {
    match std::fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot create {}: {e}", path.display())),
    }
}

/// Kills every process listed in the cgroup `dir` until none is left (or `deadline` passed),
/// then removes the folder. Blocking; short unless something will not die.
fn end_and_remove(dir: &Path, deadline: Duration) -> bool {
    let until = std::time::Instant::now() + deadline;
    // v2 (5.14+) has a one-step kill of the whole cgroup.
    let one_step = dir.join("cgroup.kill");
    if one_step.exists() {
        let _ = std::fs::write(one_step, "1");
    }
    loop {
        let procs: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        for pid in &procs {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        if (procs.is_empty() && std::fs::remove_dir(dir).is_ok())
            || !dir.exists()
            || std::time::Instant::now() >= until
        {
            break;
        }
        std::thread::sleep(END_POLL);
    }
    !dir.exists()
}

/// One session's pids cgroup; ended and removed when dropped (or by [`SessionCgroup::end`]).
#[derive(Debug)]
pub struct SessionCgroup {
    dir: PathBuf,
}

impl SessionCgroup {
    fn create(root: &PidsRoot, max_processes: u64) -> Result<Self, String> {
        static SEQ: AtomicU64 = AtomicU64::new(1);
        let dir = root.dir.join(format!(
            "{SESSION_PREFIX}{}",
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        make_dir(&dir)?;
        let cgroup = Self { dir };
        cgroup.set_max(max_processes)?;
        Ok(cgroup)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session's maximum; one more for its keeper, which the model never sees.
    fn set_max(&self, max_processes: u64) -> Result<(), String> {
        write(
            &self.dir.join("pids.max"),
            &max_processes.saturating_add(1).to_string(),
        )
    }

    /// How many times a fork was refused for the limit (the `max` count of `pids.events`).
    fn limit_hits(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("pids.events"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("max "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Kills whatever is still in the cgroup and removes it (blocking, bounded).
    pub fn end(&self) {
        if self.dir.exists() && !end_and_remove(&self.dir, END_DEADLINE) {
            tracing::warn!(folder = %self.dir.display(), "processes of an ended session would not die; their cgroup is left for the next start");
        }
    }
}

impl Drop for SessionCgroup {
    fn drop(&mut self) {
        if self.dir.exists() {
            end_and_remove(&self.dir, Duration::ZERO);
        }
    }
}

/// The process limit of one session's shells and jobs, as their keepers enforce it.
#[derive(Debug, Clone, Default)]
pub enum ProcessLimit {
    /// No limit (tests, and where nothing can enforce one).
    #[default]
    None,
    Cgroup {
        cgroup: Arc<SessionCgroup>,
        max: Arc<AtomicU64>,
        /// `pids.events` max count when last looked at.
        seen_hits: Arc<AtomicU64>,
    },
    Rlimit(Arc<AtomicU64>),
}

impl ProcessLimit {
    /// The limit for a new session allowed `max_processes`, by the daemon's mechanism.
    pub fn for_session(max_processes: u64) -> Self {
        match enforcement() {
            Enforcement::Cgroup(root) => match SessionCgroup::create(root, max_processes) {
                Ok(cgroup) => ProcessLimit::Cgroup {
                    cgroup: Arc::new(cgroup),
                    max: Arc::new(AtomicU64::new(max_processes)),
                    seen_hits: Arc::new(AtomicU64::new(0)),
                },
                Err(e) => {
                    tracing::warn!(
                        "no cgroup for a new session ({e}); its processes are not limited"
                    );
                    ProcessLimit::None
                }
            },
            Enforcement::Rlimit => ProcessLimit::Rlimit(Arc::new(AtomicU64::new(max_processes))),
            Enforcement::Unenforced { .. } => ProcessLimit::None,
        }
    }

    /// A changed setting: at once for a cgroup, from the next shell or job for a rlimit.
    pub fn set_max(&self, max_processes: u64) {
        match self {
            ProcessLimit::None => {}
            ProcessLimit::Cgroup { cgroup, max, .. } => {
                if max.swap(max_processes, Ordering::Relaxed) != max_processes
                    && let Err(e) = cgroup.set_max(max_processes)
                {
                    tracing::warn!("cannot change a session's process limit: {e}");
                }
            }
            ProcessLimit::Rlimit(max) => max.store(max_processes, Ordering::Relaxed),
        }
    }

    /// What a keeper of this session enforces, giving its program `grace` to stop.
    pub fn keeper(&self, grace: Duration) -> KeeperSpec {
        KeeperSpec {
            cgroup: match self {
                ProcessLimit::Cgroup { cgroup, .. } => Some(cgroup.dir().to_path_buf()),
                _ => None,
            },
            max_processes: match self {
                ProcessLimit::Rlimit(max) => Some(max.load(Ordering::Relaxed)),
                _ => None,
            },
            grace,
        }
    }

    /// The note for the model when the session ran into its limit since the last look.
    pub fn limit_note(&self) -> Option<String> {
        let ProcessLimit::Cgroup {
            cgroup,
            max,
            seen_hits,
        } = self
        else {
            return None;
        };
        let hits = cgroup.limit_hits();
        (seen_hits.swap(hits, Ordering::Relaxed) < hits).then(|| {
            format!(
                "this session reached its limit of {} processes (settings.json \
                 shell.maxProcesses): starting more failed (\"Resource temporarily unavailable\"); \
                 wait for or stop some of its processes",
                max.load(Ordering::Relaxed)
            )
        })
    }

    /// Ends what is left in the session's cgroup and removes it (the session is closing).
    pub async fn end(&self) {
        if let ProcessLimit::Cgroup { cgroup, .. } = self {
            let cgroup = cgroup.clone();
            let _ = tokio::task::spawn_blocking(move || cgroup.end()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
25 30 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
33 25 0:29 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
34 25 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
40 30 0:40 /inner /mnt/with\\040space rw - cgroup cgroup rw,cpu,pids
";

    #[test]
    fn mountinfo_names_each_hierarchy_with_its_options() {
        let found: Vec<Mount> = mounts(MOUNTINFO).collect();
        assert_eq!(found.len(), 5);
        let pids = found
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.contains("pids"))
            .unwrap();
        assert_eq!(pids.point, PathBuf::from("/sys/fs/cgroup/pids"));
        assert_eq!(found[4].point, PathBuf::from("/mnt/with space"));
        assert_eq!(found[4].root, "/inner");
        assert!(found.iter().any(|m| m.fstype == "cgroup2"));
    }

    #[test]
    fn the_daemons_folder_joins_the_mount_and_its_cgroup_path() {
        let own = "9:name=systemd:/\n8:pids:/user/42\n0::/user.slice/x.service\n";
        let has_pids = |l: &str| l.split(',').any(|c| c == "pids");
        assert_eq!(own_path(own, has_pids), Some("/user/42"));
        assert_eq!(own_path(own, str::is_empty), Some("/user.slice/x.service"));
        let all: Vec<Mount> = mounts(MOUNTINFO).collect();
        assert_eq!(
            cgroup_dir(&all[1], "/user/42"),
            PathBuf::from("/sys/fs/cgroup/pids/user/42")
        );
        // A mount of a sub-tree (a cgroup namespace, a bind mount) strips its own root.
        assert_eq!(
            cgroup_dir(&all[4], "/inner/s"),
            PathBuf::from("/mnt/with space/s")
        );
    }

    #[test]
    fn a_session_cgroup_in_a_fake_hierarchy_gets_its_limit_and_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = PidsRoot {
            version: 1,
            dir: tmp.path().to_path_buf(),
        };
        let cgroup = SessionCgroup::create(&root, 50).unwrap();
        assert_eq!(
            std::fs::read_to_string(cgroup.dir().join("pids.max")).unwrap(),
            "51",
            "the keeper is not counted against the session"
        );
        std::fs::write(cgroup.dir().join("pids.events"), "max 3\n").unwrap();
        assert_eq!(cgroup.limit_hits(), 3);
        // A real cgroup folder holds only kernel files; a plain one must be emptied first.
        for f in ["pids.max", "pids.events"] {
            std::fs::remove_file(cgroup.dir().join(f)).unwrap();
        }
        let dir = cgroup.dir().to_path_buf();
        drop(cgroup);
        assert!(!dir.exists());
    }
}
