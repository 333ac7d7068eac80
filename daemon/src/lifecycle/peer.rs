//! Every request is checked against the peer's uid (SO_PEERCRED on Linux, getpeereid on macOS,
//! both through tokio's `peer_cred`). The socket's 0600 mode already keeps other users out; this
//! is the second wall, for sockets whose permissions were loosened.

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
