//! `synapse mcp approve <server>… | --all`: approves the current project's MCP servers as their
//! entries read now (the daemon pins a hash of each; a changed entry needs approval again) and
//! starts them. The daemon refuses it from inside a sandboxed agent shell.

use std::process::ExitCode;

use anyhow::Context;
use synapse_shared::paths::Paths;
use synapse_shared::proto::McpApproveRequest;
use synapse_shared::proto::mcp_client::McpClient;

use crate::connect;

pub async fn approve(paths: &Paths, servers: Vec<String>, all: bool) -> anyhow::Result<ExitCode> {
    if servers.is_empty() && !all {
        anyhow::bail!(
            "name the servers to approve (`synapse mcp approve <server>`), or pass --all; \
             `synapse mcp list` shows which need approval"
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let channel = connect::connect(paths).await?;
    let r = McpClient::new(channel)
        .approve(McpApproveRequest {
            cwd: cwd.display().to_string(),
            servers,
            all,
            env: std::env::vars().collect(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner();
    for name in &r.approved {
        if name.starts_with("plugin_") || r.project.is_empty() {
            println!("Approved: {name} (a Claude Code plugin's server)");
        } else {
            println!("Approved: {name} (project {})", r.project);
        }
    }
    if r.approved.is_empty() && r.not_waiting.is_empty() {
        println!("No server of {} is waiting for approval.", r.project);
    }
    for why in &r.not_waiting {
        eprintln!("not approved: {why}");
    }
    Ok(if r.not_waiting.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
