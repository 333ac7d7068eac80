//! The daemon's life from start to exit. Errors that stop start-up are printed to stderr (the
//! client that started us shows them from the start-up log) and logged.

use std::process::ExitCode;
use std::sync::Arc;

use synapse_shared::paths::Paths;
use synapse_shared::settings;

use crate::lifecycle::lock::{DaemonLock, LockError};
use crate::lifecycle::{signals, socket};
use crate::state::DaemonState;

pub struct Options {
    pub foreground: bool,
    /// Whether the process could be made non-dumpable (`synapse_shared::inspection::forbid`).
    pub inspection: Result<(), String>,
}

/// Exit status when another daemon already serves the socket.
pub const EXIT_ALREADY_RUNNING: u8 = 3;

pub fn main(options: Options) -> ExitCode {
    match run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = match e.downcast_ref::<LockError>() {
                Some(LockError::AlreadyRunning { .. }) => EXIT_ALREADY_RUNNING,
                _ => 1,
            };
            eprintln!("synapsed: {e:#}");
            tracing::error!("exiting: {e:#}");
            ExitCode::from(code)
        }
    }
}

fn run(options: Options) -> anyhow::Result<()> {
    let paths = Paths::from_env()?;
    paths.ensure_layout()?;
    let _log_guard = crate::logging::init(&paths.logs_dir(), options.foreground)?;
    let lock = DaemonLock::acquire(&paths.daemon_lock())?;
    if let Err(e) = &options.inspection {
        tracing::warn!("{e}: other processes of this user can read the daemon's environment");
    }
    match crate::lifecycle::peer::capture::confinement_report() {
        Ok(how) => tracing::info!("client confinement: {how}"),
        Err(why) => tracing::warn!("client confinement: {why}"),
    }
    let orphans = crate::lifecycle::orphans::reap(paths.socket());
    if orphans > 0 {
        tracing::warn!(
            count = orphans,
            "killed processes left by a daemon that died"
        );
    }
    synapse_command::daemon_process::set_owner(paths.socket());
    crate::lifecycle::debris::clean(paths.home(), &std::env::temp_dir());

    let settings_path = paths.settings_file();
    if settings::ensure_exists(&settings_path)? {
        tracing::info!(path = %settings_path.display(), "created settings.json with defaults");
    }
    let loaded = settings::load(&settings_path).map_err(|e| {
        tracing::error!("{e} (running on defaults; the file is left as it is)");
        e.to_string()
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (listener, previous) = socket::bind(paths.socket())?;
        if previous == socket::Previous::StaleRemoved {
            tracing::warn!(socket = %paths.socket().display(), "removed a stale socket left by a daemon that died");
        }
        let state = Arc::new(DaemonState::new(paths.clone(), loaded));
        synapse_command::tasks::spawn(signals::watch(state.shutdown.clone()));
        // The user's MCP servers connect in the background; a project's start with its first session.
        state.mcp.user().start();
        tracing::info!(
            version = synapse_shared::VERSION,
            pid = std::process::id(),
            socket = %paths.socket().display(),
            lock = %lock.path().display(),
            "synapsed listening"
        );
        let result = crate::server::serve(state.clone(), listener).await;
        state.mcp.shutdown().await;
        // Whatever is still running (readers, reapers, event loops) ends with the daemon.
        let tasks_left =
            synapse_command::tasks::stop_all(std::time::Duration::from_secs(2)).await;
        socket::remove(paths.socket());
        crate::lifecycle::debris::release(&std::env::temp_dir());
        tracing::info!(tasks_left, "synapsed stopped");
        result
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(())
}
