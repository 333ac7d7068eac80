//! A named shell session: the persistent bash (started on first need, replaced when it dies),
//! its current directory, and the environment it was created with. Turns a [`RawRun`] into the
//! text the model sees, including the notes about timeouts and restarts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::jobs::JobTable;
use super::process::{BashProcess, Interrupt, RunEnd, ShellError, ShellSpec};
use synapse_command::CommandOutput;
use synapse_command::paths::PathResolver;
use synapse_sandbox::SandboxSpec;

/// Exit status reported for a command killed by its timeout (as GNU `timeout`).
pub const EXIT_TIMED_OUT: i32 = 124;
/// Exit status reported for a cancelled command (as after Ctrl-C).
pub const EXIT_CANCELLED: i32 = 130;
/// Exit status when the shell could not be started.
pub const EXIT_SHELL_FAILED: i32 = 126;

pub struct ShellSession {
    name: String,
    spec: ShellSpec,
    shell: Option<BashProcess>,
    cwd: PathBuf,
    output_cap_chars: usize,
    /// Background jobs; shared with the session's agent-channel calls.
    jobs: std::sync::Arc<JobTable>,
    /// Limits for `bash --timeout` and calls without a timeout.
    timeouts: synapse_command::timeouts::Timeouts,
    /// Who watches the running command's output (set for one call).
    progress: Option<synapse_command::progress::ProgressSink>,
    /// The Bash-tool call running now (unique in the daemon; see [`ShellSession::begin_call`]).
    call_seq: u64,
    /// What the session may still save to spill files, shared with its other shells.
    spill_budget: std::sync::Arc<super::limits::SpillBudget>,
}

/// Numbers every Bash-tool call of the daemon, so a gate can tell one call from the next.
static CALL_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl ShellSession {
    /// Starts a new Bash-tool call: a number no other call of this daemon had.
    pub fn begin_call(&mut self) -> u64 {
        self.call_seq = CALL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.call_seq
    }

    /// The call running now (0 before the first).
    pub fn call_seq(&self) -> u64 {
        self.call_seq
    }

    /// Runs on behalf of call `seq` (an agent-channel command of that call).
    pub fn set_call_seq(&mut self, seq: u64) {
        self.call_seq = seq;
    }

    /// A session whose shell starts on first use.
    pub fn new(name: impl Into<String>, spec: ShellSpec, output_cap_chars: usize) -> Self {
        let cwd = spec.cwd.clone();
        let name = name.into();
        let log_dir = synapse_command::output_policy::session_dir(
            &std::env::temp_dir().join(format!("synapse-jobs-{}", nix::unistd::getuid().as_raw())),
            &name,
        );
        Self {
            name,
            spec,
            shell: None,
            cwd,
            output_cap_chars,
            jobs: JobTable::new(log_dir),
            timeouts: synapse_command::timeouts::Timeouts::default(),
            progress: None,
            call_seq: 0,
            spill_budget: std::sync::Arc::default(),
        }
    }

    /// Uses `budget` as this session's spill budget (the session's own, shared with its
    /// one-off shells).
    pub fn with_spill_budget(mut self, budget: std::sync::Arc<super::limits::SpillBudget>) -> Self {
        self.spill_budget = budget;
        self
    }

    /// Uses `jobs` as this session's job table (the sessions' own, or the one an agent-channel
    /// call shares with its session).
    pub fn with_jobs(mut self, jobs: std::sync::Arc<JobTable>) -> Self {
        self.jobs = jobs;
        self
    }

    /// The session's background jobs.
    pub fn jobs(&self) -> &std::sync::Arc<JobTable> {
        &self.jobs
    }

    /// The timeout limits in force for this session's calls.
    pub fn timeouts(&self) -> synapse_command::timeouts::Timeouts {
        self.timeouts
    }

    pub fn set_timeouts(&mut self, timeouts: synapse_command::timeouts::Timeouts) {
        self.timeouts = timeouts;
    }

    /// Where the running call reports its progress.
    pub fn progress(&self) -> Option<synapse_command::progress::ProgressSink> {
        self.progress.clone()
    }

    /// Reports the output of the commands that follow to `progress` while they run.
    pub fn set_progress(&mut self, progress: Option<synapse_command::progress::ProgressSink>) {
        self.progress = progress;
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A pre-started shell becomes session `name`'s: its name, and the session's hold on its
    /// workspace (a spare holds none).
    pub fn hand_over(
        &mut self,
        name: String,
        workspace: Option<crate::workspace::WorkspaceBinding>,
    ) {
        self.name = name;
        self.spec.workspace = workspace;
    }

    /// Whether the shell is running now.
    pub fn is_running(&self) -> bool {
        self.shell.is_some()
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The root of the workspace the session is bound to.
    pub fn workspace_root(&self) -> Option<&Path> {
        self.spec.workspace.as_ref().map(|w| w.root.as_path())
    }

    /// The chat session whose own MCP servers this shell reaches, if it has any.
    pub fn own_session(&self) -> Option<&str> {
        self.spec
            .workspace
            .as_ref()
            .and_then(|w| w.own_words())
            .map(|(id, _)| id)
    }

    /// The spec new shells of this session start from.
    pub fn spec(&self) -> &ShellSpec {
        &self.spec
    }

    /// The session's agent-channel token, when its shells define the agent functions.
    pub fn agent_token(&self) -> Option<String> {
        self.spec.agent.as_ref().map(|a| a.token.clone())
    }

    pub fn output_cap_chars(&self) -> usize {
        self.output_cap_chars
    }

    /// The environment the session was created with.
    pub fn env(&self) -> &[(OsString, OsString)] {
        &self.spec.env
    }

    /// How path words resolve in this session right now (current folder, `HOME`).
    pub fn paths(&self) -> PathResolver<'_> {
        PathResolver {
            cwd: &self.cwd,
            home: self.env_var("HOME").map(Path::new),
        }
    }

    pub fn env_var(&self, name: &str) -> Option<&OsString> {
        self.spec
            .env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The running shell's pid, if one is running.
    pub fn shell_pid(&self) -> Option<i32> {
        self.shell.as_ref().map(BashProcess::pid)
    }

    /// Changes the OS sandbox of the session's shell. A running shell cannot leave (or enter)
    /// a sandbox, so it is closed and the next command starts a new one in the same folder;
    /// true when that happened.
    pub async fn set_sandbox(&mut self, sandbox: Option<SandboxSpec>) -> bool {
        if self.spec.sandbox == sandbox {
            return false;
        }
        self.spec.sandbox = sandbox;
        let was_running = self.shell.is_some();
        self.close().await;
        was_running
    }

    /// The sandbox the session's shells start in, if any.
    pub fn sandbox(&self) -> Option<&SandboxSpec> {
        self.spec.sandbox.as_ref()
    }

    /// True when the running shell is inside the OS sandbox (false before it started).
    pub fn is_sandboxed(&self) -> bool {
        self.shell.as_ref().is_some_and(BashProcess::is_sandboxed)
    }

    /// Pids of the shell and the processes it started.
    pub fn process_ids(&self) -> Vec<i32> {
        self.shell
            .as_ref()
            .map(BashProcess::process_ids)
            .unwrap_or_default()
    }

    /// Runs `command` once in a fresh shell outside the sandbox, in the session's current folder
    /// and with its starting environment: for a command the user approved although the sandbox
    /// would stop it. The persistent shell is untouched, so `cd`/`export` in it do not carry over.
    pub async fn run_unsandboxed(
        &mut self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> CommandOutput {
        let mut spec = self.spec.clone();
        spec.sandbox = None;
        spec.cwd = self.cwd.clone();
        let mut once = ShellSession::new(
            format!("{}-unsandboxed", self.name),
            spec,
            self.output_cap_chars,
        )
        .with_jobs(self.jobs.clone())
        .with_spill_budget(self.spill_budget.clone());
        let mut out = once.run_native(command, timeout, cancel).await;
        once.close().await;
        out.restarted = false;
        out
    }

    /// Replaces the shell with a fresh one in the session's starting directory.
    pub async fn restart(&mut self) -> Result<(), ShellError> {
        self.close().await;
        self.cwd = self.spec.cwd.clone();
        self.ensure_shell().await.map(|_| ())
    }

    /// Kills the shell and everything it started.
    pub async fn close(&mut self) {
        if let Some(mut shell) = self.shell.take() {
            shell.kill_all().await;
        }
    }

    /// Starts the shell now if it is not running, so the first command does not pay for it.
    pub async fn warm_up(&mut self) -> Result<(), ShellError> {
        self.ensure_shell().await.map(|_| ())
    }

    async fn ensure_shell(&mut self) -> Result<&mut BashProcess, ShellError> {
        if self.shell.is_none() {
            let mut spec = self.spec.clone();
            // After a crash the new shell continues where the old one was.
            spec.cwd = if self.cwd.is_dir() {
                self.cwd.clone()
            } else {
                self.spec.cwd.clone()
            };
            let shell = BashProcess::start(&spec).await?;
            self.cwd = shell.cwd().to_path_buf();
            self.shell = Some(shell);
        }
        match self.shell.as_mut() {
            Some(shell) => Ok(shell),
            None => Err(ShellError::StartExited),
        }
    }

    /// Runs `command` in the persistent shell; never fails: problems become the result text.
    pub async fn run_native(
        &mut self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> CommandOutput {
        let mut restarted = false;
        if self.shell.is_none() {
            restarted = true;
        }
        let spill_dir = self.jobs.dir().to_path_buf();
        let progress = self.progress.clone();
        let spill_budget = self.spill_budget.clone();
        let shell = match self.ensure_shell().await {
            Ok(shell) => shell,
            Err(e) => return CommandOutput::failure(format!("{e}"), EXIT_SHELL_FAILED),
        };
        shell.set_spill_dir(Some(spill_dir));
        shell.set_spill_budget(Some(spill_budget));
        shell.set_progress(progress);
        let run = match shell.run(command, timeout, cancel).await {
            Ok(run) => run,
            Err(e) => return CommandOutput::failure(format!("{e}"), 2),
        };
        if let Some(shell) = &self.shell {
            self.cwd = shell.cwd().to_path_buf();
        }
        let mut text = run.output.render(self.output_cap_chars);
        let mut notes: Vec<String> = Vec::new();
        notes.extend(self.spec.processes.limit_note());
        let mut exit_code = run.exit_code.unwrap_or(0);
        match run.interrupted {
            Some(Interrupt::TimedOut) => {
                exit_code = EXIT_TIMED_OUT;
                notes.push(format!(
                    "command timed out after {}; it and the processes it started were killed",
                    human_duration(timeout)
                ));
            }
            Some(Interrupt::Cancelled) => {
                exit_code = EXIT_CANCELLED;
                notes.push("command cancelled; it and the processes it started were killed".into());
            }
            None => {}
        }
        if let RunEnd::ShellExited(code) = run.end {
            if run.interrupted.is_none() {
                exit_code = code;
            }
            notes.push(format!("the shell exited (status {code})"));
        }
        if !run.shell_usable {
            self.shell = None;
            if !matches!(run.end, RunEnd::ShellExited(_)) {
                notes.push("the shell did not come back after its command was killed".into());
            }
            match self.ensure_shell().await {
                Ok(_) => notes.push(format!(
                    "a new shell was started in {}; variables, functions and background jobs \
                     from before are gone",
                    self.cwd.display()
                )),
                Err(e) => notes.push(format!("a new shell could not be started: {e}")),
            }
            restarted = true;
        }
        if !notes.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            for note in notes {
                text.push_str(&format!("[{note}]\n"));
            }
        }
        CommandOutput {
            text,
            exit_code,
            restarted,
            timed_out: run.interrupted == Some(Interrupt::TimedOut),
            changes: Vec::new(),
        }
    }
}

fn human_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// The real host of agent commands: the session's own shell. Its parts are the background
/// jobs (`Arc<JobTable>`), the spec its shells start from (`ShellSpec`) and the workspace
/// binding (`WorkspaceBinding`).
impl synapse_command::CommandHost for ShellSession {
    fn name(&self) -> &str {
        ShellSession::name(self)
    }

    fn cwd(&self) -> &Path {
        ShellSession::cwd(self)
    }

    fn env(&self) -> &[(OsString, OsString)] {
        ShellSession::env(self)
    }

    fn sandbox(&self) -> Option<&SandboxSpec> {
        ShellSession::sandbox(self)
    }

    fn workspace_root(&self) -> Option<&Path> {
        ShellSession::workspace_root(self)
    }

    fn timeouts(&self) -> synapse_command::timeouts::Timeouts {
        self.timeouts
    }

    fn output_cap_chars(&self) -> usize {
        self.output_cap_chars
    }

    fn run_native<'a>(
        &'a mut self,
        command: &'a str,
        timeout: Duration,
        cancel: &'a CancellationToken,
    ) -> futures::future::BoxFuture<'a, CommandOutput> {
        Box::pin(ShellSession::run_native(self, command, timeout, cancel))
    }

    fn part(&self, of: std::any::TypeId) -> Option<&dyn std::any::Any> {
        use std::any::TypeId;
        if of == TypeId::of::<std::sync::Arc<JobTable>>() {
            Some(&self.jobs)
        } else if of == TypeId::of::<ShellSpec>() {
            Some(&self.spec)
        } else if of == TypeId::of::<crate::workspace::WorkspaceBinding>() {
            self.spec
                .workspace
                .as_ref()
                .map(|w| w as &dyn std::any::Any)
        } else {
            None
        }
    }
}
