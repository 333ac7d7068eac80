//! `synapse sessions list`: the conversations kept in $SYNAPSE_HOME/sessions.

use std::process::ExitCode;

use clap::Subcommand;
use synapse_shared::paths::Paths;
use synapse_shared::proto::ListSessionsRequest;
use synapse_shared::proto::sessions_client::SessionsClient;

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, most recent first: id, updated, messages, state (running, waiting for an
    /// answer, idle), front ends attached, title; under a waiting session, the question it waits
    /// on.
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
                    "created": s.created, "updated": s.updated, "messages": s.messages, "live": s.live,
                    "state": state_word(&s.state), "question": s.question,
                    "frontEnds": s.front_ends, "detached": s.detached})
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
        let state = match (state_word(&s.state), s.detached) {
            ("idle", _) => "idle".to_string(),
            (state, true) => format!("{state}, detached"),
            (state, false) => state.to_string(),
        };
        println!(
            "{:<24} {:<20} {:>4} msgs  {:<17} {} attached  {}",
            s.id, s.updated, s.messages, state, s.front_ends, s.title
        );
        if state_word(&s.state) == "waiting" {
            println!("    waiting for an answer: {}", s.question);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session `synapse attach` (and `/attach`) without an id opens: the most recent running
/// (or waiting) session of the folder `cwd`, else the most recent session; never `current`.
pub async fn attach_target(
    channel: tonic::transport::Channel,
    cwd: &str,
    current: Option<&str>,
) -> anyhow::Result<String> {
    let list = SessionsClient::new(channel)
        .list(ListSessionsRequest { limit: 0 })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner()
        .sessions;
    let others = || list.iter().filter(|s| Some(s.id.as_str()) != current);
    let running = |s: &&synapse_shared::proto::SessionInfo| state_word(&s.state) != "idle";
    others()
        .find(|s| running(s) && s.cwd == cwd)
        .or_else(|| others().next())
        .map(|s| s.id.clone())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "there is no session to attach to; start one with `synapse` or \
                 `synapse run --detach \"<task>\"`"
            )
        })
}

/// The state's word ("idle" from a daemon that does not say).
fn state_word(state: &str) -> &str {
    if state.is_empty() { "idle" } else { state }
}
