//! Processes a killed daemon left behind. Every process the daemon starts — session shells and
//! what they run, MCP servers — carries `SYNAPSE_DAEMON_OWNER=<socket path>` in its environment.
//! A graceful stop kills them all; after a SIGKILL or a crash they would live on. So a new daemon,
//! once it holds the socket's lock (no other daemon for this socket can be alive then), kills
//! every process of its user that carries its socket as owner before it starts anything.
//!
//! Limit: a process that scrubbed its environment (`env -i`) is not recognised.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use synapse_command::daemon_process::OWNER_VAR;

/// Kills the processes left by an earlier daemon of the same socket; returns how many.
pub fn reap(socket: &std::path::Path) -> usize {
    let needle = format!("{OWNER_VAR}={}", socket.display()).into_bytes();
    let own = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|kv| kv == needle.as_slice())
            && kill(Pid::from_raw(pid as i32), Signal::SIGKILL).is_ok()
        {
            killed += 1;
        }
    }
    killed
}
