//! `!<command>`: runs in the user's shell in the REPL's working directory with the terminal
//! handed over (stdin, stdout, stderr inherited, so interactive programs work). Nothing of it
//! reaches the model. A failure is reported as `[exit N]`.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::render::theme::Theme;

/// Runs `command` and returns the line to print afterwards, if any.
pub async fn run_local(theme: &Theme, command: &str) -> Option<String> {
    if command.is_empty() {
        return Some(theme.dim("Type a command after !, for example !git status\n"));
    }
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "/bin/sh".to_string());
    let status = tokio::process::Command::new(&shell)
        .arg("-c")
        .arg(command)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .await;
    match status {
        Ok(s) if s.success() => None,
        Ok(s) => Some(match (s.code(), s.signal()) {
            (Some(code), _) => theme.dim(&format!("[exit {code}]\n")),
            (None, Some(signal)) => theme.dim(&format!("[killed by signal {signal}]\n")),
            (None, None) => theme.dim("[exit ?]\n"),
        }),
        Err(e) => Some(theme.red(&format!("cannot run {shell}: {e}\n"))),
    }
}
