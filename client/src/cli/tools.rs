//! `synapse tools search <query>` and `synapse tools refresh [mcp|skills|all]` (MCP refresh is
//! the MCP command family's own, called from here).

use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use synapse_shared::paths::Paths;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{RefreshSkillsRequest, SearchToolsRequest};

use super::skill::{cwd, rpc};
use crate::connect;

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Find skill:* and mcp:* commands by keywords, or by a regex such as "skill:.*".
    Search {
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Show at most this many results.
        #[arg(short = 'n', long, default_value_t = 30)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rescan and regenerate commands; prints counts and warnings.
    Refresh {
        /// What to refresh.
        #[arg(value_enum, default_value_t = RefreshTarget::All)]
        target: RefreshTarget,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RefreshTarget {
    /// MCP servers and their `mcp:*` wrappers.
    Mcp,
    /// Skills: rescan every skill folder, rewrite skill:* wrappers and index.json.
    Skills,
    /// Both.
    All,
}

pub async fn run(paths: Paths, cmd: ToolsCommand) -> anyhow::Result<ExitCode> {
    let mcp_refresh = || {
        let cmd = super::mcp::ToolsCommand::Refresh {
            target: super::mcp::RefreshTarget::Mcp,
        };
        super::mcp::run_tools(paths.clone(), cmd)
    };
    match cmd {
        ToolsCommand::Refresh {
            target: RefreshTarget::Mcp,
        } => return mcp_refresh().await,
        ToolsCommand::Refresh {
            target: RefreshTarget::All,
        } => {
            let code = mcp_refresh().await?;
            let skills = refresh_skills(&paths).await?;
            return Ok(if code == ExitCode::SUCCESS {
                skills
            } else {
                code
            });
        }
        _ => {}
    }
    let mut client = SkillsClient::new(connect::connect(&paths).await?);
    match cmd {
        ToolsCommand::Search { query, limit, json } => {
            let query = query.join(" ");
            let r = client
                .search_tools(SearchToolsRequest {
                    query,
                    limit,
                    cwd: super::mcp::caller_cwd(),
                    // In an agent shell: its session's own MCP commands too.
                    session: super::mcp::caller_session(None),
                })
                .await
                .map_err(rpc)?
                .into_inner();
            if json {
                let hits: Vec<serde_json::Value> = r
                    .hits
                    .iter()
                    .map(
                        |h| serde_json::json!({"command": h.command, "description": h.description}),
                    )
                    .collect();
                let v = serde_json::json!({"mode": r.mode, "total": r.total, "hits": hits});
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{}", r.text);
            }
            Ok(if r.hits.is_empty() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        ToolsCommand::Refresh { .. } => refresh_skills(&paths).await,
    }
}

async fn refresh_skills(paths: &Paths) -> anyhow::Result<ExitCode> {
    let mut client = SkillsClient::new(connect::connect(paths).await?);
    let r = client
        .refresh(RefreshSkillsRequest { cwd: cwd() })
        .await
        .map_err(rpc)?
        .into_inner();
    println!(
        "skills: {} skills, {} commands ({} wrappers written, {} removed)",
        r.skills, r.tools, r.wrappers_written, r.wrappers_removed
    );
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    for e in &r.errors {
        eprintln!("error: {e}");
    }
    Ok(ExitCode::SUCCESS)
}
