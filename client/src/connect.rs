//! Reaching the daemon. [`connect`] returns a channel to a running `synapsed`, starting one when
//! nothing answers: `synapsed` beside this executable, else on PATH, under a start-up lock so
//! racing clients start exactly one, then waits until `Status` answers.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use nix::fcntl::{Flock, FlockArg};
use synapse_shared::paths::Paths;
use synapse_shared::proto::StatusRequest;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::rpc::ListenerCheck;
use tonic::transport::Channel;

/// How long a started daemon gets to answer `Status`.
pub const DAEMON_START_TIMEOUT: Duration = Duration::from_secs(15);
/// `synapsed`'s exit status when another daemon holds the socket's lock.
const EXIT_ALREADY_RUNNING: i32 = 3;
/// Interval between readiness probes while the daemon starts.
const START_POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Why the daemon could not be reached without starting it.
#[derive(Debug)]
pub enum Unreachable {
    /// No socket, or nobody listening: starting a daemon will help.
    NotRunning,
    /// Something is there but refuses us; starting another would not help.
    Refused(anyhow::Error),
}

/// Connects to a running daemon; never starts one. Nothing is sent before the socket, its
/// folder ([`check_socket`]) and the process listening on the connection itself
/// ([`check_listener`]) are shown to be the user's own.
pub async fn connect_running(paths: &Paths) -> Result<Channel, Unreachable> {
    check_socket(paths.socket()).map_err(Unreachable::Refused)?;
    let socket = paths.socket().to_path_buf();
    // Why the listener was refused, in words (the transport error only carries its kind).
    let refused: Arc<parking_lot::Mutex<Option<anyhow::Error>>> = Arc::default();
    let verdict = refused.clone();
    let check: ListenerCheck = Arc::new(move |stream| {
        check_listener(stream, &socket).map_err(|e| {
            let io = std::io::Error::new(ErrorKind::PermissionDenied, format!("{e:#}"));
            *verdict.lock() = Some(e);
            io
        })
    });
    match synapse_shared::rpc::connect_checked(paths.socket(), check).await {
        Ok(channel) => Ok(channel),
        Err(e) => {
            if let Some(why) = refused.lock().take() {
                return Err(Unreachable::Refused(why));
            }
            Err(classify(&e, paths.socket()))
        }
    }
}

/// A failed connection: nobody listening (starting a daemon helps), or a socket we may not use.
fn classify(e: &tonic::transport::Error, socket: &Path) -> Unreachable {
    let io = std::iter::successors(Some(e as &(dyn std::error::Error + 'static)), |e| {
        e.source()
    })
    .find_map(|e| e.downcast_ref::<std::io::Error>());
    match io {
        Some(io) if io.kind() == ErrorKind::PermissionDenied => {
            Unreachable::Refused(anyhow::anyhow!(
                "cannot connect to {}: permission denied (the socket belongs to another user; \
                 set SYNAPSE_HOME or SYNAPSE_SOCKET to your own)",
                socket.display()
            ))
        }
        Some(io)
            if !matches!(
                io.kind(),
                ErrorKind::NotFound | ErrorKind::ConnectionRefused
            ) =>
        {
            Unreachable::Refused(anyhow::anyhow!(
                "cannot connect to {}: {io}",
                socket.display()
            ))
        }
        _ => Unreachable::NotRunning,
    }
}

/// ssh's StrictModes for the daemon socket: the socket and its folder must belong to this user
/// and not be writable by group or others, and the folder must not be a symlink. A missing
/// socket passes (there is nothing to talk to yet); a missing folder is created later, 0700.
pub fn check_socket(socket: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let own = nix::unistd::Uid::current().as_raw();
    let fix = "remove it, or point SYNAPSE_HOME/SYNAPSE_SOCKET at a folder of your own";
    let check = |path: &Path, what: &str| -> anyhow::Result<bool> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => bail!("cannot inspect {what} {}: {e}", path.display()),
        };
        if meta.file_type().is_symlink() {
            bail!(
                "refusing to use {what} {}: it is a symlink ({fix})",
                path.display()
            );
        }
        if meta.uid() != own {
            bail!(
                "refusing to use {what} {}: it belongs to uid {}, not to you (uid {own}); {fix}",
                path.display(),
                meta.uid()
            );
        }
        if meta.mode() & 0o022 != 0 {
            bail!(
                "refusing to use {what} {}: it is writable by group or others (mode {:o}); \
                 run `chmod go-w {}` or {fix}",
                path.display(),
                meta.mode() & 0o7777,
                path.display()
            );
        }
        Ok(true)
    };
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        check(dir, "the socket folder")?;
    }
    check(socket, "the daemon socket")?;
    Ok(())
}

/// The process listening on `stream`'s other end must run as this user.
fn check_listener(stream: &std::os::unix::net::UnixStream, socket: &Path) -> anyhow::Result<()> {
    use nix::sys::socket::{getsockopt, sockopt};
    let own = nix::unistd::Uid::current().as_raw();
    let cred = getsockopt(stream, sockopt::PeerCredentials)
        .with_context(|| format!("cannot read who listens on {}", socket.display()))?;
    if cred.uid() != own {
        bail!(
            "refusing to talk to {}: the process listening there runs as uid {}, not as you \
             (uid {own}); point SYNAPSE_HOME/SYNAPSE_SOCKET at your own daemon",
            socket.display(),
            cred.uid()
        );
    }
    Ok(())
}

/// Connects to the daemon, starting it when nothing answers.
pub async fn connect(paths: &Paths) -> anyhow::Result<Channel> {
    // A home or rules file another user could change is not used, whoever serves it.
    paths.check_private()?;
    match connect_running(paths).await {
        Ok(channel) => {
            match DaemonClient::new(channel.clone())
                .status(StatusRequest {})
                .await
            {
                Ok(_) => return Ok(channel),
                // The daemon answered and said no (another user's daemon): that is the answer.
                Err(status) if status.code() == tonic::Code::PermissionDenied => {
                    return Err(anyhow::anyhow!("{}", status.message()));
                }
                // A daemon that dies between accepting and answering (killed, or exiting)
                // counts as not running: the start path below waits for it and starts anew.
                Err(_) => {}
            }
        }
        Err(Unreachable::NotRunning) => {}
        Err(Unreachable::Refused(e)) => return Err(e),
    }
    paths
        .ensure_layout()
        .context("cannot create the Synapse home")?;
    let lock_path = paths.start_lock();
    let _start_lock = tokio::task::spawn_blocking(move || lock_exclusive(&lock_path))
        .await
        .context("start-up lock task failed")??;
    // Another client may have started it while we waited for the lock.
    if let Ok(channel) = connect_ready(paths).await {
        return Ok(channel);
    }
    let mut child = spawn_daemon(paths)?;
    let deadline = Instant::now() + DAEMON_START_TIMEOUT;
    loop {
        if let Ok(channel) = connect_ready(paths).await {
            // Reap the daemon if it exits while we live, so it never lingers as a zombie.
            std::thread::spawn(move || child.wait());
            return Ok(channel);
        }
        if let Some(status) = child
            .try_wait()
            .context("cannot watch the started synapsed")?
        {
            // The previous daemon may still be exiting and holding its lock: once it lets go,
            // start again.
            if status.code() == Some(EXIT_ALREADY_RUNNING) && Instant::now() < deadline {
                while !daemon_gone(paths) && Instant::now() < deadline {
                    tokio::time::sleep(START_POLL_INTERVAL).await;
                }
                if connect_ready(paths).await.is_err() && daemon_gone(paths) {
                    child = spawn_daemon(paths)?;
                }
                continue;
            }
            bail!(
                "synapsed exited during start-up ({status}).\n{}See the log: {}",
                log_tail(&paths.startup_log()),
                paths.startup_log().display()
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "synapsed did not answer within {}s of starting. See the logs in {}",
                DAEMON_START_TIMEOUT.as_secs(),
                paths.logs_dir().display()
            );
        }
        tokio::time::sleep(START_POLL_INTERVAL).await;
    }
}

/// True when no daemon holds the lock of this socket: the last one has fully exited (its pid
/// may linger as a zombie while its threads finish, and it holds the lock until then).
pub fn daemon_gone(paths: &Paths) -> bool {
    let Ok(file) = OpenOptions::new().read(true).open(paths.daemon_lock()) else {
        return true;
    };
    Flock::lock(file, FlockArg::LockSharedNonblock).is_ok()
}

/// A channel on which `Status` has answered.
async fn connect_ready(paths: &Paths) -> anyhow::Result<Channel> {
    let channel = connect_running(paths)
        .await
        .map_err(|_| anyhow::anyhow!("not running"))?;
    DaemonClient::new(channel.clone())
        .status(StatusRequest {})
        .await?;
    Ok(channel)
}

fn lock_exclusive(path: &Path) -> anyhow::Result<Flock<File>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow::anyhow!("cannot lock {}: {e}", path.display()))
}

/// `synapsed` beside our own executable, else the name for a PATH lookup.
pub fn daemon_executable() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("synapsed")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("synapsed"))
}

fn spawn_daemon(paths: &Paths) -> anyhow::Result<Child> {
    let exe = daemon_executable();
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(paths.startup_log())
        .with_context(|| format!("cannot open {}", paths.startup_log().display()))?;
    let mut cmd = Command::new(&exe);
    cmd.env("SYNAPSE_HOME", paths.home())
        .env("SYNAPSE_SOCKET", paths.socket())
        .current_dir(paths.home())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        // Its own process group: Ctrl-C in the terminal that started it must not reach it.
        .process_group(0);
    cmd.spawn().map_err(|e| spawn_error(&exe, e))
}

fn spawn_error(exe: &Path, e: io::Error) -> anyhow::Error {
    if e.kind() == ErrorKind::NotFound {
        anyhow::anyhow!(
            "cannot start the daemon: `{}` not found beside synapse or on PATH",
            exe.display()
        )
    } else {
        anyhow::anyhow!("cannot start {}: {e}", exe.display())
    }
}

/// The last lines of the start-up log, for error messages.
fn log_tail(path: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(path) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(5);
    let mut out = String::new();
    for line in &lines[start..] {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}
