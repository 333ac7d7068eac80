//! Every request is checked against the peer's uid (SO_PEERCRED on Linux, getpeereid on macOS).
//! The socket's 0600 mode already keeps other users out; this is the second wall, for sockets
//! whose permissions were loosened.
//!
//! A client running with `no_new_privs` — everything started inside a sandboxed session shell
//! has it, since Landlock sets it and it can never be cleared — is confined. Whether it is, is
//! decided once, when the connection is accepted ([`capture`]), and travels with every request
//! on it as [`PeerInfo`]; a peer whose state could not be established counts as confined. The
//! handlers that care refuse confined clients anything that would let a sandboxed command act
//! outside its sandbox through the daemon (`Tools.Exec`, `Chat.Attach`, skill and settings
//! changes, shutdown, trust and approvals), and check MCP calls from them against the rules.

pub mod capture;

use nix::unistd::Uid;
use tonic::{Request, Status};

pub use capture::{PeerInfo, SandboxState, incoming};

/// Interceptor: refuses a request whose peer uid differs from the daemon's own, or whose
/// connection carries no captured peer at all.
pub fn check_peer(request: Request<()>) -> Result<Request<()>, Status> {
    let own = Uid::current().as_raw();
    let peer = request.extensions().get::<PeerInfo>().cloned();
    match peer.as_ref().and_then(|p| p.uid.map(|uid| (uid, p.pid))) {
        Some((uid, _)) if uid == own => Ok(request),
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

/// Whether the request comes from a confined client (or one whose state is unknown).
pub fn from_confined_client<T>(request: &Request<T>) -> bool {
    request
        .extensions()
        .get::<PeerInfo>()
        .is_none_or(|p| p.sandbox.is_confined())
}

/// The workspace a request answers for. An unconfined client names its own (`claimed`: from
/// `--workspace` or its cwd). A confined one gets the workspace of the session shell it runs
/// under, whatever folder it `cd`-ed to, and nothing of another project: naming another one
/// explicitly (`explicit`) is refused; a confined client under no provable shell workspace gets
/// no project at all.
pub fn workspace_for<T>(
    request: &Request<T>,
    claimed: Option<std::path::PathBuf>,
    explicit: bool,
) -> Result<Option<std::path::PathBuf>, Status> {
    let info = request.extensions().get::<PeerInfo>();
    if info.is_some_and(|p| !p.sandbox.is_confined()) {
        return Ok(claimed);
    }
    let own = info.and_then(|p| p.workspace.as_deref().map(std::path::Path::to_path_buf));
    match (&claimed, &own) {
        (Some(c), Some(o)) if c == o => Ok(own),
        (Some(c), _) if explicit => Err(Status::permission_denied(format!(
            "a command inside a sandboxed agent shell may only reach its own workspace's MCP \
             servers{}, not {}",
            own.as_ref()
                .map(|o| format!(" ({})", o.display()))
                .unwrap_or_default(),
            c.display()
        ))),
        _ => Ok(own),
    }
}

/// The chat session a request answers for (whose own MCP servers it reaches). An unconfined
/// client names it (`claimed`: `--session` or `$SYNAPSE_SESSION`); a confined one gets the
/// session of the shell it runs under — the daemon wrote it into that shell's start-up
/// environment, where no command can change it — and naming another is refused.
pub fn session_for<T>(request: &Request<T>, claimed: &str) -> Result<Option<String>, Status> {
    let claimed = Some(claimed.to_string()).filter(|c| !c.is_empty());
    let info = request.extensions().get::<PeerInfo>();
    if info.is_some_and(|p| !p.sandbox.is_confined()) {
        return Ok(claimed);
    }
    let own = info.and_then(|p| p.session.as_deref().map(str::to_string));
    match (&claimed, &own) {
        (Some(c), o) if o.as_ref() != Some(c) => Err(Status::permission_denied(format!(
            "a command inside a sandboxed agent shell may only reach its own session's MCP \
             servers, not session {c}"
        ))),
        _ => Ok(own),
    }
}

/// Refuses `what` for a confined client, with a message that says why.
pub fn refuse_confined<T>(request: &Request<T>, what: &str) -> Result<(), Status> {
    let info = request.extensions().get::<PeerInfo>().cloned();
    let state = info.as_ref().map_or(SandboxState::Unknown, |p| p.sandbox);
    if !state.is_confined() {
        return Ok(());
    }
    tracing::info!(peer_pid = ?info.and_then(|p| p.pid), ?state, what, "refused a sandboxed client");
    let why = match state {
        SandboxState::Unknown => {
            "its sandbox state could not be established when it connected (the client process \
             exited or /proc was unreadable), so it is treated as sandboxed"
        }
        _ => "the command runs under Synapse's permission sandbox",
    };
    Err(Status::permission_denied(format!(
        "{what} is not available from inside a sandboxed agent shell ({why}); ask the user to run it"
    )))
}
