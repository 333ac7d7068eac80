//! `synapse`: the Synapse command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    synapse_client::cli::main()
}
