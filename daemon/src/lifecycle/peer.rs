//! Every request is checked against the peer's uid (SO_PEERCRED on Linux, getpeereid on macOS,
//! both through tokio's `peer_cred`). The socket's 0600 mode already keeps other users out; this
//! is the second wall, for sockets whose permissions were loosened.
//!
//! A client running with `no_new_privs` — everything started inside a sandboxed session shell
//! has it, since Landlock sets it and it can never be cleared — is confined. The interceptor
//! only records the peer's pid ([`PeerPid`]); the check reads `/proc`, so it runs in the few
//! handlers that care ([`from_confined_client`]), not on every request. Those refuse such clients anything that would let a sandboxed command act outside its
//! sandbox through the daemon (`Tools.Exec`, `Chat.Attach`, skill and settings changes,
//! shutdown), and check MCP calls from them against the deny rules.

use nix::unistd::Uid;
use tonic::transport::server::UdsConnectInfo;
use tonic::{Request, Status};

/// Interceptor: refuses a request whose peer uid differs from the daemon's own.
pub fn check_peer(request: Request<()>) -> Result<Request<()>, Status> {
    let own = Uid::current().as_raw();
    let peer = request
        .extensions()
        .get::<UdsConnectInfo>()
        .and_then(|info| info.peer_cred)
        .map(|cred| (cred.uid(), cred.pid()));
    match peer {
        Some((uid, pid)) if uid == own => {
            let mut request = request;
            request.extensions_mut().insert(PeerPid(pid));
            Ok(request)
        }
        Some((uid, pid)) => {
            tracing::warn!(peer_uid = uid, peer_pid = ?pid, own_uid = own, "refused a client of another user");
            Err(Status::permission_denied(format!(
                "synapsed belongs to uid {own}; clients of uid {uid} are refused"
            )))
        }
        None => {
            tracing::warn!("refused a client whose credentials could not be read");
            Err(Status::permission_denied(
                "synapsed could not verify the client's uid",
            ))
        }
    }
}

/// The pid of the client that sent a request (when the kernel told it).
#[derive(Debug, Clone, Copy)]
pub struct PeerPid(pub Option<i32>);

/// The client's pid when it is confined (a sandboxed session's command), else `None`.
fn confined_pid<T>(request: &Request<T>) -> Option<i32> {
    request
        .extensions()
        .get::<PeerPid>()
        .and_then(|p| p.0)
        .filter(|pid| is_confined(*pid))
}

/// Whether the request comes from a confined client.
pub fn from_confined_client<T>(request: &Request<T>) -> bool {
    confined_pid(request).is_some()
}

/// Refuses `what` for a confined client, with a message that says why.
pub fn refuse_confined<T>(request: &Request<T>, what: &str) -> Result<(), Status> {
    match confined_pid(request) {
        Some(pid) => {
            tracing::info!(peer_pid = pid, what, "refused a sandboxed client");
            Err(Status::permission_denied(format!(
                "{what} is not available from inside a sandboxed agent shell (the command runs \
                 under Synapse's permission sandbox); ask the user to run it"
            )))
        }
        None => Ok(()),
    }
}

/// True when `pid` is (very likely) a command of a sandboxed session. Normally: it runs with
/// `no_new_privs` and the daemon does not. When the daemon itself runs with it (a container or
/// a service with `NoNewPrivileges=yes`), that tells nothing, and the session shells' tag in the
/// client's environment is the sign instead (weaker: a command can drop it).
fn is_confined(pid: i32) -> bool {
    static OWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*OWN.get_or_init(|| no_new_privs(std::process::id() as i32)) {
        return no_new_privs(pid);
    }
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| {
            env.split(|b| *b == 0)
                .any(|kv| kv.starts_with(crate::shell::procs::SHELL_TAG_VAR.as_bytes()))
        })
        .unwrap_or(false)
}

/// True when `pid` runs with `no_new_privs` (Linux: `NoNewPrivs: 1` in its status).
fn no_new_privs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1'))
        })
        .unwrap_or(false)
}
