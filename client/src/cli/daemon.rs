//! `synapse daemon start|stop|status|logs`.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Subcommand;
use synapse_shared::paths::Paths;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::{ShutdownRequest, StatusRequest, StatusResponse, WorkspaceStatus};

use crate::connect::{self, Unreachable};

/// How long `daemon stop` waits for the socket to disappear.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// Poll interval for `daemon logs -f` and `daemon stop`.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the daemon if it is not running, and print its pid.
    Start,
    /// Stop the daemon gracefully (running commands are stopped, the socket removed).
    Stop,
    /// Show whether the daemon runs: pid, uptime, socket, home, sessions, projects served.
    Status {
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the daemon's log.
    Logs {
        /// Keep printing new lines as they are written.
        #[arg(short, long)]
        follow: bool,
        /// Number of lines to print from the end.
        #[arg(short = 'n', long, default_value_t = 100)]
        lines: usize,
    },
}

pub async fn run(paths: Paths, cmd: DaemonCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DaemonCommand::Start => {
            let status = status_of(connect::connect(&paths).await?).await?;
            println!("synapsed {} running (pid {})", status.version, status.pid);
            warn_settings(&status);
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Stop => stop(&paths).await,
        DaemonCommand::Status { json } => {
            let status = status_of(connect::connect(&paths).await?).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status_json(&status))?);
            } else {
                print!("{}", render_status(&status));
                warn_settings(&status);
            }
            if let Some(line) = super::skills_env::skills_dir_line_here(&status.skills_env_dir)
                .filter(|l| l.starts_with("warning:"))
            {
                eprintln!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Logs { follow, lines } => logs(&paths.logs_dir(), lines, follow),
    }
}

async fn status_of(channel: tonic::transport::Channel) -> anyhow::Result<StatusResponse> {
    Ok(DaemonClient::new(channel)
        .status(StatusRequest {})
        .await?
        .into_inner())
}

async fn stop(paths: &Paths) -> anyhow::Result<ExitCode> {
    let channel = match connect::connect_running(paths).await {
        Ok(c) => c,
        Err(Unreachable::NotRunning) => {
            println!("synapsed is not running");
            return Ok(ExitCode::SUCCESS);
        }
        Err(Unreachable::Refused(e)) => return Err(e),
    };
    let mut client = DaemonClient::new(channel);
    let pid = client.status(StatusRequest {}).await?.into_inner().pid;
    client.shutdown(ShutdownRequest {}).await?;
    let deadline = Instant::now() + STOP_TIMEOUT;
    // The lock is freed before the process has fully exited: wait for both, so "stopped"
    // is true when it is printed.
    while paths.socket().exists() || !connect::daemon_gone(paths) || process_alive(pid) {
        if Instant::now() >= deadline {
            anyhow::bail!(
                "synapsed (pid {pid}) did not stop within {}s",
                STOP_TIMEOUT.as_secs()
            );
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
    println!("synapsed stopped (pid {pid})");
    Ok(ExitCode::SUCCESS)
}

/// True while `pid` runs (a zombie waiting to be reaped counts as gone).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        // No /proc (macOS): ask the kernel whether the pid exists.
        Err(_) if !std::path::Path::new("/proc/self").exists() => {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok()
        }
        Err(_) => false,
    }
}

fn warn_settings(status: &StatusResponse) {
    if !status.settings_error.is_empty() {
        eprintln!(
            "warning: {}\n         synapsed never overwrites the file; once it is fixed it counts at the next command.",
            status.settings_error
        );
    }
}

fn status_json(s: &StatusResponse) -> serde_json::Value {
    serde_json::json!({
        "running": true,
        "version": s.version,
        "pid": s.pid,
        "uptimeMs": s.uptime_ms,
        "socket": s.socket_path,
        "home": s.home,
        "logs": s.log_dir,
        "sessions": s.sessions,
        "skills": s.skills,
        "skillsEnvDir": (!s.skills_env_dir.is_empty()).then_some(&s.skills_env_dir),
        "tools": s.tools,
        "backgroundJobs": s.background_jobs,
        "settingsError": (!s.settings_error.is_empty()).then_some(&s.settings_error),
        "workspaces": s.workspaces.iter().map(|w| serde_json::json!({
            "root": w.root,
            "sessions": w.sessions,
            "mcpServers": w.servers,
            "mcpServersReady": w.servers_ready,
            "stopsInSecs": (w.sessions == 0).then_some(w.stops_in_secs),
        })).collect::<Vec<_>>(),
    })
}

pub fn render_status(s: &StatusResponse) -> String {
    let mut out = format!(
        "synapsed {} running\n  pid       {}\n  uptime    {}\n  socket    {}\n  home      {}\n  logs      {}\n  sessions  {}\n  skills    {}\n  tools     {}\n  jobs      {}\n",
        s.version,
        s.pid,
        human_duration(Duration::from_millis(s.uptime_ms)),
        s.socket_path,
        s.home,
        s.log_dir,
        s.sessions,
        s.skills,
        s.tools,
        s.background_jobs,
    );
    if !s.skills_env_dir.is_empty() {
        out.push_str(&format!(
            "  skills dir  {} (SYNAPSE_SKILLS_DIR, read when the daemon started)\n",
            s.skills_env_dir
        ));
    }
    if !s.workspaces.is_empty() {
        out.push_str(&format!("  projects  {}\n", s.workspaces.len()));
        for w in &s.workspaces {
            out.push_str(&format!("    {}  {}\n", w.root, workspace_line(w)));
        }
    }
    out
}

/// One workspace: who holds it, its MCP servers, and when an idle one stops them.
fn workspace_line(w: &WorkspaceStatus) -> String {
    let held = match w.sessions {
        0 => format!(
            "idle, stops in {}",
            human_duration(Duration::from_secs(w.stops_in_secs))
        ),
        1 => "1 session".to_string(),
        n => format!("{n} sessions"),
    };
    match w.servers {
        0 => held,
        n => format!("{held}; MCP servers {}/{n} connected", w.servers_ready),
    }
}

fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    let (days, hours, mins, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (days, hours, mins) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{mins}m {s}s"),
        (0, _, _) => format!("{hours}h {mins}m"),
        _ => format!("{days}d {hours}h"),
    }
}

/// The newest daily log file (names sort by date).
fn newest_log(dir: &Path) -> Option<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("synapsed.") && n.ends_with(".log") && !n.contains("startup")
            })
        })
        .collect();
    logs.sort();
    logs.pop()
}

fn logs(dir: &Path, lines: usize, follow: bool) -> anyhow::Result<ExitCode> {
    let Some(mut path) = newest_log(dir) else {
        println!("no daemon log yet in {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    let mut file =
        std::fs::File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let all: Vec<&str> = text.lines().collect();
    let mut out = std::io::stdout().lock();
    for line in &all[all.len().saturating_sub(lines)..] {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    let mut pos = file.stream_position()?;
    loop {
        std::thread::sleep(POLL_INTERVAL);
        // A new day starts a new file.
        if let Some(newest) = newest_log(dir).filter(|n| *n != path) {
            path = newest;
            file = std::fs::File::open(&path)?;
            pos = 0;
        }
        let len = file.metadata()?.len();
        if len < pos {
            pos = 0;
        }
        if len > pos {
            file.seek(SeekFrom::Start(pos))?;
            let mut reader = BufReader::new(&file);
            let mut line = String::new();
            while reader.read_line(&mut line)? > 0 {
                out.write_all(line.as_bytes())?;
                line.clear();
            }
            out.flush()?;
            pos = len;
        }
    }
}
