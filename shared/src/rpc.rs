//! A tonic channel over the daemon's Unix socket. The URI is a placeholder: every connection goes
//! to the socket path given here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

/// Decides, before anything is sent, whether the process listening on a freshly connected
/// socket may be talked to; an `Err` drops the connection unused.
pub type ListenerCheck =
    Arc<dyn Fn(&std::os::unix::net::UnixStream) -> std::io::Result<()> + Send + Sync>;

/// Opens a channel to the daemon listening on `socket`. Fails at once when nothing listens.
pub async fn connect(socket: &Path) -> Result<Channel, tonic::transport::Error> {
    connect_checked(socket, Arc::new(|_| Ok(()))).await
}

/// [`connect`], with every connection (the first and any reconnection) passed to `check`
/// before the first byte is written to it.
pub async fn connect_checked(
    socket: &Path,
    check: ListenerCheck,
) -> Result<Channel, tonic::transport::Error> {
    let socket: PathBuf = socket.to_path_buf();
    Endpoint::from_static("http://synapsed.local")
        .connect_with_connector(tower::service_fn(move |_| {
            let socket = socket.clone();
            let check = check.clone();
            async move {
                // Connecting to a Unix socket does not block: the listener's backlog takes it.
                let stream = std::os::unix::net::UnixStream::connect(&socket)?;
                check(&stream)?;
                stream.set_nonblocking(true)?;
                UnixStream::from_std(stream).map(TokioIo::new)
            }
        }))
        .await
}
