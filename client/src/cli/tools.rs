//! `synapse tools search <query>` and `synapse tools refresh [skills]`.

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
        /// What to refresh (default: everything).
        what: Option<RefreshTarget>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RefreshTarget {
    /// Skills: rescan every skill folder, rewrite skill:* wrappers and index.json.
    Skills,
}

pub async fn run(paths: Paths, cmd: ToolsCommand) -> anyhow::Result<ExitCode> {
    let mut client = SkillsClient::new(connect::connect(&paths).await?);
    match cmd {
        ToolsCommand::Search { query, limit, json } => {
            let query = query.join(" ");
            let r = client
                .search_tools(SearchToolsRequest { query, limit })
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
        ToolsCommand::Refresh {
            what: None | Some(RefreshTarget::Skills),
        } => {
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
    }
}
