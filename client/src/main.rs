//! `synapse`: the Synapse command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    // The client may hold API keys in its environment too: not readable by other processes.
    // Failing to set it is not worth refusing to run the client over.
    let _ = synapse_shared::inspection::forbid();
    synapse_client::cli::main()
}
