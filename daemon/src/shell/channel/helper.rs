//! `synapsed __agent <name> [args…]`: what an agent function in a session shell runs. It sends
//! the words bash expanded, its current folder and (for `write <path>` with input) its stdin to
//! the daemon's agent channel, then prints the answer on stdout (stderr on failure) and exits
//! with the command's exit code. Runs without a runtime or logging: it is on the path of every
//! agent command inside a compound line.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use super::wire::{self, Request};

/// The helper's first argument.
pub const SUBCOMMAND: &str = "__agent";
/// The session's secret, set by the agent function for the helper only.
pub const TOKEN_VAR: &str = "__SYNAPSE_AGENT_TOKEN";
/// The channel's socket path.
pub const SOCKET_VAR: &str = "__SYNAPSE_AGENT_SOCKET";

/// Exit status when the daemon could not be asked.
const EXIT_NO_CHANNEL: u8 = 126;

/// Commands that take their content from stdin when it is not given as a word.
fn reads_stdin(name: &[u8], args: &[Vec<u8>]) -> bool {
    name == b"write" && args.len() == 1
}

/// Runs the helper with the arguments after [`SUBCOMMAND`].
pub fn helper_main(mut args: impl Iterator<Item = OsString>) -> ExitCode {
    let fail = |msg: String| {
        let _ = writeln!(std::io::stderr(), "synapse agent command: {msg}");
        ExitCode::from(EXIT_NO_CHANNEL)
    };
    let Some(name) = args.next() else {
        return fail("missing the command name".into());
    };
    let (Some(token), Some(socket)) = (std::env::var_os(TOKEN_VAR), std::env::var_os(SOCKET_VAR))
    else {
        return fail(format!(
            "{TOKEN_VAR} and {SOCKET_VAR} are not set: agent commands work only in a Synapse \
             session shell"
        ));
    };
    let name = name.into_vec();
    let args: Vec<Vec<u8>> = args.map(OsString::into_vec).collect();
    let stdin = if reads_stdin(&name, &args) && !std::io::stdin().is_terminal() {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin()
            .take(wire::MAX_STDIN_BYTES as u64)
            .read_to_end(&mut buf)
        {
            return fail(format!("cannot read the input: {e}"));
        }
        (!buf.is_empty()).then_some(buf)
    } else {
        None
    };
    let cwd = std::env::current_dir()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default();
    let request = Request {
        token: token.into_vec(),
        cwd,
        name,
        args,
        stdin,
    };
    let mut stream = match UnixStream::connect(&socket) {
        Ok(s) => s,
        Err(e) => {
            return fail(format!(
                "cannot reach the daemon at {}: {e}",
                std::path::Path::new(&socket).display()
            ));
        }
    };
    if let Err(e) = stream.write_all(&request.encode()) {
        return fail(format!("cannot send the command: {e}"));
    }
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    match wire::copy_response(&mut stream, &mut out, &mut err) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        // A closed stdout (`read f | head -1`) is not the command's failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(141),
        Err(e) => fail(format!("no answer from the daemon: {e}")),
    }
}
