//! The `synapse` command line: argument definitions and dispatch. Each command family lives in
//! its own file; a command that needs the daemon calls [`crate::connect::connect`], which starts
//! `synapsed` when nothing answers.

mod attach;
mod browser;
mod chat;
mod daemon;
mod doctor;
mod exec;
pub(crate) mod mcp;
mod mcp_approve;
mod mcp_edit;
mod mcp_login;
pub mod mcp_query;
mod mcp_secret;
mod mcp_serve;
mod plugin;
pub mod run;
pub(crate) mod sessions;
mod skill;
pub(crate) mod skill_growth;
mod skills_env;
mod tools;
mod trust;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use synapse_shared::paths::Paths;

/// Synapse: a self-growing LLM agent for the terminal. Every tool is Bash; skills and MCP
/// servers become shell commands; a daemon (`synapsed`) keeps them warm.
#[derive(Debug, Parser)]
#[command(name = "synapse", version, long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Start forms:\n  synapse                  chat (the REPL)\n  synapse \"<prompt>\"       chat, starting with this prompt\n  synapse -p \"<prompt>\"    one non-interactive turn (same as `synapse run`)\n\nEnvironment:\n  SYNAPSE_HOME        state folder (default ~/.synapse)\n  SYNAPSE_SOCKET      daemon socket (default $SYNAPSE_HOME/run/synapsed.sock)\n  SYNAPSE_SKILLS_DIR  an extra skills folder (`env:` skills), read when the daemon starts: after a change, `synapse daemon stop`"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Start the chat with this message (`synapse "fix the tests"`).
    #[arg(value_name = "PROMPT")]
    prompt: Option<String>,
    #[command(flatten)]
    chat: chat::ChatArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Talk with the agent in an interactive session (the REPL).
    Chat(chat::ChatArgs),
    /// Start, stop and inspect the daemon.
    #[command(subcommand)]
    Daemon(daemon::DaemonCommand),
    /// Run a task non-interactively with `claude -p`'s flags: the answer on stdout, tool activity
    /// on stderr.
    Run(run::RunArgs),
    /// List saved conversations.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// Open the REPL on a session that is already there, live (a `run --detach` turn, or one
    /// another terminal runs), taking part in its questions.
    Attach(attach::AttachArgs),
    /// Run one command through the Bash tool's router and print what the model would see. It runs
    /// as you: no permission rules and no sandbox apply (the agent's commands meet both), unless
    /// `--permission-mode` puts it under that mode's rules and sandbox.
    Exec(exec::ExecArgs),
    /// MCP servers: list, add, remove, call a tool, log in to remote ones (OAuth).
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Claude Code plugins (commands, agents, skills, hooks, MCP servers), on Claude Code's own
    /// records: list, install, enable, disable, update; add a marketplace.
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Shell commands from MCP servers and skills: search them, refresh them.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Skills: list, show, load, search, create, delete, enable, disable; the skill
    /// sub-agent: enhance, evaluate, versions, rollback.
    #[command(subcommand)]
    Skill(skill::SkillCommand),
    /// Trust a project folder, so its .synapse/settings.json permission rules, its hooks (and
    /// the scripts they run), custom commands and agents apply as they read now: lists what is
    /// new or changed since you last trusted it, with a diff, and asks first (--yes: don't ask).
    Trust(trust::TrustArgs),
    /// Check this installation: daemon and socket, versions, settings and rules files, the
    /// model (one request that costs no tokens), MCP servers, the sandbox, instruction files.
    /// Each problem comes with its fix; exits 1 when something is broken.
    Doctor(doctor::DoctorArgs),
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed's `agent_servers`,
    /// JetBrains, Neovim's CodeCompanion, Emacs's agent-shell): each editor session is a Synapse
    /// session in the editor's folder. Started by the editor, not typed.
    Acp,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to generate completions for.
        shell: clap_complete::Shell,
    },
}

/// Parses the command line, runs the command and maps errors to a message and exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse_from(start_form(std::env::args_os().collect()));
    match run(cli) {
        Ok(code) => code,
        // Nobody reads the output any more (`| head -1`): nothing to say, nothing failed.
        Err(e) if crate::out::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("synapse: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `synapse -p "<prompt>" [run options]` is `synapse run -p "<prompt>" …`: when `-p`/`--print`
/// comes before any subcommand, `run` is put in front so clap parses the run options.
fn start_form(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is_print = |a: &std::ffi::OsString| {
        a == "-p" || a == "--print" || a.to_string_lossy().starts_with("--print=")
    };
    let first = args.get(1).map(|a| a.to_string_lossy().into_owned());
    let subcommand = first
        .as_deref()
        .is_some_and(|f| Cli::command().find_subcommand(f).is_some() || f == "help");
    if !subcommand && args.iter().skip(1).any(is_print) {
        args.insert(1, "run".into());
    }
    args
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        return block_on(chat::run(paths()?, cli.chat, cli.prompt));
    };
    match command {
        Command::Completions { shell } => {
            // Written in one piece, so a reader that stops early (`| head`) ends it quietly
            // instead of the generator panicking on the closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "synapse", &mut script);
            print_quietly(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Chat(args) => block_on(chat::run(paths()?, args, None)),
        Command::Acp => block_on(async {
            crate::acp::serve(paths()?)
                .await
                .map(|()| ExitCode::SUCCESS)
        }),
        Command::Daemon(cmd) => block_on(daemon::run(paths()?, cmd)),
        Command::Exec(args) => block_on(exec::run(paths()?, args)),
        Command::Run(args) => block_on(run::run(paths()?, args)),
        Command::Sessions(cmd) => block_on(sessions::run(paths()?, cmd)),
        Command::Attach(args) => block_on(attach::run(paths()?, args)),
        Command::Mcp(cmd) => block_on(mcp::run(paths()?, cmd)),
        Command::Tools(cmd) => block_on(tools::run(paths()?, cmd)),
        Command::Plugin(cmd) => block_on(plugin::run(paths()?, cmd)),
        Command::Skill(cmd) => block_on(skill::run(paths()?, cmd)),
        Command::Trust(args) => block_on(trust::run(paths()?, args)),
        Command::Doctor(args) => block_on(doctor::run(paths()?, args)),
    }
}

/// Writes `bytes` to stdout in one piece; a reader that went away early (`| head`) is not an
/// error (`println!` would panic on the closed pipe).
pub(crate) fn print_quietly(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        let args = std::iter::once("synapse")
            .chain(args.iter().copied())
            .map(std::ffi::OsString::from)
            .collect();
        Cli::parse_from(start_form(args))
    }

    #[test]
    fn start_forms() {
        let bare = parse(&[]);
        assert!(bare.command.is_none() && bare.prompt.is_none());
        let prompted = parse(&["fix the tests"]);
        assert!(prompted.command.is_none());
        assert_eq!(prompted.prompt.as_deref(), Some("fix the tests"));
        assert!(matches!(
            parse(&["-p", "hi"]).command,
            Some(Command::Run(_))
        ));
        assert!(matches!(
            parse(&["--model", "m", "--print=hi"]).command,
            Some(Command::Run(_))
        ));
        assert!(matches!(parse(&["chat"]).command, Some(Command::Chat(_))));
        let resumed = parse(&["--continue", "go on"]);
        assert!(resumed.chat.continue_latest);
        // Claude Code's `--verbose`, wherever it takes it.
        for args in [
            &["-p", "hi", "--verbose"][..],
            &["--verbose", "-p", "hi"],
            &["run", "hi", "--verbose", "--output-format", "stream-json"],
            &["-p", "--verbose", "hi"],
            &["-p", "--input-format", "stream-json", "--verbose"],
        ] {
            assert!(
                matches!(parse(args).command, Some(Command::Run(ref r)) if r.verbose),
                "{args:?}"
            );
        }
        assert!(parse(&["--verbose"]).chat.verbose);
        assert!(
            matches!(parse(&["chat", "--verbose"]).command, Some(Command::Chat(ref c)) if c.verbose)
        );
    }
}
