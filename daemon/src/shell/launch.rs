//! Starting a session's bash and reading what it prints: the command line that starts it (through
//! the sandbox launcher when asked for), and the reader task that splits its stdout into command
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

/// `bash --noprofile --norc`, through the sandbox launcher when the spec asks for a sandbox and
/// this machine can enforce one: the command that starts the session's bash, and whether it runs inside the sandbox.
pub(super) fn bash_command(spec: &ShellSpec) -> (tokio::process::Command, bool) {
    const BASH_ARGS: [&str; 2] = ["--noprofile", "--norc"];
    let wrapped = spec
        .sandbox
        .as_ref()
        .and_then(|sandbox| synapse_sandbox::wrap(sandbox, "bash", &BASH_ARGS));
    let sandboxed = wrapped.is_some();
    let (program, args) = match wrapped {
        Some((launcher, args)) => (launcher.into_os_string(), args),
        None => {
            if spec.sandbox.is_some() {
                tracing::debug!("no sandbox launcher here: the session shell runs unsandboxed");
            }
            ("bash".into(), BASH_ARGS.iter().map(Into::into).collect())
        }
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    (command, sandboxed)
}

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
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let with_capture = |f: &mut dyn FnMut(&mut OutputCapture)| f(&mut capture.lock());
    loop {
        let n = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        parser.feed(&buf[..n], |event| match event {
            StreamEvent::Output(bytes) => with_capture(&mut |c| c.push(bytes)),
            StreamEvent::Done(completion) => {
                let _ = done_tx.send(completion);
            }
        });
    }
    let rest = parser.finish();
    with_capture(&mut |c| c.push(&rest));
}
