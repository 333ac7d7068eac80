//! The built-in risky list: what auto mode asks about even though it is not a write outside
//! the writable folders — privilege changes, recursive deletes outside the work, dotfile and
//! device writes, downloaded code run by a shell, force pushes, package installs, killing
//! processes the session did not start, power and disk tools. [`risky`] looks at one simple
//! command (and its pipeline, for `curl … | sh`) and returns a short reason.

mod download;
mod files;
mod system;

#[cfg(test)]
mod tests;

pub use super::context::{Context, resolve};
use super::parse::{Pipeline, SimpleCommand};

/// Programs that run commands as another user.
const PRIVILEGE: [&str; 6] = ["sudo", "su", "doas", "pkexec", "run0", "sudoedit"];

/// Why `cmd` (a command of `pipeline`) is risky, or `None`.
pub fn risky(pipeline: &Pipeline, cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    files::dotfile_write(cmd, ctx)
        .or_else(|| files::device_write(cmd, ctx))
        .or_else(|| download::piped_to_interpreter(pipeline, cmd))
        .or_else(|| download::substituted_download(cmd))
        .or_else(|| program_risk(cmd, ctx))
}

/// Whether `cmd` names one of the agent's commands by its bare name.
fn bare_agent_command(cmd: &SimpleCommand, ctx: &Context) -> bool {
    cmd.words
        .first()
        .is_some_and(|w| !w.contains('/') && ctx.agent_commands.contains(w))
}

fn program_risk(cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    let program = cmd.program()?;
    match program {
        p if PRIVILEGE.contains(&p) => Some(format!("`{p}` runs commands as another user")),
        "rm" => files::recursive_delete(cmd, ctx),
        "xargs" => files::xargs_recursive_delete(cmd),
        "chmod" | "chown" | "chgrp" => files::recursive_mode_change(program, cmd),
        "git" => system::git(cmd),
        "kill" | "pkill" | "killall" | "killall5" => system::kill(program, cmd, ctx),
        // A bare agent command name in a session shell is the agent's command (its function
        // wins over PATH); only procps' `skill` named by its path sends signals.
        "skill" if !bare_agent_command(cmd, ctx) => system::kill(program, cmd, ctx),
        "crontab" => system::crontab(cmd),
        _ => system::package_change(program, cmd)
            .or_else(|| system::power(program, cmd))
            .or_else(|| system::disk_tool(program)),
    }
}
