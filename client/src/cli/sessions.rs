//! `synapse sessions list`: the conversations kept in $SYNAPSE_HOME/sessions.

use std::process::ExitCode;

use clap::Subcommand;
use synapse_shared::paths::Paths;
use synapse_shared::proto::ListSessionsRequest;
use synapse_shared::proto::sessions_client::SessionsClient;

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, most recent first: id, updated, messages, title.
    List {
        /// Show at most this many (0 = all).
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(paths: Paths, cmd: SessionsCommand) -> anyhow::Result<ExitCode> {
    let SessionsCommand::List { limit, json } = cmd;
    let channel = crate::connect::connect(&paths).await?;
    let list = SessionsClient::new(channel)
        .list(ListSessionsRequest { limit })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner()
        .sessions;
    if json {
        let items: Vec<_> = list
            .iter()
            .map(|s| {
                serde_json::json!({"id": s.id, "title": s.title, "cwd": s.cwd, "model": s.model,
                    "created": s.created, "updated": s.updated, "messages": s.messages, "live": s.live})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!("no sessions yet");
        return Ok(ExitCode::SUCCESS);
    }
    for s in &list {
        println!(
            "{:<24} {:<20} {:>4} msgs  {}",
            s.id, s.updated, s.messages, s.title
        );
    }
    Ok(ExitCode::SUCCESS)
}
