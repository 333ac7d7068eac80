//! Signals: SIGTERM and SIGINT stop the daemon gracefully (same path as the `Shutdown` RPC);
//! SIGHUP is logged and ignored, so closing the terminal that started the daemon leaves it up.

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// Cancels `shutdown` on SIGTERM or SIGINT. Runs until then.
pub async fn watch(shutdown: CancellationToken) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    loop {
        tokio::select! {
            _ = term.recv() => { tracing::info!("SIGTERM: shutting down"); break; }
            _ = int.recv() => { tracing::info!("SIGINT: shutting down"); break; }
            _ = hup.recv() => tracing::info!("SIGHUP ignored"),
            _ = shutdown.cancelled() => return Ok(()),
        }
    }
    shutdown.cancel();
    Ok(())
}
