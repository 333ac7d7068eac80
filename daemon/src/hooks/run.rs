//! Runs one hook command the way Claude Code does: `sh -c <command>` in the session's folder,
//! the event's JSON on stdin, stdout and stderr captured (bounded), in a process group of its
//! own that is killed whole when the hook's timeout passes. Hooks are the user's own
//! configuration, so they run as the user's programs, outside the agent's sandbox.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Output kept of each stream of a hook; the rest is read and dropped.
pub const HOOK_OUTPUT_MAX_BYTES: usize = 256 * 1024;

/// What running a hook gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    /// It could not start, was killed by a signal, or timed out: the sentence says which.
    Failed(String),
}

/// One hook to run.
pub struct HookProcess<'a> {
    pub command: &'a str,
    pub timeout: Duration,
    pub stdin: &'a [u8],
    pub cwd: &'a Path,
    /// Variables set on top of the inherited environment.
    pub env: &'a [(OsString, OsString)],
    /// The environment to start from (`None`: the daemon's).
    pub base_env: Option<&'a [(OsString, OsString)]>,
}

pub async fn run(p: HookProcess<'_>) -> RunOutcome {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(p.command)
        .current_dir(p.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(base) = p.base_env {
        cmd.env_clear();
        cmd.envs(base.iter().map(|(k, v)| (k, v)));
    }
    cmd.envs(p.env.iter().map(|(k, v)| (k, v)));
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return RunOutcome::Failed(format!("could not start: {e}")),
    };
    // Killed whole if this future is dropped (the turn was cancelled) or times out.
    let mut group = GroupGuard(child.id());
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = p.stdin.to_vec();
    let work = async move {
        let feed = async move {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input closes the pipe: not an error.
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            feed,
            read_bounded(stdout),
            read_bounded(stderr),
            child.wait()
        );
        (out, err, status)
    };
    let finished = tokio::time::timeout(p.timeout, work).await;
    if finished.is_ok() {
        // Exited: its pid may be reused, so the group is left alone.
        group.0 = None;
    }
    match finished {
        Ok((stdout, stderr, Ok(status))) => match status.code() {
            Some(code) => RunOutcome::Exited {
                code,
                stdout,
                stderr,
            },
            None => RunOutcome::Failed("was killed by a signal".into()),
        },
        Ok((_, _, Err(e))) => RunOutcome::Failed(format!("could not be waited for: {e}")),
        Err(_) => {
            drop(group);
            RunOutcome::Failed(format!(
                "timed out after {} s and was killed; raise its \"timeout\" (seconds)",
                p.timeout.as_secs_f64()
            ))
        }
    }
}

/// The hook's process group (led by the hook's pid), killed when dropped while still set.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

async fn read_bounded(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = HOOK_OUTPUT_MAX_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process<'a>(command: &'a str, timeout: Duration) -> HookProcess<'a> {
        HookProcess {
            command,
            timeout,
            stdin: b"{\"a\":1}",
            cwd: Path::new("/"),
            env: &[],
            base_env: None,
        }
    }

    #[tokio::test]
    async fn stdin_reaches_the_hook_and_streams_and_code_come_back() {
        let out = run(process(
            "cat; echo oops >&2; exit 3",
            Duration::from_secs(10),
        ))
        .await;
        assert_eq!(
            out,
            RunOutcome::Exited {
                code: 3,
                stdout: "{\"a\":1}".into(),
                stderr: "oops\n".into()
            }
        );
    }

    /// Running: the process exists and is not a zombie.
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    #[tokio::test]
    async fn a_dropped_hook_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let command = format!("sleep 30 & echo $! > '{}'; wait", pidfile.display());
        let hook = run(process(&command, Duration::from_secs(30)));
        let started = async {
            while !pidfile.exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::select! {
            _ = hook => panic!("the hook ended on its own"),
            _ = started => {}
        }
        let pid = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .to_string();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while alive(&pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "the hook's child survived"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_hook_past_its_timeout_is_killed_with_its_children() {
        let started = std::time::Instant::now();
        let out = run(process("sleep 30 & sleep 30", Duration::from_millis(300))).await;
        assert!(
            matches!(out, RunOutcome::Failed(ref s) if s.contains("timed out")),
            "{out:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
