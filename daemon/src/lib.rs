//! synapse-daemon: everything in Synapse that has state, behind the `synapsed` binary.
//!
//! Start-up order ([`run`]): resolve paths → create the home layout → logging → take the daemon
//! lock → settings → bind the socket → serve gRPC until SIGTERM/SIGINT/`Shutdown` → stop the
//! subsystems → remove the socket.

pub mod agent;
pub mod growth;
pub mod lifecycle;
pub mod logging;
pub mod mcp;
pub mod run;
pub mod server;
pub mod shell;
pub mod skills;
pub mod state;
pub mod todo;
pub mod web;
pub mod workspace;
