//! `synapse mcp serve`: Synapse as an MCP server over stdio, for Claude Code, Codex or any MCP
//! client. It is a thin client of the daemon like every other front end (the daemon is started
//! when nothing answers): the offer is read from the daemon ([`catalog`], named by [`names`]'s
//! rules), calls run there ([`calls`]), and [`handler`] speaks MCP with rmcp's server side.
//! stdout carries only MCP's JSON-RPC; anything else goes to stderr.

mod calls;
mod catalog;
mod handler;
mod names;

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rmcp::ServiceExt;
use synapse_shared::paths::Paths;

use crate::connect;

/// The text after `synapse mcp serve --help`'s options.
const SERVE_AFTER_HELP: &str = "\
What it offers (tool names as the client sees them):
  skills_search               find skills in Synapse's library for a need
  skill_load                  a skill's SKILL.md instructions, as `synapse skill load` prints them
  skill__<skill>__<script>    each skill script; its help is the description, `args` its words
  task                        a Synapse sub-agent run in the caller's folder; answers its result
  <server>__<tool>            each tool of the MCP servers the daemon keeps connected, with the
                              server's own description and input schema (one warm connection
                              for every agent on this machine)

Calls run in the caller's folder (the client's first root, else the folder the server was
started in) under that folder's permission rules, trust and sandbox, as `synapse exec` meets
them: what would ask is refused, naming the permission rule that allows it and the file to
add it to (an MCP client has no one to ask), and a denied call says why. A failed call is a tool result with isError set.

Add it to Claude Code:
  claude mcp add synapse -- synapse mcp serve

Add it to Codex (~/.codex/config.toml):
  [mcp_servers.synapse]
  command = \"synapse\"
  args = [\"mcp\", \"serve\"]";

/// `synapse mcp serve` takes no options: the client starts it in the folder it works in.
#[derive(Debug, Args)]
#[command(after_help = SERVE_AFTER_HELP)]
pub struct ServeArgs {}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn run(paths: Paths, _args: ServeArgs) -> anyhow::Result<ExitCode> {
    let start_dir = std::env::current_dir().context("cannot read the current directory")?;
    let channel = connect::connect(&paths).await?;
    let server = handler::SynapseServer::new(channel, start_dir, std::env::vars().collect());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client's initialize failed")?;
    running
        .waiting()
        .await
        .context("the MCP connection ended abnormally")?;
    Ok(ExitCode::SUCCESS)
}
