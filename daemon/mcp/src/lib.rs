//! synapse-mcp: MCP servers as shell commands (Mcp2Bash).
//!
//! Built on the extension contract (`synapse-command`), `synapse-shared` and `rmcp` (plus the
//! Landlock launcher for a stdio server's keeper); it never reaches into the daemon, which holds
//! one [`McpHub`] and registers [`shortcut::McpShortcut`] on its command registry. Its tests run
//! alone with `cargo test -p synapse-mcp`; the end-to-end tests with real servers are in `tests/`.
//!
//! The daemon keeps every configured MCP server connected ([`McpManager`], over the official
//! `rmcp` crate) and turns each exposed tool into a command `mcp:<server>:<tool>`:
//!
//! - [`config`] reads `mcp_servers.json` / `.mcp.json` (with [`expand`] and [`filter`]);
//!   [`sources`] adds `~/.claude.json` and `.vscode/mcp.json` below them; a project's layer is
//!   listed always but started only in a trusted folder once [`approval`] has its entry, while
//!   the user's [`local`] servers of a project need neither;
//! - [`manager`] connects servers in the background and on refresh; [`server`] is one server's
//!   state machine, [`connection`] one rmcp session, [`process`] a stdio server's process group;
//! - [`calls`] runs a command line: [`args`] maps argv with the tool's [`schema`], [`result`]
//!   renders the answer and defines the exit codes;
//! - [`catalog`] names the commands ([`names`]) and [`wrappers`] writes them to
//!   `$SYNAPSE_HOME/bin` as bash scripts that exec `synapse mcp call`;
//! - [`oauth`] logs in to remote servers (`synapse mcp login`) and keeps their tokens fresh.
//!
//! [`hub`] holds the user's manager, one per workspace (a project's own servers) and one per
//! session opened with servers of its own ([`session`]), hearing of workspaces through the
//! contract's `WorkspaceHost`. The router's
//! in-process short-cut is [`McpHub::call_command`]; `tools search` reads
//! [`McpHub::catalog_entries`] for the caller's workspace.

pub mod approval;
pub mod approval_files;
pub mod args;
pub mod calls;
pub mod catalog;
pub mod codex;
pub mod config;
pub mod connection;
pub mod edit;
pub mod error_words;
pub mod expand;
pub mod filter;
pub mod hub;
pub mod instructions;
pub mod local;
pub mod manager;
pub mod names;
pub mod oauth;
pub mod plugin_servers;
pub mod process;
pub mod project_config;
pub mod resources;
pub mod result;
pub mod schema;
pub mod schema_doc;
pub mod schema_pattern;
pub mod schema_sample;
pub mod server;
pub mod session;
pub mod shortcut;
pub mod sources;
pub mod wrappers;

pub use catalog::{Catalog, CatalogEntry, ListedTool};
pub use hub::McpHub;
pub use manager::{
    EnvLookup, McpManager, McpOptions, RefreshSummary, Scope, ServerStatus, client_binary,
};
pub use result::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_UNAVAILABLE, EXIT_USAGE, McpCallOutput};
pub use server::StateKind;
