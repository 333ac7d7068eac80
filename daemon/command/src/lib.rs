//! synapse-command: the extension contract of the Synapse daemon. Everything a command, an
//! extension family or a subsystem that adds commands needs, and nothing of the shell, the
//! agent, MCP or skills themselves.
//!
//! # Adding an agent command
//! An agent command is a word the model writes in its one Bash tool (`read`, `todo`,
//! `task:explore`), run in-process by the router when written as a simple command, and as a
//! shell function (through the agent channel) inside pipes, lists and `$(…)`:
//! 1. Write a `static` [`CommandSpec`]: its name, usage line, one-line summary and `--help` text.
//!    That one value is the command's `-h`, `--help` and system-prompt section.
//! 2. Implement [`AgentCommand`]: `spec`, `run` (the words after the name; answer wrong usage
//!    with [`CommandSpec::usage_error`]), and the permission facts — [`AgentCommand::reads_only`]
//!    or [`AgentCommand::effect`] (what it writes, from [`gate::writes_to`]), and
//!    [`AgentCommand::launches`] for a command whose words name a command it starts.
//! 3. In `run`, use the [`CommandContext`]: the host's folder and environment
//!    ([`CommandContext::resolve`] for path words), heredoc input, the time budget and
//!    cancellation, the call's gate and approver, [`CommandContext::run_native`] for a shell
//!    line. The context sees the session only through [`CommandHost`]; unit tests run a command
//!    on a fake host, without bash.
//! 4. Register it on the daemon's [`CommandRegistry`] (`state.rs` in the daemon). The registry is
//!    the one list of command names: the permission engine, the shell functions, `tools search`
//!    and the prompt all read it.
//!
//! A family of commands whose names have a shape (`mcp:<server>:<tool>`) implements
//! [`ExtensionShortcut`] and gets a [`CallContext`] with each call (cancellation, workspace,
//! progress, who answers the server's questions, the session's scratch folder); a family of
//! agent commands known by name only when they run (`task:<agent>`) implements
//! [`CommandFamily`]. Extension executables live in `bin/` folders written through
//! [`wrappers::WrapperFolder`].
//!
//! # Modules
//! [`command`] (what a command is), [`context`] (what it sees), [`registry`] (where names are
//! looked up), [`file_change`] (the diff a file change
//! shows the user), [`gate`] (what the permission gate is
//! asked and answers), [`paths`] (where a path word lands), [`args`] (the option parser
//! commands share), [`timeouts`], [`output_policy`] (the cap on what the model reads, spill
//! files), [`progress`] and [`asker`] (a call's live output and its questions to the user),
//! [`editor_files`] (the editor as the storage of `read`/`write`/`edit`), [`tasks`] (the owner
//! of every background task), [`wrappers`] (the `bin/` writer),
//! [`workspaces`] (the projects that are up, as an extension hears of them),
//! [`daemon_process`] (the owner mark on every child process, giving memory back) and
//! [`bash_path`] (the one bash every shell and wrapper runs).

#![deny(missing_docs)]

pub mod args;
pub mod asker;
pub mod command;
pub mod context;
pub mod daemon_process;
pub mod editor_files;
pub mod file_change;
pub mod gate;
pub mod output_policy;
pub mod paths;
pub mod progress;
pub mod registry;
pub mod tasks;
pub mod timeouts;
pub mod workspaces;
pub mod wrappers;

pub use command::{
    AgentCommand, CallContext, CommandFamily, CommandOutput, CommandSpec, EXIT_USAGE,
    ExtensionShortcut, PromptForm,
};
pub use context::{Approver, ApproverHandle, CommandContext, CommandHost};
pub use registry::CommandRegistry;

/// The bash every session shell runs, found once by absolute path: never looked up through a
/// session's `PATH`, where a folder of the client's (a relative entry, a project's tool folder)
/// could put a `bash` of its own first — and where every miss costs an `execve`.
pub fn bash_path() -> &'static std::path::Path {
    static BASH: std::sync::LazyLock<std::path::PathBuf> = std::sync::LazyLock::new(find_bash);
    &BASH
}

fn find_bash() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let well_known = [
        "/bin/bash",
        "/usr/bin/bash",
        "/usr/local/bin/bash",
        "/opt/homebrew/bin/bash",
    ]
    .into_iter()
    .map(std::path::PathBuf::from);
    // The daemon's own PATH (absolute folders only) after the usual places.
    let daemon_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.is_absolute())
        .map(|d| d.join("bash"));
    well_known
        .chain(daemon_path)
        .find(|p| runnable(p))
        .unwrap_or_else(|| {
            tracing::error!("no bash found in /bin, /usr/bin or the daemon's PATH");
            std::path::PathBuf::from("/bin/bash")
        })
}
