//! Starting a session's bash and reading what it prints: the command line that starts it (under
//! a keeper, in the sandbox when asked for), and the reader task that splits its stdout into command
//! output (into the [`OutputCapture`]) and completion sentinels.

use parking_lot::Mutex;
use std::sync::Arc;

use tokio::io::AsyncReadExt;
use tokio::process::ChildStdout;
use tokio::sync::mpsc;

use super::capture::OutputCapture;
use super::sentinel::{Completion, SentinelParser, StreamEvent};
use super::spec::ShellSpec;

const READ_CHUNK_BYTES: usize = 64 * 1024;

/// How long a kept shell or job and what it started get between SIGTERM and SIGKILL when their
/// keeper ends them (the daemon has usually given its own grace before).
pub(super) const KEEPER_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The command that starts a session's bash (or a job's `bash -c`), and how it runs.
pub(super) struct Launch {
    pub command: tokio::process::Command,
    /// Variables to add after the caller sets the environment (the keeper's program).
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Inside the OS sandbox.
    pub sandboxed: bool,
    /// Under a keeper ([`synapse_sandbox::kept`]): the child is the keeper, which leads its own
    /// session, and bash is the keeper's child.
    pub kept: bool,
}

/// `bash --noprofile --norc` for a session shell.
pub(super) fn bash_command(spec: &ShellSpec) -> Launch {
    bash_launch(spec, &["--noprofile", "--norc"])
}

/// `bash ARGS…` under a keeper that enforces the session's process limit and ends everything
/// bash leaves behind, in the sandbox when the spec asks for one and this machine can enforce
/// it; without a keeper (no `synapsed` found, not Linux) through the plain sandbox launcher, or
/// as plain bash.
pub(super) fn bash_launch(spec: &ShellSpec, args: &[&str]) -> Launch {
    let bash = bash_path();
    let keeper = spec.processes.keeper(KEEPER_GRACE);
    let os_args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    // `$0` is `bash`, as in a terminal.
    let arg0 = Some(std::ffi::OsStr::new("bash"));
    if let Some(kept) = synapse_sandbox::kept(
        spec.sandbox.as_ref(),
        &keeper,
        bash.as_os_str(),
        arg0,
        &os_args,
    ) {
        if spec.sandbox.is_some() && !kept.sandboxed {
            tracing::debug!("no sandbox here: the session shell runs unsandboxed");
        }
        let mut command = tokio::process::Command::new(kept.launcher);
        command.args(kept.args);
        return Launch {
            command,
            env: kept.env,
            sandboxed: kept.sandboxed,
            kept: true,
        };
    }
    let bash = bash.to_string_lossy();
    let wrapped = spec
        .sandbox
        .as_ref()
        .and_then(|sandbox| synapse_sandbox::wrap(sandbox, &bash, args));
    let sandboxed = wrapped.is_some();
    let (program, args) = match wrapped {
        Some((launcher, args)) => (launcher.into_os_string(), args),
        None => {
            if spec.sandbox.is_some() {
                tracing::debug!("no sandbox launcher here: the session shell runs unsandboxed");
            }
            (
                bash_path().as_os_str().to_owned(),
                args.iter().map(Into::into).collect(),
            )
        }
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    if !sandboxed {
        // `$0` is `bash`, as in a terminal (the launcher does the same for a sandboxed one).
        command.arg0("bash");
    }
    Launch {
        command,
        env: Vec::new(),
        sandboxed,
        kept: false,
    }
}

pub use synapse_command::bash_path;

pub(super) fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

pub(super) async fn read_output(
    mut stdout: ChildStdout,
    marker: String,
    capture: Arc<Mutex<OutputCapture>>,
    done_tx: mpsc::UnboundedSender<Completion>,
) {
    let mut parser = SentinelParser::new(&marker);
    // Bash's errors name the sourced line's fd; they read as `bash: line N:` instead.
    let mut names = super::error_names::ErrorNames::default();
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let push = |bytes: &[u8]| capture.lock().push(bytes);
    loop {
        let n = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        parser.feed(&buf[..n], |event| match event {
            StreamEvent::Output(bytes) => names.feed(bytes, &mut |b: &[u8]| push(b)),
            StreamEvent::Done(completion) => {
                names.flush(&mut |b: &[u8]| push(b));
                let _ = done_tx.send(completion);
            }
        });
    }
    names.flush(&mut |b: &[u8]| push(b));
    let rest = parser.finish();
    push(&rest);
}
