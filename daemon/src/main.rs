//! `synapsed`: the per-user Synapse daemon. Usually started by `synapse` on demand, or by the
//! systemd user unit / launchd agent with `--foreground`.

use std::ffi::OsStr;
use std::process::ExitCode;

use clap::Parser;
use synapse_sandbox as sandbox;

/// The Synapse daemon: keeps sessions, shells, skills and MCP connections for one user and
/// serves `synapse` clients over a Unix socket.
#[derive(Debug, Parser)]
#[command(name = "synapsed", version, long_about = None)]
#[command(
    after_help = "Environment:\n  SYNAPSE_HOME    state folder (default ~/.synapse)\n  SYNAPSE_SOCKET  socket path (default $SYNAPSE_HOME/run/synapsed.sock)\n  SYNAPSE_LOG     log filter, e.g. debug or synapse_daemon=trace (default info)"
)]
struct Args {
    /// Also log to stderr (for service managers and debugging). Logs always go to
    /// $SYNAPSE_HOME/logs/.
    #[arg(long)]
    foreground: bool,
}

fn main() -> ExitCode {
    let mut raw = std::env::args_os();
    // The sandbox launcher is dispatched before clap: it stays out of --help and starts without
    // a runtime or logging, since it sits on the path of every sandboxed shell start.
    let first = raw.nth(1);
    if first.as_deref() == Some(OsStr::new(sandbox::SUBCOMMAND)) {
        return sandbox::launcher_main(raw);
    }
    // Agent commands inside a session shell's compound lines (see shell::channel).
    if first.as_deref()
        == Some(OsStr::new(
            synapse_daemon::shell::channel::helper::SUBCOMMAND,
        ))
    {
        return synapse_daemon::shell::channel::helper::helper_main(raw);
    }
    // The daemon holds the API keys: no other process of the user may read its environment or
    // memory (see `synapse_shared::inspection`). Said in the log once logging is up.
    let inspection = synapse_shared::inspection::forbid();
    let args = Args::parse();
    synapse_daemon::run::main(synapse_daemon::run::Options {
        foreground: args.foreground,
        inspection,
    })
}
