//! Finding and killing the processes that belong to one agent shell.
//!
//! Every shell is started with a random tag in its environment ([`SHELL_TAG_VAR`]); everything it
//! starts inherits it, even processes that leave the shell's process tree (`setsid`, double
//! forks). On Linux we find a shell's processes by that tag and by parent links in `/proc`, and
//! kill them by process group: the shell runs with job control (`set -m`), so each pipeline it
//! starts is its own group. Elsewhere only the shell's own process group is known.

use std::time::Duration;

use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;

use synapse_shared::shell_env::{COMMAND_TAG_VAR, SHELL_TAG_VAR};

/// Time between polls while waiting for killed processes to disappear.
const KILL_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// One process of a shell, as seen in `/proc`. The start time tells a live process from a
/// recycled pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellProcess {
    pub pid: i32,
    pub pgid: i32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub start_ticks: u64,
}

/// The processes of a shell: tagged with `tag` or descending from `root_pid` (the shell
/// itself included). Pass no root once the shell has been reaped: its pid may be reused.
pub fn shell_processes(tag: &str, root_pid: Option<i32>) -> Vec<ShellProcess> {
    tagged_processes(SHELL_TAG_VAR, tag, root_pid)
}

/// The processes one command started (those carrying its tag, and their children).
pub fn command_processes(tag: &str) -> Vec<ShellProcess> {
    tagged_processes(COMMAND_TAG_VAR, tag, None)
}

/// Processes whose environment has `var=value`, those descending from `root_pid`, and the
/// children of all of them.
#[cfg(target_os = "linux")]
fn tagged_processes(var: &str, value: &str, root_pid: Option<i32>) -> Vec<ShellProcess> {
    use std::collections::{HashMap, HashSet};

    let needle = format!("{var}={value}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut all: HashMap<i32, (ShellProcess, i32)> = HashMap::new();
    let mut tagged: HashSet<i32> = HashSet::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Some((proc_, ppid)) = read_stat(pid) else {
            continue;
        };
        all.insert(pid, (proc_, ppid));
        if let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ"))
            && environ
                .split(|&b| b == 0)
                .any(|var| var == needle.as_bytes())
        {
            tagged.insert(pid);
        }
    }
    let mut members: HashSet<i32> = tagged;
    members.extend(root_pid);
    // Close over parent links: a child of a member is a member.
    loop {
        let before = members.len();
        for (pid, (_, ppid)) in &all {
            if members.contains(ppid) {
                members.insert(*pid);
            }
        }
        if members.len() == before {
            break;
        }
    }
    let mut out: Vec<ShellProcess> = members
        .iter()
        .filter_map(|pid| all.get(pid).map(|(p, _)| *p))
        .collect();
    out.sort_by_key(|p| p.pid);
    out
}

#[cfg(not(target_os = "linux"))]
fn tagged_processes(_var: &str, _value: &str, _root_pid: Option<i32>) -> Vec<ShellProcess> {
    Vec::new()
}

/// `(process, parent pid)` from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn read_stat(pid: i32) -> Option<(ShellProcess, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): ppid is field 4, pgrp 5, starttime 22.
    let state = *fields.first()?;
    if state == "Z" || state == "X" {
        return None;
    }
    let ppid = fields.get(1)?.parse().ok()?;
    let pgid = fields.get(2)?.parse().ok()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some((
        ShellProcess {
            pid,
            pgid,
            start_ticks,
        },
        ppid,
    ))
}

/// Sends `signal` to each process's group (or to the process alone when it shares the group
/// of `keep_pid` or of the daemon), never to `keep_pid` itself.
pub fn signal_processes(procs: &[ShellProcess], keep_pid: Option<i32>, sig: Signal) {
    let own_group = nix::unistd::getpgrp().as_raw();
    let keep_group = keep_pid.unwrap_or(-1);
    let mut groups_done = Vec::new();
    for p in procs {
        if Some(p.pid) == keep_pid || p.pid == std::process::id() as i32 {
            continue;
        }
        if p.pgid > 1 && p.pgid != own_group && p.pgid != keep_group {
            if !groups_done.contains(&p.pgid) {
                groups_done.push(p.pgid);
                let _ = signal::killpg(Pid::from_raw(p.pgid), sig);
            }
        } else {
            let _ = signal::kill(Pid::from_raw(p.pid), sig);
        }
    }
}

/// True when none of `procs` is still alive (zombies count as gone).
pub fn all_gone(procs: &[ShellProcess]) -> bool {
    procs.iter().all(|p| !alive(p))
}

fn alive(p: &ShellProcess) -> bool {
    #[cfg(target_os = "linux")]
    {
        // Same pid and same start time: not a recycled pid.
        read_stat(p.pid).is_some_and(|(now, _)| now.start_ticks == p.start_ticks)
    }
    #[cfg(not(target_os = "linux"))]
    {
        signal::kill(Pid::from_raw(p.pid), None).is_ok()
    }
}

/// SIGTERM, then SIGKILL for whatever is left after `grace`. Returns when all are gone or
/// shortly after the SIGKILL.
pub async fn terminate(procs: &[ShellProcess], keep_pid: Option<i32>, grace: Duration) {
    let targets: Vec<ShellProcess> = procs
        .iter()
        .copied()
        .filter(|p| Some(p.pid) != keep_pid)
        .collect();
    if targets.is_empty() {
        return;
    }
    signal_processes(&targets, keep_pid, Signal::SIGTERM);
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        if all_gone(&targets) {
            return;
        }
        tokio::time::sleep(KILL_POLL_INTERVAL).await;
    }
    signal_processes(&targets, keep_pid, Signal::SIGKILL);
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline && !all_gone(&targets) {
        tokio::time::sleep(KILL_POLL_INTERVAL).await;
    }
}

/// SIGKILL at once, without waiting (for `Drop`), sparing `keep_pid` and its group.
pub fn kill_now(procs: &[ShellProcess], keep_pid: Option<i32>) {
    signal_processes(procs, keep_pid, Signal::SIGKILL);
}
