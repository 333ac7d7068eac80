//! `synapse mcp list|call` (add/remove/get in [`super::mcp_edit`], login/logout in
//! [`super::mcp_login`]) and `synapse tools refresh mcp`: thin front-ends of the daemon's `Mcp`
//! service. `mcp call` is also what every `mcp:<server>:<tool>` wrapper execs, so it passes the
//! argv through untouched (the daemon maps it with the tool's schema) and mirrors the daemon's
//! stdout, stderr and exit code exactly.

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use synapse_shared::paths::Paths;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::{
    McpCallToolRequest, McpListRequest, McpRefreshRequest, McpServer, McpServerState,
};

use crate::connect;

/// Exit code when the daemon (and so the server) cannot be reached; matches the daemon's
/// "server unavailable".
const EXIT_UNAVAILABLE: u8 = 3;

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List every configured MCP server (from every source, in any folder) with its state,
    /// tool count, scope and — for one not running — the command that enables it.
    List {
        /// Also list every tool command of each server.
        #[arg(long)]
        tools: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call a tool: `synapse mcp call <server> <tool> [--name value | positional …]`.
    /// `-h`/`--help` after the tool name print the tool's help.
    #[command(disable_help_flag = true)]
    Call {
        /// Answer as in this project root (a project server's wrapper names its project, so
        /// the call reaches it wherever the shell is); default: the project above the cwd.
        #[arg(long, value_name = "DIR")]
        workspace: Option<String>,
        /// Answer as in this chat session (a session server's wrapper names its session);
        /// default: `$SYNAPSE_SESSION`, set in every agent shell.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Server name as configured.
        #[arg(allow_hyphen_values = true)]
        server: String,
        /// Tool name as the server lists it.
        tool: Option<String>,
        /// Tool arguments: --name value, --name=value, positional values for required
        /// parameters, --json '<object>' or --json - (stdin).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Add a server: `synapse mcp add <name> -- <command> [args…]` or `… <name> <https://…/mcp>`.
    Add(super::mcp_edit::AddArgs),
    /// Add a server from its JSON entry, as one value of a config file's `mcpServers` map.
    #[command(name = "add-json")]
    AddJson(super::mcp_edit::AddJsonArgs),
    /// Remove a server from the user's config, the project's .mcp.json or this project's local
    /// servers.
    Remove {
        name: String,
        /// Which one (needed only when more than one has the name).
        #[arg(long, short = 's', value_enum)]
        scope: Option<super::mcp_edit::Scope>,
    },
    /// Show one server: state, scope, where it is configured, its entry (secrets masked) and
    /// tools.
    Get { name: String },
    /// Re-read the MCP config with this terminal's environment (`${VAR}` in your config and in
    /// this project's), reconnect what changed; the same as `synapse tools refresh mcp`.
    Refresh,
    /// List a server's resources (and resource templates).
    Resources {
        /// Answer as in this project root (what a project server's wrapper passes).
        #[arg(long, value_name = "DIR")]
        workspace: Option<String>,
        /// Answer as in this chat session (a session server's wrapper names its session);
        /// default: `$SYNAPSE_SESSION`, set in every agent shell.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        server: String,
    },
    /// Print a resource's contents.
    Read {
        /// Answer as in this project root (what a project server's wrapper passes).
        #[arg(long, value_name = "DIR")]
        workspace: Option<String>,
        /// Answer as in this chat session (a session server's wrapper names its session);
        /// default: `$SYNAPSE_SESSION`, set in every agent shell.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        server: String,
        uri: String,
    },
    /// List a server's prompts with their arguments.
    Prompts { server: String },
    /// Print a prompt filled with `name=value` arguments (what `/mcp:<server>:<prompt>` sends).
    Prompt {
        server: String,
        name: String,
        /// Arguments as name=value.
        args: Vec<String>,
    },
    /// Log in to a remote (http) server with OAuth, in the browser.
    ///
    /// Opens the server's authorization page with $BROWSER (else xdg-open or open; the URL is
    /// printed in any case) and waits for the browser to come back to Synapse on 127.0.0.1. The
    /// daemon stores the tokens (0600, in $SYNAPSE_HOME/mcp/oauth), refreshes them by itself,
    /// and reconnects the server.
    #[command(
        after_help = "A server that answers 401 shows as needs-login in `synapse mcp list`. \
Dynamic client registration is used where the authorization server offers it; otherwise set \
\"oauth\": {\"clientId\": \"…\", \"callbackPort\": 8123} in the server's entry. An \
\"Authorization\" header in the entry wins over OAuth."
    )]
    Login {
        /// Server name (see `synapse mcp list`).
        server: String,
        /// Give up when the browser has not come back after this many seconds (default 300).
        #[arg(long, value_name = "SECS")]
        timeout: Option<u32>,
        /// Only print the URL; do not start a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget a server's OAuth tokens (it needs `synapse mcp login` again).
    Logout {
        /// Server name.
        server: String,
    },
    /// Serve Synapse as an MCP server over stdio (skills, sub-agents, the daemon's MCP tools) for
    /// Claude Code, Codex or any MCP client.
    Serve(super::mcp_serve::ServeArgs),
    /// Approve this project's MCP servers as their entries read now, and start them. A
    /// project's servers run code: they start only in a trusted folder, once approved, and a
    /// changed entry needs approval again.
    Approve {
        /// Server names (see `synapse mcp list`).
        servers: Vec<String>,
        /// Every server of this project waiting for approval.
        #[arg(long, conflicts_with = "servers")]
        all: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Reconnect changed MCP servers, regenerate wrappers and delete stale ones.
    Refresh {
        /// What to refresh.
        #[arg(value_enum, default_value_t = RefreshTarget::Mcp)]
        target: RefreshTarget,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RefreshTarget {
    /// MCP servers and their `mcp:*` wrappers.
    Mcp,
}

/// The caller's working directory as the daemon wants it (its project's servers answer first);
/// empty when it cannot be read.
pub(crate) fn caller_cwd() -> String {
    std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The caller's environment (`${VAR}` in its project's MCP config expands from it).
pub(crate) fn caller_env() -> std::collections::HashMap<String, String> {
    std::env::vars().collect()
}

/// The chat session a call answers for: `--session`, else the agent shell's `$SYNAPSE_SESSION`
/// ("" outside any).
pub fn caller_session(flag: Option<String>) -> String {
    flag.or_else(|| std::env::var(synapse_shared::shell_env::SESSION_VAR).ok())
        .unwrap_or_default()
}

/// `synapse mcp call --help`: the subcommand's own help (its help flag is off, so that `-h`
/// after a tool name reaches the tool).
fn call_help() -> anyhow::Result<ExitCode> {
    use clap::CommandFactory;
    let mut cli = super::Cli::command();
    cli.build();
    let call = cli
        .find_subcommand_mut("mcp")
        .and_then(|mcp| mcp.find_subcommand_mut("call"))
        .ok_or_else(|| anyhow::anyhow!("the `mcp call` subcommand is missing from the CLI"))?;
    call.print_long_help()?;
    Ok(ExitCode::SUCCESS)
}

pub async fn run(paths: Paths, cmd: McpCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        McpCommand::List { tools, json } => list(&paths, tools, json).await,
        McpCommand::Call {
            workspace,
            session,
            server,
            tool,
            args,
        } => match (server.as_str(), tool) {
            ("-h" | "--help", _) => call_help(),
            (_, None) => {
                eprintln!(
                    "synapse mcp call: name the tool after the server: `synapse mcp call {server} <tool> [args…]` (`synapse mcp list --tools` lists them)"
                );
                Ok(ExitCode::from(2))
            }
            (_, Some(tool)) => Ok(call(&paths, (workspace, session), server, tool, args).await),
        },
        McpCommand::Add(a) => super::mcp_edit::add(&paths, a).await,
        McpCommand::AddJson(a) => super::mcp_edit::add_json(&paths, a).await,
        McpCommand::Refresh => refresh(&paths).await,
        McpCommand::Remove { name, scope } => super::mcp_edit::remove(&paths, name, scope).await,
        McpCommand::Get { name } => super::mcp_edit::get(&paths, name).await,
        McpCommand::Resources {
            workspace,
            session,
            server,
        } => {
            let ask = super::mcp_query::Ask::Resources;
            super::mcp_query::run_in(&paths, (workspace, session), server, ask).await
        }
        McpCommand::Read {
            workspace,
            session,
            server,
            uri,
        } => {
            let ask = super::mcp_query::Ask::Read(uri);
            super::mcp_query::run_in(&paths, (workspace, session), server, ask).await
        }
        McpCommand::Prompts { server } => {
            super::mcp_query::run(&paths, server, super::mcp_query::Ask::Prompts).await
        }
        McpCommand::Prompt { server, name, args } => {
            let ask = super::mcp_query::Ask::Prompt { name, args };
            super::mcp_query::run(&paths, server, ask).await
        }
        McpCommand::Serve(a) => super::mcp_serve::run(paths, a).await,
        McpCommand::Approve { servers, all } => {
            super::mcp_approve::approve(&paths, servers, all).await
        }
        McpCommand::Login {
            server,
            timeout,
            no_browser,
        } => super::mcp_login::login(&paths, server, timeout, no_browser).await,
        McpCommand::Logout { server } => super::mcp_login::logout(&paths, server).await,
    }
}

pub async fn run_tools(paths: Paths, cmd: ToolsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ToolsCommand::Refresh {
            target: RefreshTarget::Mcp,
        } => refresh(&paths).await,
    }
}

/// `--json -` is the only argument that reads stdin; anything else leaves it to the caller.
fn wants_stdin(args: &[String]) -> bool {
    args.iter()
        .zip(args.iter().skip(1))
        .any(|(a, b)| a == "--json" && b == "-")
        || args.iter().any(|a| a == "--json=-")
}

async fn call(
    paths: &Paths,
    (workspace, session): (Option<String>, Option<String>),
    server: String,
    tool: String,
    argv: Vec<String>,
) -> ExitCode {
    let stdin = if wants_stdin(&argv) {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            eprintln!("synapse: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        Some(buf)
    } else {
        None
    };
    let channel = match connect::connect(paths).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp:{server}:{tool}: cannot reach synapsed: {e:#}");
            return ExitCode::from(EXIT_UNAVAILABLE);
        }
    };
    let request = McpCallToolRequest {
        server: server.clone(),
        tool: tool.clone(),
        argv,
        has_stdin: stdin.is_some(),
        stdin: stdin.unwrap_or_default(),
        arguments_json: String::new(),
        workspace: workspace.unwrap_or_default(),
        cwd: caller_cwd(),
        // Inside an agent's shell: its session's folder, where the tool's images go.
        scratch: std::env::var(synapse_shared::shell_env::SCRATCH_VAR).unwrap_or_default(),
        session: caller_session(session),
    };
    match super::mcp_query::mcp_client(channel)
        .call_tool(request)
        .await
    {
        Ok(response) => {
            let r = response.into_inner();
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = std::io::stdout().write_all(&r.stdout);
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().write_all(&r.stderr);
            ExitCode::from(u8::try_from(r.exit_code).unwrap_or(1))
        }
        Err(status) => {
            eprintln!(
                "mcp:{server}:{tool}: synapsed failed the call: {}",
                status.message()
            );
            ExitCode::from(EXIT_UNAVAILABLE)
        }
    }
}

/// `ready`, `failed`, … for a server's state.
pub fn state_label(s: &McpServer) -> &'static str {
    state_name(s)
}

fn state_name(s: &McpServer) -> &'static str {
    match McpServerState::try_from(s.state).unwrap_or(McpServerState::Unspecified) {
        McpServerState::Connecting => "connecting",
        McpServerState::Ready => "ready",
        McpServerState::Failed => "failed",
        McpServerState::Disabled => "disabled",
        McpServerState::NeedsLogin => "needs-login",
        McpServerState::Untrusted => "untrusted",
        McpServerState::NeedsApproval => "needs-approval",
        McpServerState::Held => "held",
        McpServerState::Unspecified => "unknown",
    }
}

fn detail(s: &McpServer) -> String {
    if !s.reason.is_empty() {
        s.reason.clone()
    } else if s.pid != 0 {
        format!("pid {}", s.pid)
    } else {
        String::new()
    }
}

async fn list(paths: &Paths, tools: bool, json: bool) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    let r = McpClient::new(channel)
        .list(McpListRequest {
            include_tools: tools || json,
            cwd: caller_cwd(),
            env: caller_env(),
            // In an agent shell: its session's own servers too.
            session: caller_session(None),
        })
        .await?
        .into_inner();
    if json {
        let servers: Vec<serde_json::Value> = r
            .servers
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name, "state": state_name(s), "reason": s.reason,
                    "transport": s.transport, "toolCount": s.tool_count, "source": s.source,
                    "scope": s.scope,
                    "pid": (s.pid != 0).then_some(s.pid),
                    "tools": s.tools.iter().map(|t| serde_json::json!({"command": t.command, "description": t.description})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let doc = serde_json::json!({"servers": servers, "configProblems": r.config_problems,
                                     "notes": r.notes});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    if r.servers.is_empty() {
        println!(
            "No MCP servers configured. Add one with `synapse mcp add <name> -- <command> [args…]` (or edit {} or ./.mcp.json, then run `synapse tools refresh mcp`).",
            paths.mcp_dir().join("mcp_servers.json").display()
        );
    } else {
        let width = r
            .servers
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(4)
            .max(6);
        println!(
            "{:<width$}  {:<14}  {:>5}  {:<9}  {:<7}  DETAIL",
            "SERVER", "STATE", "TOOLS", "TRANSPORT", "SCOPE"
        );
        for s in &r.servers {
            println!(
                "{:<width$}  {:<14}  {:>5}  {:<9}  {:<7}  {}",
                s.name,
                state_name(s),
                s.tool_count,
                s.transport,
                s.scope,
                detail(s)
            );
            for t in &s.tools {
                println!("    {}  {}", t.command, t.description);
            }
        }
    }
    for p in &r.config_problems {
        eprintln!("config: {p}");
    }
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn names(label: &str, items: &[String]) -> String {
    if items.is_empty() {
        format!("0 {label}")
    } else {
        format!("{} {label} ({})", items.len(), items.join(", "))
    }
}

async fn refresh(paths: &Paths) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let r = McpClient::new(channel)
        .refresh(McpRefreshRequest {
            cwd,
            env: caller_env(),
        })
        .await?
        .into_inner();
    println!(
        "MCP servers: {}, {}, {}, {} unchanged",
        names("added", &r.added),
        names("removed", &r.removed),
        names("reconnected", &r.reconnected),
        r.unchanged.len()
    );
    println!(
        "Wrappers in {}: {} written, {} removed, {} unchanged",
        paths.bin_dir().display(),
        r.wrappers_written.len(),
        r.wrappers_removed.len(),
        r.wrappers_unchanged
    );
    for s in &r.failed {
        eprintln!("failed: {}: {}", s.name, s.reason);
    }
    for p in &r.config_problems {
        eprintln!("config: {p}");
    }
    Ok(if r.failed.is_empty() && r.config_problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_only_for_json_dash() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(wants_stdin(&v(&["--json", "-"])));
        assert!(wants_stdin(&v(&["x", "--json=-"])));
        assert!(!wants_stdin(&v(&["--json", "{}", "-"])));
        assert!(!wants_stdin(&v(&["-"])));
    }
}
