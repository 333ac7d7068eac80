//! `synapse attach [ID]`: the REPL on a session that is already there, live — a detached turn
//! (`synapse run --detach`) or one another terminal runs. Its running turn is shown from where it
//! is (running calls, an open question) and this terminal takes part in its questions; several
//! terminals can attach to one session at once, and leaving one never stops the turn. Without an
//! id: the most recent running session of this folder, else the most recent session.

use std::process::ExitCode;

use clap::Args;
use synapse_shared::paths::Paths;

use crate::session::OpenOptions;

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The session's id (`synapse sessions list` shows them); without one, the most recent
    /// running session of this folder, else the most recent session.
    pub id: Option<String>,
}

pub async fn run(paths: Paths, args: AttachArgs) -> anyhow::Result<ExitCode> {
    let id = match args.id.filter(|id| !id.trim().is_empty()) {
        Some(id) => id,
        None => {
            let channel = crate::connect::connect(&paths).await?;
            let cwd = std::env::current_dir()?.display().to_string();
            super::sessions::attach_target(channel, &cwd, None).await?
        }
    };
    let options = OpenOptions {
        resume_id: Some(id),
        ..OpenOptions::default()
    };
    crate::repl::run(paths, options, None, false).await
}
