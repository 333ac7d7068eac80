//! The agent channel: how agent commands written inside compound lines reach the daemon.
//!
//! Every session shell gets shell functions for the agent commands ([`functions`]) that run
//! `synapsed __agent` ([`helper`]), which sends the expanded words to this channel's Unix socket
//! ([`wire`]). The socket lives in the daemon's private run folder and answers only peers of the
//! daemon's uid; a request must carry the session's token, a random secret kept in an unexported,
//! read-only shell variable of that session's shell. A token is honoured only while a Bash-tool
//! call of its session is running ([`AgentChannel::activate`]): the command then runs in-process
//! exactly as on the fast path — same registry, same permission gate and approver as the call,
//! the session's sandbox state, the helper's current folder — and is cancelled with the call.
//! A sandboxed shell can reach the socket (Landlock does not govern connecting to it), but only
//! for its own session, under its own session's gate.

pub mod functions;
pub mod helper;
pub mod wire;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::router::{ToolCall, run_agent_command};
use super::session::ShellSession;
use super::spec::ShellSpec;
use synapse_command::{CommandOutput, CommandRegistry};

/// How long a connected helper may take to send its request.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Exit status when the channel refuses a request.
const EXIT_REFUSED_CALL: i32 = 126;

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("cannot create the agent channel socket {path}: {source}")]
    Bind {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the agent channel needs a running tokio runtime")]
    NoRuntime,
}

/// What an active token may do: run agent commands as part of this call.
#[derive(Clone)]
pub struct ActiveCall {
    pub commands: Arc<CommandRegistry>,
    pub call: ToolCall,
    pub session_name: String,
    pub spec: ShellSpec,
    pub output_cap_chars: usize,
    /// The session's background jobs, so `job` inside a compound line sees them.
    pub jobs: Arc<super::jobs::JobTable>,
    pub timeouts: synapse_command::timeouts::Timeouts,
    pub timeout: Duration,
    pub cancel: CancellationToken,
    /// The call's number ([`ShellSession::begin_call`]): its agent commands are judged as part of it.
    pub call_seq: u64,
}

pub struct AgentChannel {
    socket: PathBuf,
    helper: PathBuf,
    active: Mutex<HashMap<String, ActiveCall>>,
    server: Mutex<Option<JoinHandle<()>>>,
}

/// Ends an activation: the token is no longer honoured and its running commands are cancelled.
pub struct ActiveGuard {
    channel: Arc<AgentChannel>,
    token: String,
    cancel: CancellationToken,
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.channel.lock_active().remove(&self.token);
    }
}

impl AgentChannel {
    /// Listens on `socket` (a stale file there is replaced) and answers helpers started as
    /// `helper __agent …`.
    pub fn bind(socket: PathBuf, helper: PathBuf) -> Result<Arc<Self>, ChannelError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| ChannelError::NoRuntime)?;
        let _ = std::fs::remove_file(&socket);
        let path = socket.clone();
        let bind_err = |source| ChannelError::Bind {
            path: path.clone(),
            source,
        };
        let std_listener = std::os::unix::net::UnixListener::bind(&socket).map_err(bind_err)?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
                .map_err(bind_err)?;
        }
        std_listener.set_nonblocking(true).map_err(bind_err)?;
        let channel = Arc::new(Self {
            socket,
            helper,
            active: Mutex::new(HashMap::new()),
            server: Mutex::new(None),
        });
        let listener = {
            let _enter = runtime.enter();
            UnixListener::from_std(std_listener).map_err(bind_err)?
        };
        let weak = Arc::downgrade(&channel);
        let task = runtime.spawn(serve(listener, weak));
        *channel.server.lock() = Some(task);
        Ok(channel)
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    fn lock_active(&self) -> parking_lot::MutexGuard<'_, HashMap<String, ActiveCall>> {
        self.active.lock()
    }

    /// The shell code defining the agent functions for a shell starting in `dir` and holding
    /// `token`.
    pub fn init_script(&self, commands: &CommandRegistry, dir: &Path, token: &str) -> String {
        let all = commands.function_names(dir);
        let names = functions::function_names(all.iter().map(String::as_str));
        functions::init_script(&names, &self.helper, &self.socket, token)
    }

    /// Honours `token` for `call` until the guard is dropped.
    pub fn activate(self: &Arc<Self>, token: &str, call: ActiveCall) -> ActiveGuard {
        let cancel = call.cancel.clone();
        self.lock_active().insert(token.to_owned(), call);
        ActiveGuard {
            channel: self.clone(),
            token: token.to_owned(),
            cancel,
        }
    }
}

impl Drop for AgentChannel {
    fn drop(&mut self) {
        if let Some(task) = self.server.lock().take() {
            task.abort();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A fresh random session token (128 bits from the OS).
pub fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if from_os.is_err() {
        // No /dev/urandom: fall back to the hasher's per-process random keys.
        let a = super::sentinel::random_u64().to_be_bytes();
        let b = super::sentinel::random_u64().to_be_bytes();
        bytes[..8].copy_from_slice(&a);
        bytes[8..].copy_from_slice(&b);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn serve(listener: UnixListener, channel: std::sync::Weak<AgentChannel>) {
    let own_uid = nix::unistd::getuid().as_raw();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        // Fail closed: a peer whose uid cannot be read is not served.
        if stream.peer_cred().map(|c| c.uid()).ok() != Some(own_uid) {
            continue;
        }
        let Some(channel) = channel.upgrade() else {
            return;
        };
        synapse_command::tasks::spawn(async move { answer(&channel, stream).await });
    }
}

async fn answer(channel: &AgentChannel, mut stream: UnixStream) {
    let request =
        match tokio::time::timeout(REQUEST_READ_TIMEOUT, wire::read_request(&mut stream)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return reply(&mut stream, refused(format!("bad request: {e}"))).await,
            Err(_) => return,
        };
    let token = String::from_utf8_lossy(&request.token).into_owned();
    let active = channel.lock_active().get(&token).cloned();
    let Some(active) = active else {
        let msg = "agent commands inside a shell line run only while a Bash tool call of their \
                   session is running (not from background jobs started earlier, nor from another \
                   session)";
        return reply(&mut stream, refused(msg.into())).await;
    };
    let out = tokio::select! {
        out = run(&active, request) => out,
        () = active.cancel.cancelled() => refused("cancelled with its tool call".into()),
    };
    reply(&mut stream, out).await;
}

fn refused(msg: String) -> CommandOutput {
    CommandOutput::failure(format!("synapse agent command: {msg}\n"), EXIT_REFUSED_CALL)
}

async fn reply(stream: &mut UnixStream, out: CommandOutput) {
    let _ = stream.write_all(&wire::response_head(out.exit_code)).await;
    let mut text = out.text;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn run(active: &ActiveCall, request: wire::Request) -> CommandOutput {
    let Ok(name) = String::from_utf8(request.name) else {
        return refused("the command name is not UTF-8".into());
    };
    let mut spec = active.spec.clone();
    let cwd = PathBuf::from(OsString::from_vec(request.cwd));
    if cwd.is_absolute() && cwd.is_dir() {
        spec.cwd = cwd;
    }
    // Words that are not UTF-8 (file names) arrive as `\xNN` escapes, which path words accept.
    let words: Vec<String> = request
        .args
        .iter()
        .map(|a| match std::str::from_utf8(a) {
            Ok(s) => s.to_owned(),
            Err(_) => super::capture::escape_bytes(a),
        })
        .collect();
    let stdin = request
        .stdin
        .map(|s| String::from_utf8_lossy(&s).into_owned());
    let mut text_words = vec![name.clone()];
    text_words.extend(words.iter().cloned());
    let command = shlex::try_join(text_words.iter().map(String::as_str))
        .unwrap_or_else(|_| text_words.join(" "));
    let mut session = ShellSession::new(active.session_name.clone(), spec, active.output_cap_chars)
        .with_jobs(active.jobs.clone());
    session.set_timeouts(active.timeouts);
    session.set_call_seq(active.call_seq);
    let out = run_agent_command(
        &active.commands,
        &mut session,
        &active.call,
        &name,
        words,
        stdin,
        &command,
        active.timeout,
        &active.cancel,
    )
    .await;
    session.close().await;
    out
}

/// `sessions` with the agent channel on `socket`, the helper being this executable; without it
/// (and a warning in the log) when the channel cannot be set up.
pub fn sessions_with_channel(
    sessions: super::ShellSessions,
    socket: PathBuf,
) -> super::ShellSessions {
    let helper = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            tracing::warn!("agent commands only as simple commands: no executable path: {e}");
            return sessions;
        }
    };
    // `with_agent_channel` consumes the sessions; bind first so a failure keeps them.
    match AgentChannel::bind(socket, helper) {
        Ok(channel) => sessions.with_channel(channel),
        Err(e) => {
            tracing::warn!("agent commands only as simple commands: {e}");
            sessions
        }
    }
}
