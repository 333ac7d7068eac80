//! synapse-tests: the end-to-end harness. A [`TestEnv`] is one temporary Synapse installation
//! (its own `SYNAPSE_HOME` and `HOME`), driven through the real `synapse` and `synapsed`
//! binaries built by `cargo test --workspace`. Dropping it stops the daemon it started.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use synapse_shared::paths::Paths;
use tempfile::TempDir;

pub mod fake_llm;
pub mod report;
pub mod web_fixture;

/// Default deadline for conditions in tests.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Path of a binary built in this workspace's target folder (`synapse`, `synapsed`, …).
pub fn bin(name: &str) -> PathBuf {
    // Test executables live in target/<profile>/deps; the binaries one level up.
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is not built; run the suite with `cargo test --workspace`",
        path.display()
    );
    path
}

/// Waits until `cond` holds, polling; panics with `what` after `timeout`.
pub fn wait_until(timeout: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// The captured result of a command, with text output.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs a prepared command to completion (stdin closed) and captures its output.
pub fn run(cmd: &mut Command) -> Run {
    cmd.stdin(std::process::Stdio::null());
    cmd.output()
        .map(Run::from)
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// [`run`] without blocking the async runtime (the fake model serves on it).
pub async fn run_async(mut cmd: Command) -> Run {
    cmd.stdin(std::process::Stdio::null());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.output()
        .await
        .map(Run::from)
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// One temporary Synapse installation.
pub struct TestEnv {
    root: TempDir,
    paths: Paths,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// A fresh home under a temp folder; nothing is created inside it until first use.
    pub fn new() -> Self {
        Self::with_home_named("home")
    }

    /// The same, with the `SYNAPSE_HOME` folder called `name` (quotes, `$( )`… to test that
    /// no generated script or command line breaks on a hostile path).
    pub fn with_home_named(name: &str) -> Self {
        let root = tempfile::Builder::new()
            .prefix("synapse-test-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"));
        let paths = Paths::with_home(root.path().join(name));
        std::fs::create_dir_all(root.path().join("user")).unwrap_or_default();
        std::fs::create_dir_all(root.path().join("work")).unwrap_or_default();
        Self { root, paths }
    }

    /// The temp root (holds the Synapse home, `user/` = $HOME, `work/` = default cwd).
    pub fn root(&self) -> &Path {
        self.root.path()
    }
    /// `SYNAPSE_HOME`.
    pub fn home(&self) -> &Path {
        self.paths.home()
    }
    pub fn paths(&self) -> &Paths {
        &self.paths
    }
    /// The `HOME` the programs see (so `~/.claude` and friends are isolated too).
    pub fn user_home(&self) -> PathBuf {
        self.root.path().join("user")
    }
    /// The working directory commands start in.
    pub fn workdir(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// Applies this installation's environment to a command, dropping the runner's Synapse and
    /// model variables so nothing leaks in from the machine.
    pub fn apply_env(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("SYNAPSE_") || k.starts_with("ANTHROPIC_") || k.starts_with("OPENAI_")
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("SYNAPSE_HOME", self.home())
            .env("HOME", self.user_home())
            .env("NO_COLOR", "1")
            .current_dir(self.workdir());
    }

    /// The real `synapse` client, set up for this installation.
    pub fn synapse(&self) -> Command {
        let mut cmd = Command::new(bin("synapse"));
        self.apply_env(&mut cmd);
        cmd
    }

    /// The real `synapsed`, set up for this installation (not started).
    pub fn synapsed(&self) -> Command {
        let mut cmd = Command::new(bin("synapsed"));
        self.apply_env(&mut cmd);
        cmd
    }

    /// Runs `synapse <args>` and captures the result.
    pub fn cli(&self, args: &[&str]) -> Run {
        run(self.synapse().args(args))
    }

    /// Runs `synapse <args>` with the fake model as its Anthropic endpoint (a daemon it starts
    /// inherits that endpoint too).
    pub fn cli_with_model(&self, fake: &fake_llm::FakeLlm, args: &[&str]) -> Run {
        run(self.synapse_with_model(fake).args(args))
    }

    /// `synapse` with the fake model as its Anthropic endpoint, to adjust and then run.
    pub fn synapse_with_model(&self, fake: &fake_llm::FakeLlm) -> Command {
        let mut cmd = self.synapse();
        cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-test");
        cmd
    }

    /// Writes the user skill `name` (`$SYNAPSE_HOME/skills/<name>/SKILL.md`) with this
    /// description and Markdown body; returns the SKILL.md path.
    pub fn write_skill(&self, name: &str, description: &str, body: &str) -> PathBuf {
        let dir = self.home().join("skills").join(name);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let file = dir.join("SKILL.md");
        std::fs::write(
            &file,
            format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}"),
        )
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
        file
    }

    /// Starts the daemon the way users do (`synapse daemon start`) and returns its pid.
    pub fn start_daemon(&self) -> u32 {
        let out = self.cli(&["daemon", "start"]);
        assert!(
            out.success(),
            "daemon start failed: {}{}",
            out.stdout,
            out.stderr
        );
        self.daemon_pid()
            .unwrap_or_else(|| panic!("daemon started but wrote no pid"))
    }

    /// The pid recorded in the daemon lock file, if a daemon holds it.
    pub fn daemon_pid(&self) -> Option<u32> {
        let pid: u32 = std::fs::read_to_string(self.paths.daemon_lock())
            .ok()?
            .trim()
            .parse()
            .ok()?;
        pid_alive(pid).then_some(pid)
    }

    /// A gRPC channel to the running daemon (does not start one).
    pub async fn channel(&self) -> tonic::transport::Channel {
        synapse_shared::rpc::connect(self.paths.socket())
            .await
            .unwrap_or_else(|e| panic!("cannot connect to the daemon: {e}"))
    }

    /// Stops the daemon (SIGTERM, then SIGKILL after a grace) if one runs.
    pub fn stop_daemon(&self) {
        if let Some(pid) = self.daemon_pid() {
            kill_and_wait(pid);
        }
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        self.stop_daemon();
        if std::thread::panicking() {
            self.print_daemon_log_tail();
        }
    }
}

impl TestEnv {
    /// After a failed test: the end of the daemon's log, so a failure seen only in CI can be
    /// read from the daemon's side too.
    fn print_daemon_log_tail(&self) {
        const LINES: usize = 60;
        let Ok(entries) = std::fs::read_dir(self.paths.logs_dir()) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(LINES)..];
            eprintln!(
                "--- the last {} lines of {} ---\n{}",
                tail.len(),
                entry.path().display(),
                tail.join("\n")
            );
        }
    }
}

/// True when `pid` names a live (non-zombie) process.
///
/// Every thread counts: after SIGKILL the leader turns zombie while other threads are still
/// exiting and still hold the process's fds (its listening socket among them).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.filter_map(Result::ok).any(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    })
}

/// Sends SIGTERM, waits up to 5 s, then SIGKILL, and waits for the process to be gone.
pub fn kill_and_wait(pid: u32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    let _ = kill(Pid::from_raw(raw), Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(5);
    while pid_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if pid_alive(pid) {
        let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
        wait_until(DEADLINE, "killed process to exit", || !pid_alive(pid));
    }
}

/// Pids of live processes whose command line contains `needle` (for orphan checks).
/// `pid (state) command line` of each of `pids`, for a failure message.
pub fn describe_processes(pids: &[u32]) -> String {
    pids.iter()
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim();
            let state = state.split(' ').take(4).collect::<Vec<_>>().join(" ");
            format!(
                "{pid} (state, ppid, pgrp, session: {state}) {}",
                cmdline.trim()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn processes_matching(needle: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
                && pid_alive(*pid)
        })
        .collect()
}
