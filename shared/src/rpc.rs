//! A tonic channel over the daemon's Unix socket. The URI is a placeholder: every connection goes
//! to the socket path given here.

use std::path::{Path, PathBuf};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint};

/// Opens a channel to the daemon listening on `socket`. Fails at once when nothing listens.
pub async fn connect(socket: &Path) -> Result<Channel, tonic::transport::Error> {
    let socket: PathBuf = socket.to_path_buf();
    Endpoint::from_static("http://synapsed.local")
        .connect_with_connector(tower::service_fn(move |_| {
            let socket = socket.clone();
            async move { UnixStream::connect(socket).await.map(TokioIo::new) }
        }))
        .await
}
