//! `synapse exec [--session NAME] [--restart] [--timeout SECS] [--permission-mode M] "<command>"`:
//! run one Bash-tool command through the daemon's router, print exactly what the model would
//! receive, and exit with the command's status. It runs as the user (no rules, no sandbox)
//! unless `--permission-mode` puts it under that mode's rules and sandbox. The session is created on first use from this process's working
//! directory and environment.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use synapse_shared::paths::Paths;
use synapse_shared::proto::ExecRequest;
use synapse_shared::proto::tools_client::ToolsClient;

use crate::connect;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Session to run in; created on first use with this directory and environment. Default:
    /// one session per project (the workspace of this directory).
    #[arg(long, short)]
    session: Option<String>,
    /// Start a fresh shell first (cwd and variables set by earlier commands are dropped).
    #[arg(long)]
    restart: bool,
    /// Run under the permission rules and OS sandbox of this mode, exactly as the agent's
    /// commands meet them (what would ask is refused, saying why). Without it the command runs
    /// as you: no rules, no sandbox.
    #[arg(long, value_enum, value_name = "MODE")]
    permission_mode: Option<super::chat::PermissionMode>,
    /// Seconds before the command is killed (default 120, at most 600).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// The command, as the model would write it; quote it as one argument.
    #[arg(
        required_unless_present = "restart",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<String>,
}

pub async fn run(paths: Paths, args: ExecArgs) -> anyhow::Result<ExitCode> {
    let timeout_ms = match args.timeout {
        None => 0,
        Some(secs) if secs.is_finite() && secs > 0.0 => {
            Duration::from_secs_f64(secs.min(600.0)).as_millis().max(1) as u64
        }
        Some(secs) => bail!("--timeout must be a positive number of seconds (got {secs})"),
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let request = ExecRequest {
        session: args.session.unwrap_or_default(),
        command: args.command.join(" "),
        restart: args.restart,
        timeout_ms,
        cwd: cwd.display().to_string(),
        // Variables that are not UTF-8 cannot cross the wire; the shell starts without them.
        env: std::env::vars().collect(),
        permission_mode: args
            .permission_mode
            .map(|m| m.wire().to_string())
            .unwrap_or_default(),
        settings_mode: false,
    };
    let channel = connect::connect(&paths).await?;
    let response = ToolsClient::new(channel)
        .exec(request)
        .await
        .map_err(|status| anyhow::anyhow!("{}", status.message()))?
        .into_inner();
    let mut stdout = std::io::stdout().lock();
    let output = crate::render::safe_text::strip_controls(&response.output);
    stdout.write_all(output.as_bytes())?;
    if !output.is_empty() && !output.ends_with('\n') {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    Ok(ExitCode::from(exit_status(response.exit_code)))
}

/// The process status mirroring a command's exit code (0–255; anything else is 1).
fn exit_status(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(1)
}
