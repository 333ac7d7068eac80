//! Background jobs of one shell session: long work the model starts with `job start`, checks on
//! with `job read` / `job list`, and ends with `job kill`.
//!
//! A job is `bash -c <line>` started beside the session shell — same folder, environment,
//! sandbox and process limit — under a keeper of its own where there is one (which ends
//! whatever the job orphans, as for the shell: [`super::process`]), in its own process group,
//! with its own tag ([`super::procs`]) so everything it starts can be found and killed, even
//! processes that leave its tree. Its stdout and stderr go
//! to a log file in the session's scratch folder; `job read` returns what was appended since the
//! last read (capped like any other result). A waiter task records the exit status. Jobs die
//! with their session ([`JobTable::kill_all`]) and, as a last resort, when the table is dropped.

use parking_lot::Mutex;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::capture::escape_bytes;
use super::launch::exit_code_of;
use super::procs;
use super::spec::ShellSpec;

/// How long a killed job gets between SIGTERM and SIGKILL.
const JOB_KILL_GRACE: Duration = Duration::from_secs(2);
/// Most jobs one session may have running at once.
pub const MAX_RUNNING_JOBS: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("cannot create the job log folder {path}: {source}")]
    LogDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the job: {0}")]
    Spawn(std::io::Error),
    #[error(
        "{MAX_RUNNING_JOBS} jobs are already running in this session; wait for one to finish or \
         stop one with `job kill ID`"
    )]
    TooMany,
    #[error("no job {0} in this session; `job list` shows the jobs")]
    NoSuchJob(u32),
}

/// What `job list` shows about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    pub id: u32,
    pub command: String,
    pub log: PathBuf,
    /// `None` while it runs.
    pub exit_code: Option<i32>,
    pub elapsed: Duration,
    pub killed: bool,
}

struct Job {
    id: u32,
    command: String,
    tag: String,
    /// The job's keeper, or its bash when there is no keeper.
    pid: i32,
    kept: bool,
    log: PathBuf,
    /// Bytes of the log already returned by `job read`.
    read_offset: u64,
    started: Instant,
    /// Exit status and when it ended, set by the waiter task.
    ended: Arc<Mutex<Option<(i32, Instant)>>>,
    killed: bool,
}

impl Job {
    fn ended(&self) -> Option<(i32, Instant)> {
        *self.ended.lock()
    }

    fn info(&self) -> JobInfo {
        let ended = self.ended();
        JobInfo {
            id: self.id,
            command: self.command.clone(),
            log: self.log.clone(),
            exit_code: ended.map(|(code, _)| code),
            elapsed: ended.map_or_else(|| self.started.elapsed(), |(_, at)| at - self.started),
            killed: self.killed,
        }
    }
}

/// The background jobs of one session (shared by the session and its agent-channel calls).
pub struct JobTable {
    log_dir: PathBuf,
    jobs: Mutex<Vec<Job>>,
    next_id: Mutex<u32>,
}

/// New output of a job, as `job read` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutput {
    pub info: JobInfo,
    /// The new text, escaped, at most about the cap (head and tail kept).
    pub text: String,
}

impl JobTable {
    /// A table whose job logs go to `log_dir` (created on the first job).
    pub fn new(log_dir: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            log_dir,
            jobs: Mutex::new(Vec::new()),
            next_id: Mutex::new(1),
        })
    }

    /// The session's scratch folder: job logs and spilled output.
    pub fn dir(&self) -> &Path {
        &self.log_dir
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Vec<Job>> {
        self.jobs.lock()
    }

    /// Number of jobs still running.
    pub fn running(&self) -> usize {
        self.lock().iter().filter(|j| j.ended().is_none()).count()
    }

    /// Starts `line` in the background, in `cwd`, with `spec`'s environment and sandbox.
    pub fn start(&self, spec: &ShellSpec, cwd: &Path, line: &str) -> Result<JobInfo, JobError> {
        if self.running() >= MAX_RUNNING_JOBS {
            return Err(JobError::TooMany);
        }
        make_private_dir(&self.log_dir)?;
        let id = {
            let mut next = self.next_id.lock();
            let id = *next;
            *next += 1;
            id
        };
        let log = self.log_dir.join(format!("job-{id}.log"));
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&log)
                .map_err(JobError::Spawn)?
        };
        let stderr = file.try_clone().map_err(JobError::Spawn)?;
        let tag = format!("job{:016x}", super::sentinel::random_u64());
        let launch = super::launch::bash_launch(spec, &["--noprofile", "--norc", "-c", line]);
        let kept = launch.kept;
        let mut command = launch.command;
        let dir = if cwd.is_dir() {
            cwd
        } else {
            spec.cwd.as_path()
        };
        let mut child = command
            .current_dir(dir)
            .env_clear()
            .envs(spec.shell_env(&tag))
            .envs(launch.env)
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(stderr))
            .process_group(0)
            .spawn()
            .map_err(JobError::Spawn)?;
        let pid = child.id().map_or(0, |p| p as i32);
        let ended = Arc::new(Mutex::new(None));
        let waiter_ended = ended.clone();
        synapse_command::tasks::spawn(async move {
            let code = match child.wait().await {
                Ok(status) => exit_code_of(status),
                Err(_) => -1,
            };
            *waiter_ended.lock() = Some((code, Instant::now()));
        });
        let job = Job {
            id,
            command: line.to_owned(),
            tag,
            pid,
            kept,
            log,
            read_offset: 0,
            started: Instant::now(),
            ended,
            killed: false,
        };
        let info = job.info();
        self.lock().push(job);
        Ok(info)
    }

    /// Every job of the session, oldest first.
    pub fn list(&self) -> Vec<JobInfo> {
        self.lock().iter().map(Job::info).collect()
    }

    /// What job `id` printed since the last read, at most about `cap_chars` characters.
    pub fn read_new(&self, id: u32, cap_chars: usize) -> Result<JobOutput, JobError> {
        let mut jobs = self.lock();
        let job = jobs
            .iter_mut()
            .find(|j| j.id == id)
            .ok_or(JobError::NoSuchJob(id))?;
        // Read the status first: output written before the exit is then surely in the file.
        let info = job.info();
        let (text, new_offset) = read_since(&job.log, job.read_offset, cap_chars);
        job.read_offset = new_offset;
        Ok(JobOutput { info, text })
    }

    /// Waits until job `id` ends, at most `timeout` (or until `cancel`); its info then, still
    /// running when the wait ran out.
    pub async fn wait(
        &self,
        id: u32,
        timeout: Duration,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<JobInfo, JobError> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(5);
        loop {
            let info = self
                .lock()
                .iter()
                .find(|j| j.id == id)
                .map(Job::info)
                .ok_or(JobError::NoSuchJob(id))?;
            let now = Instant::now();
            if info.exit_code.is_some() || now >= deadline || cancel.is_cancelled() {
                return Ok(info);
            }
            tokio::select! {
                () = tokio::time::sleep(pause.min(deadline - now)) => {}
                () = cancel.cancelled() => {}
            }
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Stops job `id` and everything it started; its info afterwards.
    pub async fn kill(&self, id: u32) -> Result<JobInfo, JobError> {
        let (tag, pid, kept, running) = {
            let mut jobs = self.lock();
            let job = jobs
                .iter_mut()
                .find(|j| j.id == id)
                .ok_or(JobError::NoSuchJob(id))?;
            let running = job.ended().is_none();
            job.killed |= running;
            (job.tag.clone(), job.pid, job.kept, running)
        };
        let root = (running && pid > 0).then_some(pid);
        let keeper = (kept && running && pid > 0).then_some(pid);
        let mut all = procs::shell_processes(&tag, root);
        all.retain(|p| Some(p.pid) != keeper);
        procs::terminate(&all, keeper, JOB_KILL_GRACE).await;
        if let Some(keeper) = keeper {
            // The keeper ends what the search missed, then exits: the waiter sees the status.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(keeper),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        // The waiter records the status as soon as it reaps the job.
        let deadline = Instant::now() + JOB_KILL_GRACE;
        loop {
            let info = self
                .lock()
                .iter()
                .find(|j| j.id == id)
                .map(Job::info)
                .ok_or(JobError::NoSuchJob(id))?;
            if info.exit_code.is_some() || Instant::now() >= deadline {
                return Ok(info);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Kills every job (the session is closing).
    pub async fn kill_all(&self) {
        let ids: Vec<u32> = self.lock().iter().map(|j| j.id).collect();
        let kills = ids.into_iter().map(|id| self.kill(id));
        futures::future::join_all(kills).await;
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        let jobs = self.jobs.get_mut();
        for job in jobs.iter() {
            let running = job.ended().is_none() && job.pid > 0;
            let root = running.then_some(job.pid);
            let keeper = (running && job.kept).then_some(job.pid);
            procs::kill_now(&procs::shell_processes(&job.tag, root), keeper);
            if let Some(keeper) = keeper {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(keeper),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
        }
    }
}

/// The log from `offset` on, escaped and capped (head and tail kept); the new offset.
fn read_since(log: &Path, offset: u64, cap_chars: usize) -> (String, u64) {
    let Ok(mut file) = std::fs::File::open(log) else {
        return (String::new(), offset);
    };
    let end = file.metadata().map(|m| m.len()).unwrap_or(offset);
    if end <= offset {
        return (String::new(), offset);
    }
    let new_bytes = end - offset;
    // Four bytes per character at most: this always holds enough to fill the cap.
    let window = (cap_chars as u64).saturating_mul(2).max(1);
    let mut read_at = |from: u64, len: u64| -> Vec<u8> {
        let mut buf = Vec::new();
        if file.seek(SeekFrom::Start(from)).is_ok() {
            let _ = (&mut file).take(len).read_to_end(&mut buf);
        }
        buf
    };
    if new_bytes <= window * 2 {
        let text = escape_bytes(&read_at(offset, new_bytes));
        if text.chars().count() <= cap_chars {
            return (text, end);
        }
    }
    let head = escape_bytes(&read_at(offset, window));
    let tail = escape_bytes(&read_at(end.saturating_sub(window), window));
    let head: String = head.chars().take(cap_chars / 2).collect();
    let tail_chars = tail.chars().count();
    let tail: String = tail
        .chars()
        .skip(tail_chars.saturating_sub(cap_chars / 2))
        .collect();
    let sep = if head.ends_with('\n') { "" } else { "\n" };
    let text = format!(
        "{head}{sep}[... {} bytes of new output omitted; the whole log is {} — `read` it with \
         --offset N --limit M ...]\n{tail}",
        new_bytes.saturating_sub((head.len() + tail.len()) as u64),
        log.display()
    );
    (text, end)
}

fn make_private_dir(dir: &Path) -> Result<(), JobError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| JobError::LogDir {
            path: dir.to_path_buf(),
            source,
        })
}
