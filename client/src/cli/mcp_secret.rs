//! The OAuth client secret of `synapse mcp add --client-secret`, as `claude mcp add` takes it:
//! from `MCP_CLIENT_SECRET` when set, else typed at a prompt that does not echo (or read as one
//! line from a piped stdin). It goes to the daemon, which keeps it beside the server's tokens and
//! never writes it into a config file.

use std::io::{BufRead, IsTerminal, Write};

/// The environment variable `--client-secret` reads first.
pub const CLIENT_SECRET_VAR: &str = "MCP_CLIENT_SECRET";

/// The secret for server `name`, or why it could not be read.
pub fn read(name: &str) -> Result<String, String> {
    if let Some(secret) = std::env::var(CLIENT_SECRET_VAR)
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Ok(secret);
    }
    let stdin = std::io::stdin();
    let line = if stdin.is_terminal() {
        eprint!("OAuth client secret for {name}: ");
        let _ = std::io::stderr().flush();
        let line = without_echo(|| read_line(&stdin));
        eprintln!();
        line
    } else {
        read_line(&stdin)
    }?;
    let secret = line.trim_end_matches(['\r', '\n']).to_string();
    if secret.is_empty() {
        return Err(format!(
            "no client secret given: type it at the prompt or set {CLIENT_SECRET_VAR}"
        ));
    }
    Ok(secret)
}

fn read_line(stdin: &std::io::Stdin) -> Result<String, String> {
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the client secret: {e}"))?;
    Ok(line)
}

/// Runs `read` with the terminal's echo off, restoring it afterwards.
fn without_echo<T>(read: impl FnOnce() -> T) -> T {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let Ok(saved) = tcgetattr(&stdin) else {
        return read();
    };
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &quiet);
    let out = read();
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    out
}
