//! synapse-client: the `synapse` command line. It holds no agent logic: every command talks to
//! `synapsed` over gRPC on its Unix socket ([`connect`]), starting the daemon when nothing
//! answers. [`cli`] defines the commands and dispatches them.

// First, so its `print!`/`println!`/`eprint!`/`eprintln!` (quiet on a closed pipe) are the ones
// every module below uses.
#[macro_use]
mod out;

pub mod acp;
pub mod cli;
pub mod connect;
pub mod render;
pub mod repl;
pub mod session;
