//! The `synapse` command line: argument definitions and dispatch. Each command family lives in
//! its own file; a command that needs the daemon calls [`crate::connect::connect`], which starts
//! `synapsed` when nothing answers.

mod chat;
mod daemon;
mod exec;
mod mcp;
pub mod run;
mod sessions;
mod skill;
mod skill_growth;
mod tools;
mod trust;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use synapse_shared::paths::Paths;

/// Synapse: a self-growing LLM agent for the terminal. Every tool is Bash; skills and MCP
/// servers become shell commands; a daemon (`synapsed`) keeps them warm.
#[derive(Debug, Parser)]
#[command(name = "synapse", version, long_about = None)]
#[command(
    after_help = "Environment:\n  SYNAPSE_HOME    state folder (default ~/.synapse)\n  SYNAPSE_SOCKET  daemon socket (default $SYNAPSE_HOME/run/synapsed.sock)"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Talk with the agent in an interactive session (the REPL).
    Chat(chat::ChatArgs),
    /// Start, stop and inspect the daemon.
    #[command(subcommand)]
    Daemon(daemon::DaemonCommand),
    /// Run one task non-interactively: the answer on stdout, tool activity on stderr.
    Run(run::RunArgs),
    /// List saved conversations.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// Run one command through the Bash tool's router and print what the model would see. It runs
    /// as you: no permission rules and no sandbox apply (the agent's commands meet both).
    Exec(exec::ExecArgs),
    /// MCP servers: list them, call a tool.
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Shell commands from MCP servers and skills: search them, refresh them.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Skills: list, show, load, search, create, delete, enable, disable; the skill
    /// sub-agent: enhance, evaluate, versions, rollback.
    #[command(subcommand)]
    Skill(skill::SkillCommand),
    /// Trust a project folder, so its .synapse/settings.json permission rules apply.
    Trust(trust::TrustArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to generate completions for.
        shell: clap_complete::Shell,
    },
}

/// Parses the command line, runs the command and maps errors to a message and exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("synapse: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "synapse",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Chat(args) => block_on(chat::run(paths()?, args)),
        Command::Daemon(cmd) => block_on(daemon::run(paths()?, cmd)),
        Command::Exec(args) => block_on(exec::run(paths()?, args)),
        Command::Run(args) => block_on(run::run(paths()?, args)),
        Command::Sessions(cmd) => block_on(sessions::run(paths()?, cmd)),
        Command::Mcp(cmd) => block_on(mcp::run(paths()?, cmd)),
        Command::Tools(cmd) => block_on(tools::run(paths()?, cmd)),
        Command::Skill(cmd) => block_on(skill::run(paths()?, cmd)),
        Command::Trust(args) => trust::run(paths()?, args),
    }
}

fn paths() -> anyhow::Result<Paths> {
    Ok(Paths::from_env()?)
}

/// Runs a command's future on a small runtime (one is created only for commands that need it,
/// so `--version` and `--help` stay instant).
fn block_on<F: std::future::Future<Output = anyhow::Result<ExitCode>>>(
    future: F,
) -> anyhow::Result<ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(future)
}
