//! `synapse doctor [--offline] [--json]`: is this installation healthy? One line per check — ✓
//! fine, ! worth knowing, ✗ broken — each problem with its fix; exit status 1 when anything is
//! broken. This client checks what it sees itself (its version and the installed `synapsed`'s,
//! the socket, the running daemon, the MCP servers through `Mcp.List`); the daemon checks the
//! rest (`Daemon.Doctor`: settings and rules files, the model with one request that costs no
//! tokens, the sandbox, instruction files). Nothing is ever sent to the model as a prompt.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use synapse_shared::paths::Paths;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::{
    DoctorRequest, DoctorVerdict, McpListRequest, McpServerState, StatusRequest,
};
use tonic::transport::Channel;

use crate::connect::{self, Unreachable};
use crate::render::theme::Theme;

/// How long MCP servers that are still connecting are waited for.
const MCP_SETTLE: Duration = Duration::from_secs(10);
const MCP_POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Default, Args)]
pub struct DoctorArgs {
    /// Do not send the one request that checks the model server answers.
    #[arg(long)]
    pub offline: bool,
    /// Print the checks as JSON (`[{"topic","status","summary","fix"}]`).
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Clone)]
struct Check {
    topic: String,
    verdict: Verdict,
    summary: String,
    fix: String,
}

impl Check {
    fn new(topic: &str, verdict: Verdict, summary: impl Into<String>) -> Self {
        Self {
            topic: topic.to_string(),
            verdict,
            summary: summary.into(),
            fix: String::new(),
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }
}

pub async fn run(paths: Paths, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let checks = checks(&paths, &args).await;
    if args.json {
        let list: Vec<serde_json::Value> = checks
            .iter()
            .map(|c| {
                serde_json::json!({
                    "topic": c.topic,
                    "status": match c.verdict {
                        Verdict::Ok => "ok",
                        Verdict::Warn => "warning",
                        Verdict::Fail => "broken",
                    },
                    "summary": c.summary,
                    "fix": (!c.fix.is_empty()).then_some(&c.fix),
                })
            })
            .collect();
        super::print_quietly(format!("{}\n", serde_json::to_string_pretty(&list)?).as_bytes())?;
    } else {
        super::print_quietly(render(&Theme::detect(), &checks).as_bytes())?;
    }
    Ok(if checks.iter().any(|c| c.verdict == Verdict::Fail) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Every check, in the order shown.
async fn checks(paths: &Paths, args: &DoctorArgs) -> Vec<Check> {
    let mut out = vec![installed_daemon()];
    // A socket (or folder) that is not the user's own is never talked to.
    if let Err(e) = connect::check_socket(paths.socket()) {
        out.push(Check::new("socket", Verdict::Fail, format!("{e:#}")));
        return out;
    }
    let channel = match daemon(paths, &mut out).await {
        Some(channel) => channel,
        None => return out,
    };
    out.push(socket_check(paths));
    let cwd = std::env::current_dir().unwrap_or_default();
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    match DaemonClient::new(channel.clone())
        .doctor(DoctorRequest {
            cwd: cwd.display().to_string(),
            env: env.clone(),
            skip_model: args.offline,
        })
        .await
    {
        Ok(reply) => out.extend(reply.into_inner().checks.into_iter().map(|c| {
            let verdict = match DoctorVerdict::try_from(c.verdict).unwrap_or(DoctorVerdict::Fail) {
                DoctorVerdict::Ok => Verdict::Ok,
                DoctorVerdict::Warn => Verdict::Warn,
                DoctorVerdict::Fail => Verdict::Fail,
            };
            Check::new(&c.topic, verdict, c.summary).fix(c.fix)
        })),
        Err(s) => out.push(
            Check::new(
                "daemon",
                Verdict::Fail,
                format!(
                    "the daemon did not answer the doctor's questions: {}",
                    s.message()
                ),
            )
            .fix("synapse daemon stop (the next command starts an up-to-date synapsed)"),
        ),
    }
    out.extend(mcp_checks(channel, &cwd, env).await);
    out
}

/// The `synapsed` a command would start, and whether it is this client's version.
fn installed_daemon() -> Check {
    let exe = connect::daemon_executable();
    let ours = synapse_shared::VERSION;
    let answer = std::process::Command::new(&exe)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output();
    match answer {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let theirs = text.split_whitespace().nth(1).unwrap_or("?").to_string();
            if theirs == ours {
                Check::new(
                    "versions",
                    Verdict::Ok,
                    format!("synapse {ours}, synapsed {theirs} ({})", exe.display()),
                )
            } else {
                Check::new(
                    "versions",
                    Verdict::Fail,
                    format!("synapse is {ours} but {} is {theirs}", exe.display()),
                )
                .fix("install synapse and synapsed from the same release, side by side")
            }
        }
        Ok(out) => Check::new(
            "versions",
            Verdict::Fail,
            format!(
                "{} --version failed: {}",
                exe.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )
        .fix("reinstall synapsed beside synapse"),
        Err(e) => Check::new(
            "versions",
            Verdict::Fail,
            format!("cannot run {}: {e}", exe.display()),
        )
        .fix("install synapsed beside synapse, or put it on PATH"),
    }
}

/// The socket and its folder, once the daemon listens: where, and their modes (that they are
/// the user's own was checked before connecting).
fn socket_check(paths: &Paths) -> Check {
    let socket = paths.socket();
    let mode = |p: &Path| match std::fs::symlink_metadata(p) {
        Ok(m) => format!("mode {:04o}", m.mode() & 0o7777),
        Err(e) => format!("cannot be read ({e})"),
    };
    let folder = socket.parent().map(mode).unwrap_or_default();
    Check::new(
        "socket",
        Verdict::Ok,
        format!(
            "{}: yours, {}, its folder {folder}",
            socket.display(),
            mode(socket)
        ),
    )
}

/// The running daemon (started when none runs), and whether it is this client's version.
async fn daemon(paths: &Paths, out: &mut Vec<Check>) -> Option<Channel> {
    let (channel, started) = match connect::connect_running(paths).await {
        Ok(channel) => (channel, false),
        Err(Unreachable::Refused(e)) => {
            out.push(Check::new("daemon", Verdict::Fail, format!("{e:#}")));
            return None;
        }
        Err(Unreachable::NotRunning) => match connect::connect(paths).await {
            Ok(channel) => (channel, true),
            Err(e) => {
                out.push(
                    Check::new(
                        "daemon",
                        Verdict::Fail,
                        format!("synapsed does not start: {e:#}"),
                    )
                    .fix(format!(
                        "read {} and `synapse daemon logs`",
                        paths.startup_log().display()
                    )),
                );
                return None;
            }
        },
    };
    let status = match DaemonClient::new(channel.clone())
        .status(StatusRequest {})
        .await
    {
        Ok(s) => s.into_inner(),
        Err(s) => {
            out.push(
                Check::new(
                    "daemon",
                    Verdict::Fail,
                    format!("synapsed does not answer: {}", s.message()),
                )
                .fix("synapse daemon stop, then run the command again"),
            );
            return None;
        }
    };
    out.push(running_daemon(
        synapse_shared::VERSION,
        &status.version,
        status.pid,
        started,
    ));
    Some(channel)
}

/// The running daemon against this client: another version answers with another protocol and
/// other behaviour, so it is broken until it is restarted.
fn running_daemon(ours: &str, theirs: &str, pid: u32, started: bool) -> Check {
    if theirs != ours {
        return Check::new(
            "daemon",
            Verdict::Fail,
            format!("the running synapsed is {theirs} (pid {pid}), this synapse is {ours}"),
        )
        .fix("synapse daemon stop (the next command starts the installed synapsed)");
    }
    let how = if started { "started now" } else { "running" };
    Check::new(
        "daemon",
        Verdict::Ok,
        format!("synapsed {theirs} {how} (pid {pid})"),
    )
}

/// Each configured MCP server (the user's and this folder's project's), once the ones still
/// connecting have settled or [`MCP_SETTLE`] has passed.
async fn mcp_checks(
    channel: Channel,
    cwd: &Path,
    env: std::collections::HashMap<String, String>,
) -> Vec<Check> {
    let mut client = McpClient::new(channel);
    let deadline = Instant::now() + MCP_SETTLE;
    let list = loop {
        let reply = client
            .list(McpListRequest {
                include_tools: false,
                cwd: cwd.display().to_string(),
                env: env.clone(),
                session: String::new(),
            })
            .await;
        let list = match reply {
            Ok(r) => r.into_inner(),
            Err(s) => {
                return vec![Check::new(
                    "mcp",
                    Verdict::Fail,
                    format!("cannot list the MCP servers: {}", s.message()),
                )];
            }
        };
        let connecting = list
            .servers
            .iter()
            .any(|s| s.state == McpServerState::Connecting as i32);
        if !connecting || Instant::now() >= deadline {
            break list;
        }
        tokio::time::sleep(MCP_POLL).await;
    };
    let mut out: Vec<Check> = list
        .config_problems
        .iter()
        .map(|p| {
            Check::new("mcp", Verdict::Fail, p.clone())
                .fix("correct the entry; the other servers are used meanwhile")
        })
        .collect();
    for s in &list.servers {
        let state = McpServerState::try_from(s.state).unwrap_or(McpServerState::Unspecified);
        let from = if s.source.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.source)
        };
        let reason = if s.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", s.reason)
        };
        let check = match state {
            McpServerState::Ready => Check::new(
                "mcp",
                Verdict::Ok,
                format!("{}: ready, {} tools{from}", s.name, s.tool_count),
            ),
            McpServerState::Disabled => Check::new(
                "mcp",
                Verdict::Warn,
                format!("{}: not used{reason}{from}", s.name),
            ),
            McpServerState::NeedsLogin => Check::new(
                "mcp",
                Verdict::Fail,
                format!("{}: needs login{reason}{from}", s.name),
            )
            .fix(format!("synapse mcp login {}", s.name)),
            // Waiting for the user's decision about a project server: `reason` names the
            // command that makes it.
            McpServerState::Untrusted | McpServerState::NeedsApproval | McpServerState::Held => {
                let waits = match state {
                    McpServerState::Untrusted => "not used, the folder is not trusted",
                    McpServerState::NeedsApproval => "not used until you approve it",
                    _ => "held: changed since you approved it",
                };
                Check::new("mcp", Verdict::Warn, format!("{}: {waits}{from}", s.name))
                    .fix(s.reason.clone())
            }
            McpServerState::Connecting => Check::new(
                "mcp",
                Verdict::Warn,
                format!(
                    "{}: still connecting after {}s{from}",
                    s.name,
                    MCP_SETTLE.as_secs()
                ),
            )
            .fix("synapse daemon logs shows what it waits for"),
            McpServerState::Failed | McpServerState::Unspecified => Check::new(
                "mcp",
                Verdict::Fail,
                format!("{}: failed{reason}{from}", s.name),
            )
            .fix(format!(
                "correct its entry, then: synapse tools refresh (synapse mcp get {} shows it)",
                s.name
            )),
        };
        out.push(check);
    }
    if out.is_empty() {
        out.push(Check::new("mcp", Verdict::Ok, "no MCP servers configured"));
    }
    out
}

/// The report: `✓ topic  summary`, and under a problem `fix: …`.
fn render(theme: &Theme, checks: &[Check]) -> String {
    let width = checks.iter().map(|c| c.topic.len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in checks {
        let mark = match c.verdict {
            Verdict::Ok => theme.green("✓"),
            Verdict::Warn => theme.yellow("!"),
            Verdict::Fail => theme.red("✗"),
        };
        out.push_str(&format!("{mark} {:<width$}  {}\n", c.topic, c.summary));
        if !c.fix.is_empty() {
            out.push_str(&format!(
                "  {:<width$}  {}\n",
                "",
                theme.dim(&format!("fix: {}", c.fix))
            ));
        }
    }
    let broken = checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
    let warnings = checks.iter().filter(|c| c.verdict == Verdict::Warn).count();
    out.push_str(&match (broken, warnings) {
        (0, 0) => "\nEverything looks fine.\n".to_string(),
        (0, w) => format!("\nNothing broken; {w} warning{}.\n", plural(w)),
        (b, _) => format!("\n{b} problem{} to fix.\n", plural(b)),
    });
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_of_another_version_is_broken_until_stopped() {
        let old = running_daemon("0.2.0", "0.1.0", 42, false);
        assert_eq!(old.verdict, Verdict::Fail);
        assert_eq!(
            old.summary,
            "the running synapsed is 0.1.0 (pid 42), this synapse is 0.2.0"
        );
        assert!(old.fix.starts_with("synapse daemon stop"), "{old:?}");
        let same = running_daemon("0.2.0", "0.2.0", 42, true);
        assert_eq!(same.verdict, Verdict::Ok);
        assert_eq!(same.summary, "synapsed 0.2.0 started now (pid 42)");
    }

    #[test]
    fn a_report_marks_each_line_and_puts_the_fix_under_the_problem() {
        let checks = vec![
            Check::new("daemon", Verdict::Ok, "synapsed 1 running (pid 2)"),
            Check::new("model", Verdict::Fail, "no answer").fix("start the server"),
            Check::new("sandbox", Verdict::Warn, "partly"),
        ];
        let text = render(&Theme::plain(), &checks);
        assert_eq!(
            text,
            "✓ daemon   synapsed 1 running (pid 2)\n\
             ✗ model    no answer\n\
            \x20          fix: start the server\n\
             ! sandbox  partly\n\
             \n1 problem to fix.\n"
        );
    }
}
