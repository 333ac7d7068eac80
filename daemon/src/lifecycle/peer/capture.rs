//! The peer's identity and sandbox state, captured once when a connection is accepted and kept
//! with the connection (tonic hands it to every request as the [`PeerInfo`] extension).
//!
//! Deciding later, from a pid, is unsafe: the client may have exited (a sandboxed command can
//! connect, fork and let the parent die) and its pid may even be reused. So the state is read at
//! accept time through the peer's pidfd (`SO_PEERPIDFD`, pinned to the process that called
//! `connect`): the pidfd names the pid, `/proc/<pid>/status` is read, and the pidfd is checked
//! again to prove that status belonged to the same, still-unreaped process. Anything that cannot
//! be established — no credentials, no pidfd and no readable `/proc`, an exited peer — is
//! [`SandboxState::Unknown`], which every check treats as sandboxed.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use nix::sys::socket::{getsockopt, sockopt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tonic::transport::server::Connected;

/// Whether the client runs inside a sandboxed session shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxState {
    Unconfined,
    Confined,
    /// Could not be established at accept time: treated as confined.
    Unknown,
}

impl SandboxState {
    /// Fail closed: only a proven-unconfined peer is unconfined.
    pub fn is_confined(self) -> bool {
        self != SandboxState::Unconfined
    }
}

/// What the daemon learnt about a client when its connection was accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    pub uid: Option<u32>,
    pub pid: Option<i32>,
    pub sandbox: SandboxState,
    /// For a confined peer: the workspace root of the session shell it runs under, when that
    /// shell is provably one this daemon started ([`shell_facts`]). `None`: the peer gets no
    /// project's servers at all.
    pub workspace: Option<Arc<Path>>,
    /// For a confined peer: that shell's scratch folder (where its MCP images go).
    pub scratch: Option<Arc<Path>>,
    /// For a confined peer: the chat session whose own MCP servers that shell reaches (`None`:
    /// the shell has none, or is not provably ours).
    pub session: Option<Arc<str>>,
}

/// What the daemon wrote into a sandboxed session shell's start-up environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellFacts {
    pub workspace: Option<PathBuf>,
    pub scratch: Option<PathBuf>,
    pub session: Option<String>,
}

/// An accepted connection with the peer facts captured at accept time.
pub struct PeerStream {
    inner: UnixStream,
    info: PeerInfo,
}

impl PeerStream {
    /// Captures `stream`'s peer now. Blocking `/proc` reads of a few hundred bytes.
    pub fn accept(inner: UnixStream) -> Self {
        let info = capture(&inner);
        Self { inner, info }
    }
}

/// The listener's connections, each with its peer captured as it is accepted.
pub fn incoming(listener: UnixListener) -> impl Stream<Item = io::Result<PeerStream>> {
    futures::stream::unfold(listener, |listener| async move {
        let next = listener
            .accept()
            .await
            .map(|(stream, _)| PeerStream::accept(stream));
        Some((next, listener))
    })
}

fn capture(stream: &UnixStream) -> PeerInfo {
    let cred = stream.peer_cred().ok();
    let uid = cred.as_ref().map(|c| c.uid());
    let cred_pid = cred.as_ref().and_then(|c| c.pid());
    let pidfd = getsockopt(&stream.as_fd(), sockopt::PeerPidfd).ok();
    let (pid, sandbox, facts) = match pidfd {
        Some(fd) => match sandbox_via_pidfd(&fd) {
            Some((pid, state, facts)) => (Some(pid), state, facts),
            None => (cred_pid, SandboxState::Unknown, ShellFacts::default()),
        },
        // Kernels before 6.5: the pid from SO_PEERCRED, read now while the connection is fresh.
        None => match cred_pid {
            Some(pid) => {
                let state = sandbox_of_pid(pid);
                let facts = confined_facts(pid, state);
                (Some(pid), state, facts)
            }
            None => (None, SandboxState::Unknown, ShellFacts::default()),
        },
    };
    PeerInfo {
        uid,
        pid,
        sandbox,
        workspace: facts.workspace.map(Arc::from),
        scratch: facts.scratch.map(Arc::from),
        session: facts.session.map(Arc::from),
    }
}

/// The shell facts of a confined peer (nothing for any other).
fn confined_facts(pid: i32, state: SandboxState) -> ShellFacts {
    if state.is_confined() {
        shell_facts(pid).unwrap_or_default()
    } else {
        ShellFacts::default()
    }
}

/// The peer's pid, state and (when confined) shell workspace, or `None` when the pidfd's process
/// is gone or unreadable.
fn sandbox_via_pidfd(fd: &OwnedFd) -> Option<(i32, SandboxState, ShellFacts)> {
    let pid = pidfd_pid(fd)?;
    let state = sandbox_of_pid(pid);
    let facts = confined_facts(pid, state);
    // What was read above is only the peer's if the pidfd still names the same pid now.
    (pidfd_pid(fd)? == pid).then_some((pid, state, facts))
}

/// The workspace root and scratch folder of the sandboxed session shell `pid` runs under: the
/// leader of `pid`'s session, when that leader is a child of this daemon (a sandboxed shell
/// leads its own session, and no process can join another existing session), as the daemon
/// wrote them into the leader's start-up environment. `None` for anything else — a command that
/// started a session of its own, an unreadable `/proc` — so the caller gets no project and no
/// scratch folder.
pub(super) fn shell_facts(pid: i32) -> Option<ShellFacts> {
    use std::os::unix::ffi::OsStrExt;
    let sid = stat_field(pid, STAT_SESSION)?;
    if stat_field(sid, STAT_PPID)? != std::process::id() as i32 {
        return None;
    }
    let env = std::fs::read(format!("/proc/{sid}/environ")).ok()?;
    let raw = |var: &str| {
        let prefix = format!("{var}=");
        env.split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
    };
    let value = |var: &str| {
        raw(var)
            .map(|v| PathBuf::from(std::ffi::OsStr::from_bytes(v)))
            .filter(|p| p.is_absolute())
    };
    Some(ShellFacts {
        workspace: value(synapse_shared::shell_env::WORKSPACE_VAR),
        scratch: value(synapse_shared::shell_env::SCRATCH_VAR),
        session: raw(synapse_shared::shell_env::SESSION_VAR)
            .and_then(|v| std::str::from_utf8(v).ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string),
    })
}

/// Field numbers of `/proc/<pid>/stat` (1-based, as in proc(5)).
const STAT_PPID: usize = 4;
const STAT_SESSION: usize = 6;

/// A numeric field of `/proc/<pid>/stat`, counted after the `(comm)` field, which may itself
/// hold spaces and parentheses.
fn stat_field(pid: i32, field: usize) -> Option<i32> {
    stat_text_field(pid, field)?.parse().ok()
}

fn stat_field_u64(pid: i32, field: usize) -> Option<u64> {
    stat_text_field(pid, field)?.parse().ok()
}

fn stat_text_field(pid: i32, field: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 (state) on.
    after_comm
        .split_whitespace()
        .nth(field - 3)
        .map(str::to_string)
}

/// The pid a pidfd refers to, from `/proc/self/fdinfo` (`Pid: -1` once it was reaped).
fn pidfd_pid(fd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    let pid: i32 = info
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))?
        .trim()
        .parse()
        .ok()?;
    (pid > 0).then_some(pid)
}

/// The sandbox state of a live `pid`, read from `/proc`.
///
/// Two signs, either of which makes a peer confined, and neither of which a process can shed:
/// `no_new_privs` (the sandbox sets it and it can never be cleared) — meaningful only while the
/// daemon itself runs without it — and descent from a process this daemon started
/// ([`descends_from_daemon`]): every session shell runs under a keeper that is the daemon's
/// child and a subreaper, so `setsid`, double forks and dropped environment variables all stay
/// below it. The second sign is what still works when the daemon runs under `no_new_privs` (a
/// container with no-new-privileges, systemd `NoNewPrivileges=yes`). Anything unreadable is
/// [`SandboxState::Unknown`].
pub(super) fn sandbox_of_pid(pid: i32) -> SandboxState {
    let own = daemon_no_new_privs();
    let flag = no_new_privs(pid);
    if own == Some(false) && flag == Some(true) {
        return SandboxState::Confined;
    }
    match (own, flag, descends_from_daemon(pid)) {
        (_, _, Some(true)) => SandboxState::Confined,
        (Some(_), Some(_), Some(false)) => SandboxState::Unconfined,
        _ => SandboxState::Unknown,
    }
}

/// Whether the daemon itself runs with `no_new_privs` (read once; `None`: unreadable).
pub fn daemon_no_new_privs() -> Option<bool> {
    static OWN: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *OWN.get_or_init(|| no_new_privs(std::process::id() as i32))
}

/// How many parent links [`descends_from_daemon`] follows before giving up (unknown).
const ANCESTRY_MAX_DEPTH: usize = 4096;
/// `/proc/<pid>/stat` field of the start time, in clock ticks since boot.
const STAT_START_TIME: usize = 22;

/// Whether `pid` is this daemon's child or a descendant of one, following parent links up to
/// init. Each link is proved by start times — a parent starts no later than its child — so a
/// pid recycled while the chain is walked is noticed (`None`), as is any unreadable link.
pub(super) fn descends_from_daemon(pid: i32) -> Option<bool> {
    let daemon = std::process::id() as i32;
    let mut child = pid;
    let mut child_start = stat_field_u64(child, STAT_START_TIME)?;
    for _ in 0..ANCESTRY_MAX_DEPTH {
        let parent = stat_field(child, STAT_PPID)?;
        if parent == daemon {
            return Some(true);
        }
        if parent <= 1 {
            return Some(false);
        }
        let parent_start = stat_field_u64(parent, STAT_START_TIME)?;
        if parent_start > child_start {
            return None;
        }
        (child, child_start) = (parent, parent_start);
    }
    None
}

/// What the daemon can tell about its clients' confinement, said once at start: how a
/// sandboxed client is recognised, or why none can be (then every client counts as sandboxed
/// and the privileged calls are refused to all of them).
pub fn confinement_report() -> Result<String, String> {
    match (
        daemon_no_new_privs(),
        descends_from_daemon(std::process::id() as i32),
    ) {
        (None, _) => Err(
            "/proc/self/status is unreadable: every client is treated as sandboxed, so \
                          privileged calls (exec, chat, approvals, trust) are refused"
                .into(),
        ),
        (_, None) => Err(
            "/proc is unreadable: clients' ancestry cannot be established, so every \
                          client is treated as sandboxed and privileged calls are refused"
                .into(),
        ),
        (Some(true), Some(_)) => Ok("the daemon runs with no_new_privs: sandboxed clients are \
                                     recognised by descent from a session keeper"
            .into()),
        (Some(false), Some(_)) => Ok("sandboxed clients are recognised by no_new_privs and by \
                                      descent from a session keeper"
            .into()),
    }
}

/// Whether `pid` runs with `no_new_privs` (`NoNewPrivs: 1` in its status); `None` if unreadable.
fn no_new_privs(pid: i32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NoNewPrivs:"))
        .map(|v| v.trim() == "1")
}

impl Connected for PeerStream {
    type ConnectInfo = PeerInfo;

    fn connect_info(&self) -> PeerInfo {
        self.info.clone()
    }
}

impl AsyncRead for PeerStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for PeerStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_live_peer_in_this_process_is_captured_with_its_state() {
        let (a, _b) = UnixStream::pair().unwrap();
        let info = capture(&a);
        assert_eq!(info.pid, Some(std::process::id() as i32));
        // The test runner is not sandboxed (nor the daemon's descendant: it is the "daemon").
        assert_eq!(info.sandbox, SandboxState::Unconfined);
    }

    #[test]
    fn a_child_and_its_orphaned_grandchild_descend_from_the_daemon() {
        // This test process plays the daemon: its child descends, the child's child too.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert_eq!(descends_from_daemon(child.id() as i32), Some(true));
        assert_eq!(descends_from_daemon(grandchild), Some(true));
        // Init and this process itself do not.
        assert_eq!(descends_from_daemon(1), Some(false));
        assert_eq!(descends_from_daemon(std::process::id() as i32), Some(false));
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(grandchild),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn only_a_proven_unconfined_peer_is_unconfined() {
        assert!(SandboxState::Unknown.is_confined());
        assert!(SandboxState::Confined.is_confined());
        assert!(!SandboxState::Unconfined.is_confined());
    }
}
