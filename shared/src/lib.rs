//! synapse-shared: what both `synapse` and `synapsed` need to agree on.
//!
//! - [`proto`]: the generated gRPC code for `proto/synapse.proto` (package `synapse.v1`).
//! - [`paths`]: where everything lives (`SYNAPSE_HOME`, the socket, logs, skills, sessions).
//! - [`settings`]: `settings.json`, read with precise errors and rewritten atomically.
//! - [`atomic`]: the one way files are rewritten (temp file, fsync, rename).
//! - [`elicit`]: an MCP elicitation's form: its fields, typed answers and their checks.
//! - [`skill`]: SKILL.md parsing and spec validation, `skill:<skill>:<script>` naming.
//! - [`rpc`]: connecting a gRPC channel to the daemon's Unix socket.
//! - [`trust`]: trusted folders, whose `.synapse/settings.json` counts.
//! - [`shell_env`]: the variables the daemon writes into every agent shell.
//! - [`bounded`]: reading files others wrote: regular files only, capped, inside a folder.
//! - [`inspection`]: keeping a process's secrets from other processes of the same user.

#![deny(missing_docs)]

pub mod atomic;
pub mod bounded;
pub mod claude_plugins;
pub mod elicit;
pub mod inspection;
pub mod paths;
pub mod rpc;
pub mod session_wire;
pub mod settings;
pub mod shell_env;
pub mod skill;
pub mod trust;
pub mod uuid_text;

/// Generated code for `proto/synapse.proto`.
pub mod proto {
    // The proto comments become doc comments as written: `<name>` placeholders in them are
    // prose, not HTML.
    #![allow(
        clippy::all,
        clippy::unwrap_used,
        clippy::expect_used,
        missing_docs,
        rustdoc::invalid_html_tags
    )]
    tonic::include_proto!("synapse.v1");
}

/// The version both binaries report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
