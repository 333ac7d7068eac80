//! One persistent `bash` process and the running of one command in it.
//!
//! The shell is started without rc files, in its own process group, with stdin, stdout and
//! stderr on pipes owned by the daemon. A reader task splits stdout into command output (into a
//! bounded [`OutputCapture`]) and completion sentinels ([`super::sentinel`]). A command is sent
//! as `{ eval '<command>'; } </dev/null >&9 2>&9` followed by the sentinel, so `cd` and `export`
//! persist, commands never read the protocol from stdin, and a command that closes its stdout
//! (`exec 1>&-`) cannot silence the next one. With `set -m` each pipeline gets its own process
//! group, which is what a timeout or cancel kills; the shell itself stays.
//!
//! Bash runs under a keeper ([`synapse_sandbox::kept`]) where there is one: the daemon's child
//! is the keeper (leader of its own session and process group, child subreaper, in the
//! session's cgroup), bash its child in a process group of its own, confined to the sandbox the
//! spec asks for. Everything a command orphans — `setsid` daemons, double forks, processes that
//! dropped the shell's tag — is re-parented to the keeper, so it is still found by parent links
//! from the keeper, and the keeper kills it when bash ends or when it is told to stop (or the
//! daemon dies). The daemon never SIGKILLs a keeper before it has had time to do that: line
//! stops and timeouts spare the keeper's group, and ending a shell is a SIGTERM to the keeper
//! and a wait for its exit. Without a keeper, the sandbox launcher `exec`s into bash (same pid,
//! group, environment and pipes), or bash is started directly in its own process group.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::capture::OutputCapture;
use super::launch::{bash_command, exit_code_of, read_output};
use super::procs;
use super::sentinel::{self, Completion};
pub use super::spec::ShellSpec;
use synapse_shared::shell_env::COMMAND_TAG_VAR;

/// How long a new shell may take to answer its first sentinel.
const SHELL_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of recent output the live tail is cut from.
const PROGRESS_TAIL_BYTES: usize = 4096;
/// Between SIGTERM and SIGKILL when killing a command's processes.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the sentinel once a command's processes are dead, before deciding the
/// shell itself is stuck (a loop of builtins) and must be replaced.
const SENTINEL_AFTER_KILL: Duration = Duration::from_secs(1);
/// How long to wait for the last output of a shell that exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);
/// How long a keeper told to stop may take to end everything before it is killed itself.
const KEEPER_EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Stopping a line: on SIGUSR1 the shell arms a DEBUG trap that, with `extdebug`, makes the
/// sourced line `return` before its next simple command (also out of functions and loops it
/// is in), and disarms itself at the first command back at top level (the sentinel).
const STOP_LINE_FUNCTION: &str = "__synapse_stop_line() { if [[ ${#BASH_SOURCE[@]} -gt 1 ]]; \
     then return 2; fi; trap - DEBUG; shopt -u extdebug; return 0; }";
const STOP_LINE_TRAP: &str = "trap 'shopt -s extdebug; trap __synapse_stop_line DEBUG' USR1";

#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("cannot start bash in {cwd}: {source}")]
    Spawn {
        cwd: PathBuf,
        source: std::io::Error,
    },
    #[error("bash did not start within {0:?}")]
    StartTimeout(Duration),
    #[error("bash exited while starting")]
    StartExited,
    #[error("the command contains a NUL byte, which a shell command cannot carry")]
    NulByte,
}

/// How a command run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The sentinel arrived: the command finished (possibly after being killed).
    Finished,
    /// The shell process exited (`exit`, `kill $$`, `set -e`…) with this code.
    ShellExited(i32),
}

/// Why a command was interrupted, if it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    TimedOut,
    Cancelled,
}

/// The raw result of one command in the shell.
#[derive(Debug)]
pub struct RawRun {
    pub output: OutputCapture,
    pub end: RunEnd,
    pub interrupted: Option<Interrupt>,
    /// Exit code from the sentinel, when it arrived.
    pub exit_code: Option<i32>,
    /// False when the shell is gone or stuck and must be replaced before the next command.
    pub shell_usable: bool,
}

/// A running bash and the reader task attached to its output.
pub struct BashProcess {
    /// The keeper, or bash itself when there is no keeper.
    child: Child,
    stdin: ChildStdin,
    /// Bash's pid (what `$$` says).
    pid: i32,
    /// The keeper's pid, when bash runs under one.
    keeper: Option<i32>,
    tag: String,
    marker: String,
    capture: Arc<Mutex<OutputCapture>>,
    done_rx: mpsc::UnboundedReceiver<Completion>,
    reader: JoinHandle<Option<()>>,
    cwd: PathBuf,
    /// Commands run so far; numbers each command's tag.
    commands_run: u64,
    /// The shell has been reaped; its pid must not be signalled any more.
    reaped: bool,
    /// The shell runs inside the OS sandbox its spec asked for.
    sandboxed: bool,
    /// Where output too long to keep whole is saved ([`OutputCapture::set_spill_dir`]).
    spill_dir: Option<PathBuf>,
    /// What the session may still save there, over all its commands.
    spill_budget: Option<Arc<super::limits::SpillBudget>>,
    /// Receives the live tail of each command ([`synapse_command::progress`]).
    progress: Option<synapse_command::progress::ProgressSink>,
}

impl BashProcess {
    /// Starts a shell and waits until it answers.
    pub async fn start(spec: &ShellSpec) -> Result<Self, ShellError> {
        let tag = format!("{:016x}", sentinel::random_u64());
        let marker = sentinel::random_marker();
        let launch = bash_command(spec);
        let (mut command, sandboxed, kept) = (launch.command, launch.sandboxed, launch.kept);
        // A sandboxed shell (and every kept one) leads a session of its own (the launcher's
        // `setsid`): the daemon tells which shell a sandboxed client runs under by that session.
        // Any other shell gets a process group of its own here.
        if !sandboxed && !kept {
            command.process_group(0);
        }
        let mut child = command
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(spec.shell_env(&tag))
            .envs(launch.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // A keeper must get its SIGTERM and the time to end everything, not a SIGKILL.
            .kill_on_drop(!kept)
            .spawn()
            .map_err(|source| ShellError::Spawn {
                cwd: spec.cwd.clone(),
                source,
            })?;
        let child_pid = child
            .id()
            .map(|p| p as i32)
            .ok_or(ShellError::StartExited)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ShellError::StartExited);
        };
        let capture = Arc::new(Mutex::new(OutputCapture::new()));
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let reader = synapse_command::tasks::spawn(read_output(
            stdout,
            marker.clone(),
            capture.clone(),
            done_tx,
        ));
        let mut shell = Self {
            child,
            stdin,
            pid: child_pid,
            keeper: kept.then_some(child_pid),
            tag,
            marker,
            capture,
            done_rx,
            reader,
            cwd: spec.cwd.clone(),
            commands_run: 0,
            reaped: false,
            sandboxed,
            spill_dir: None,
            spill_budget: None,
            progress: None,
        };
        // fd 9 keeps the daemon's pipe for sentinels and for each line's stdout/stderr; job control
        // gives every pipeline its own process group. The shell's own stderr is discarded: what it
        // prints between lines is only its job notices (`[1]+ Terminated …` for a job a stop
        // killed), which must not land in the next command's output.
        // Bash's own pid comes last before the sentinel: under a keeper it is not the child's.
        let agent = spec.agent.as_ref().map_or("", |a| a.init_script.as_str());
        let init = format!(
            "exec 9>&1 2>/dev/null\nset -m\n{STOP_LINE_FUNCTION}\n{agent}\necho \"$$\"\n{}",
            sentinel::sentinel_command(&shell.marker)
        );
        if shell.stdin.write_all(init.as_bytes()).await.is_err() {
            return Err(ShellError::StartExited);
        }
        tokio::select! {
            done = shell.done_rx.recv() => match done {
                Some(c) => shell.cwd = c.cwd,
                None => return Err(ShellError::StartExited),
            },
            _ = tokio::time::sleep(SHELL_START_TIMEOUT) => {
                return Err(ShellError::StartTimeout(SHELL_START_TIMEOUT));
            }
        }
        let said = shell.take_output().render(usize::MAX);
        match said
            .lines()
            .rev()
            .find_map(|l| l.trim().parse::<i32>().ok())
        {
            Some(pid) if pid > 0 => shell.pid = pid,
            _ => return Err(ShellError::StartExited),
        }
        Ok(shell)
    }

    /// True when the shell (and so everything it starts) is inside the OS sandbox.
    pub fn is_sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// The pids of the shell and every process it started that is still alive (those it
    /// orphaned too, which its keeper adopted; not the keeper itself).
    pub fn process_ids(&self) -> Vec<i32> {
        self.processes().iter().map(|p| p.pid).collect()
    }

    /// The shell's processes: tagged, or descending from the keeper (else from bash), without
    /// the keeper.
    fn processes(&self) -> Vec<procs::ShellProcess> {
        let root = (!self.reaped).then_some(self.keeper.unwrap_or(self.pid));
        let mut all = procs::shell_processes(&self.tag, root);
        all.retain(|p| Some(p.pid) != self.keeper);
        all
    }

    /// Saves each command's output, when too long to keep whole, to a file in `dir`.
    pub fn set_spill_dir(&mut self, dir: Option<PathBuf>) {
        self.spill_dir = dir;
    }

    /// Counts what is spilled against the session's `budget`.
    pub fn set_spill_budget(&mut self, budget: Option<Arc<super::limits::SpillBudget>>) {
        self.spill_budget = budget;
    }

    /// Reports each command's latest output lines to `progress` while it runs.
    pub fn set_progress(&mut self, progress: Option<synapse_command::progress::ProgressSink>) {
        self.progress = progress;
    }

    /// Sends the tail of the output so far when it grew since `last_total`.
    fn report_progress(&self, last_total: &mut u64) {
        let Some(sink) = &self.progress else {
            return;
        };
        let (total, recent) = {
            let capture = self.capture.lock();
            if capture.total_bytes() == *last_total {
                return;
            }
            (
                capture.total_bytes(),
                capture.recent_text(PROGRESS_TAIL_BYTES),
            )
        };
        *last_total = total;
        sink.report(synapse_command::progress::tail_lines(&recent), total);
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The shell's working directory after the last command.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn take_output(&self) -> OutputCapture {
        std::mem::take(&mut *self.capture.lock())
    }

    /// Runs one command line. Output printed by background jobs since the last command is
    /// included at the start, as a terminal would show it.
    pub async fn run(
        &mut self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<RawRun, ShellError> {
        if command.contains('\0') {
            return Err(ShellError::NulByte);
        }
        // A completion left over from an interrupted earlier run must not end this one.
        while self.done_rx.try_recv().is_ok() {}
        self.commands_run += 1;
        {
            let mut capture = self.capture.lock();
            capture.set_spill_dir(self.spill_dir.clone());
            capture.set_spill_budget(self.spill_budget.clone());
        }
        let command_tag = format!("{}.{}", self.tag, self.commands_run);
        // The tag is in the environment of everything this command starts, and only during it.
        // The line is sourced (not a function: `declare` stays global) so that a stop can
        // `return` out of it; the USR1 trap is set again in case the last line replaced it.
        // `jobs` first takes the notices of jobs that ended (`[1]+ Terminated …`), which would
        // otherwise be printed into this command's output.
        let script = format!(
            "{STOP_LINE_TRAP}\njobs >/dev/null 2>&1\n__synapse_line='{}'\n{{ {COMMAND_TAG_VAR}={command_tag} . /dev/fd/7 \
             7<<<'eval \"$__synapse_line\"'\n}} </dev/null >&9 2>&9\n{}",
            command.replace('\'', r"'\''"),
            sentinel::sentinel_command(&self.marker)
        );
        if self.stdin.write_all(script.as_bytes()).await.is_err() {
            return Ok(self.after_exit(None).await);
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(synapse_command::progress::PROGRESS_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let watched = self.progress.is_some();
        let mut reported = 0u64;
        let interrupt = loop {
            let progress_due = tokio::select! {
                done = self.done_rx.recv() => return Ok(match done {
                    Some(c) => self.finished(c, None),
                    None => self.after_exit(None).await,
                }),
                status = self.child.wait() => {
                    let code = status.ok().map(exit_code_of);
                    return Ok(self.after_exit(code).await);
                }
                _ = &mut deadline => break Interrupt::TimedOut,
                _ = cancel.cancelled() => break Interrupt::Cancelled,
                _ = tick.tick(), if watched => true,
            };
            if progress_due {
                self.report_progress(&mut reported);
            }
        };
        Ok(self.interrupt(&command_tag, interrupt).await)
    }

    fn finished(&mut self, c: Completion, interrupted: Option<Interrupt>) -> RawRun {
        self.cwd = c.cwd;
        RawRun {
            output: self.take_output(),
            end: RunEnd::Finished,
            interrupted,
            exit_code: Some(c.exit_code),
            shell_usable: true,
        }
    }

    /// Kills the processes the command started and stops the rest of its line; replaces the
    /// shell if it does not come back.
    async fn interrupt(&mut self, command_tag: &str, why: Interrupt) -> RawRun {
        // First tell the shell to abandon the line, so nothing after the killed part starts.
        if !self.reaped {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGUSR1,
            );
        }
        let command_procs = procs::command_processes(command_tag);
        procs::terminate(&command_procs, Some(self.pid), KILL_GRACE).await;
        tokio::select! {
            done = self.done_rx.recv() => if let Some(c) = done {
                return self.finished(c, Some(why));
            },
            status = self.child.wait() => {
                let code = status.ok().map(exit_code_of);
                let mut run = self.after_exit(code).await;
                run.interrupted = Some(why);
                return run;
            }
            _ = tokio::time::sleep(SENTINEL_AFTER_KILL) => {}
        }
        // The shell is busy in its own code (e.g. a loop of builtins): replace it.
        self.kill_all().await;
        RawRun {
            output: self.take_output(),
            end: RunEnd::Finished,
            interrupted: Some(why),
            exit_code: None,
            shell_usable: false,
        }
    }

    /// The shell exited: kill what it left behind and collect its last output.
    async fn after_exit(&mut self, code: Option<i32>) -> RawRun {
        let code = match code {
            Some(c) => c,
            None => self.child.wait().await.map(exit_code_of).unwrap_or(-1),
        };
        self.reaped = true;
        procs::terminate(&procs::shell_processes(&self.tag, None), None, KILL_GRACE).await;
        let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut self.reader).await;
        RawRun {
            output: self.take_output(),
            end: RunEnd::ShellExited(code),
            interrupted: None,
            exit_code: None,
            shell_usable: false,
        }
    }

    /// Kills the shell and everything it started (SIGTERM, grace, SIGKILL); then its keeper,
    /// told to stop, ends whatever is left (what started since, what hid from the search) and
    /// exits.
    pub async fn kill_all(&mut self) {
        let all = self.processes();
        procs::terminate(&all, self.keeper, KILL_GRACE).await;
        match self.keeper.filter(|_| !self.reaped) {
            Some(keeper) => {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(keeper),
                    nix::sys::signal::Signal::SIGTERM,
                );
                if tokio::time::timeout(KEEPER_EXIT_TIMEOUT, self.child.wait())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        keeper,
                        "a shell's keeper did not finish within {KEEPER_EXIT_TIMEOUT:?}; killing it"
                    );
                    let _ = self.child.start_kill();
                    let _ = self.child.wait().await;
                }
            }
            None => {
                let _ = self.child.start_kill();
                let _ = self.child.wait().await;
            }
        }
        self.reaped = true;
    }
}

impl Drop for BashProcess {
    fn drop(&mut self) {
        // Last resort when a session is dropped without `kill_all` (daemon exiting). A keeper
        // is told to stop rather than killed: it ends what this search misses.
        if !self.reaped {
            procs::kill_now(&self.processes(), self.keeper);
            if let Some(keeper) = self.keeper {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(keeper),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
        }
        self.reader.abort();
    }
}
