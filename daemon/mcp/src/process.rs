//! Stdio MCP server processes: spawned in their own process group, stderr forwarded line by line
//! to the tracing log, and owned by a supervisor task that reports the exit and kills the whole
//! group (SIGTERM, grace, SIGKILL) when asked, when its handle is dropped, or when the runtime
//! itself goes away. This is what makes "no orphans, ever" hold on shutdown and on reconnect.
//!
//! Where there is a keeper ([`synapse_sandbox::kept`], unconfined), the server runs under one:
//! the daemon's child (and the group signalled) is the keeper, the server its child. Whatever the
//! server leaves outside its group — a `setsid` grandchild, a double fork — is re-parented to
//! the keeper and ended with the server, and on the daemon's death too. The keeper is told to
//! stop with SIGTERM and given the time to end everything; only a keeper that does not finish
//! is killed. A program that cannot be found or run is started directly, so the error is the
//! spawn's own ("No such file or directory").

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

/// How long a server gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(500);
/// The grace a keeper gives its server (a little under [`KILL_GRACE`]: the keeper then still
/// has time to end the server's other processes before the daemon would kill it).
const KEEPER_GRACE: Duration = Duration::from_millis(400);
/// How long a keeper told to stop may take in all before it is killed itself.
const KEEPER_STOP_TIMEOUT: Duration = Duration::from_secs(3);

/// Longest stderr line forwarded to the log; the rest of the line is dropped.
const STDERR_LINE_MAX_CHARS: usize = 4_000;

/// What to start.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    pub server: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
}

/// Kills a process group when dropped, whatever happened before; a keeper's group (the keeper
/// alone) gets SIGTERM, so the keeper ends the server and everything it started.
struct GroupGuard {
    pgid: Pid,
    kept: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let signal = if self.kept {
            Signal::SIGTERM
        } else {
            Signal::SIGKILL
        };
        // ESRCH (already gone) is the normal case.
        let _ = killpg(self.pgid, signal);
    }
}

/// `spec`'s command under a keeper when there is one and the program can be run; else the
/// command itself. Whether it is kept.
fn server_command(spec: &StdioCommand) -> (Command, bool) {
    let keeper = synapse_sandbox::KeeperSpec {
        grace: KEEPER_GRACE,
        ..Default::default()
    };
    let args: Vec<&std::ffi::OsStr> = spec.args.iter().map(std::ffi::OsStr::new).collect();
    let kept = runnable(spec)
        .then(|| synapse_sandbox::kept(None, &keeper, spec.command.as_ref(), None, &args))
        .flatten();
    match kept {
        Some(kept) => {
            let mut cmd = Command::new(kept.launcher);
            cmd.args(kept.args).envs(kept.env);
            (cmd, true)
        }
        None => {
            let mut cmd = Command::new(&spec.command);
            cmd.args(&spec.args);
            (cmd, false)
        }
    }
}

/// Whether `spec.command` names an executable file, looked up as `execvp` would (through the
/// server's `PATH`, else the daemon's, relative to its folder).
fn runnable(spec: &StdioCommand) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let in_cwd = |p: PathBuf| match &spec.cwd {
        Some(cwd) if p.is_relative() => cwd.join(p),
        _ => p,
    };
    if spec.command.contains('/') {
        return executable(&in_cwd(PathBuf::from(&spec.command)));
    }
    let path = spec
        .env
        .get("PATH")
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path).any(|dir| executable(&in_cwd(dir.join(&spec.command))))
}

/// The daemon's handle on one running server process.
#[derive(Debug)]
pub struct ServerProcess {
    pid: u32,
    /// The daemon's child is a keeper, the server its first child.
    kept: bool,
    stop: Option<oneshot::Sender<()>>,
    exited: watch::Receiver<Option<String>>,
}

impl ServerProcess {
    /// Spawns the server; returns the handle and its stdout/stdin for the MCP transport.
    pub fn spawn(spec: &StdioCommand) -> std::io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
        let (mut cmd, kept) = server_command(spec);
        cmd.envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            // A keeper is told to stop (by the guard), not killed: it ends what the server left.
            .kill_on_drop(!kept);
        if let Some((k, v)) = synapse_command::daemon_process::owner_env() {
            cmd.env(k, v);
        }
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("server exited at once"))?;
        let guard = GroupGuard {
            pgid: Pid::from_raw(pid as i32),
            kept,
        };
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("child stdio was not captured"));
        };
        if let Some(stderr) = child.stderr.take() {
            let server = spec.server.clone();
            synapse_command::tasks::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let line: String = line.chars().take(STDERR_LINE_MAX_CHARS).collect();
                    tracing::info!(target: "synapse::mcp::stderr", server = %server, "{line}");
                }
            });
        }
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (exit_tx, exit_rx) = watch::channel(None);
        let server = spec.server.clone();
        synapse_command::tasks::spawn(async move {
            let guard = guard;
            tokio::select! {
                status = child.wait() => {
                    let reason = match status {
                        Ok(s) => format!("server process exited ({s})"),
                        Err(e) => format!("server process lost: {e}"),
                    };
                    tracing::warn!(server = %server, pid, "{reason}");
                    // Children the server left behind in its group go too.
                    drop(guard);
                    let _ = exit_tx.send(Some(reason));
                }
                _ = stop_rx => {
                    let _ = killpg(guard.pgid, Signal::SIGTERM);
                    let wait = if kept { KEEPER_STOP_TIMEOUT } else { KILL_GRACE };
                    if tokio::time::timeout(wait, child.wait()).await.is_err() {
                        tracing::warn!(server = %server, pid, "server ignored SIGTERM; killing its process group");
                        let _ = killpg(guard.pgid, Signal::SIGKILL);
                    }
                    drop(guard);
                    let _ = child.wait().await;
                    let _ = exit_tx.send(Some("stopped by synapsed".into()));
                }
            }
        });
        Ok((
            ServerProcess {
                pid,
                kept,
                stop: Some(stop_tx),
                exited: exit_rx,
            },
            stdout,
            stdin,
        ))
    }

    /// The pid of the daemon's child: the keeper, where there is one (the group signalled).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server program's own pid, what `synapse mcp list` shows: under a keeper its first
    /// child (the keeper forks the program before anything else); the keeper's when that
    /// cannot be read.
    pub fn server_pid(&self) -> u32 {
        if !self.kept {
            return self.pid;
        }
        let children = format!("/proc/{0}/task/{0}/children", self.pid);
        std::fs::read_to_string(children)
            .ok()
            .and_then(|list| list.split_whitespace().next()?.parse().ok())
            .unwrap_or(self.pid)
    }

    /// The exit reason once the process has gone.
    pub fn exit_reason(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// A receiver that changes once, when the process is gone.
    pub fn exit_watch(&self) -> watch::Receiver<Option<String>> {
        self.exited.clone()
    }

    /// Kills the process group and waits (SIGTERM, [`KILL_GRACE`], SIGKILL) until it is reaped.
    pub async fn terminate(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let mut exited = self.exited.clone();
        let _ = exited.wait_for(Option::is_some).await;
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Dropping the sender wakes the supervisor, which kills the group.
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
