//! `synapse chat [--resume ID|--continue] [--model M]`: the interactive REPL (see
//! [`crate::repl`]).

use std::process::ExitCode;

use clap::Args;
use synapse_shared::paths::Paths;

use crate::attach::OpenOptions;

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Continue the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub continue_latest: bool,
    /// Model for this session.
    #[arg(long)]
    pub model: Option<String>,
}

pub async fn run(paths: Paths, args: ChatArgs) -> anyhow::Result<ExitCode> {
    let options = OpenOptions {
        model: args.model,
        resume_id: args.resume,
        resume_latest: args.continue_latest,
    };
    crate::repl::run(paths, options).await
}
