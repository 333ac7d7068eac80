//! Issue 9's security review, as tests against the real binaries on a temporary home: another
//! user is refused on the socket; agent commands write nothing outside `SYNAPSE_HOME` and the
//! session's folder; hostile skill, script and MCP names and help texts cannot inject into the
//! generated wrappers; every file-taking RPC refuses paths out of its folder; and API keys never
//! reach the logs or the session files.

// A test file: helpers panic as failed assertions (clippy only exempts `#[test]` bodies).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod confinement;
mod containment;
mod deletions;
mod home_session;
mod hook_allow;
mod hook_pins;
mod hostile_files;
mod hostile_repo;
mod keys;
mod mcp_scripts;
mod planted_bash;
mod rules_routes;
mod side_doors;
mod skill_grants;
mod strict_modes;
mod support;
mod traversal;
mod uid;
mod wrappers;
mod writes;
