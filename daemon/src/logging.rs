//! Logging: always to `$SYNAPSE_HOME/logs/synapsed.YYYY-MM-DD.log` (daily rolling, the newest
//! `LOG_FILES_KEPT` kept), and to stderr too with `--foreground`. `SYNAPSE_LOG` sets the filter.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How many daily log files are kept; older ones are deleted at rotation.
pub const LOG_FILES_KEPT: usize = 14;
/// Prefix of the daily log files.
pub const LOG_FILE_PREFIX: &str = "synapsed";

/// Installs the global subscriber. Keep the guard alive for the life of the process, or buffered
/// lines are lost.
pub fn init(logs_dir: &Path, foreground: bool) -> anyhow::Result<WorkerGuard> {
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix(LOG_FILE_PREFIX)
        .filename_suffix("log")
        .max_log_files(LOG_FILES_KEPT)
        .build(logs_dir)?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter =
        || EnvFilter::try_from_env("SYNAPSE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let file_layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false)
        .with_filter(filter());
    let stderr_layer = foreground.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_filter(filter())
    });
    tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()?;
    Ok(guard)
}
