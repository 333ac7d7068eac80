//! A fixed [`Context`] for the engine's tests: working folder `/home/u/proj`, home `/home/u`,
//! Synapse home `/home/u/.synapse`, temp folder `/tmp`, extra writable `/data/x`, and session
//! processes 100 and 101, and the agent commands a session shell of the daemon defines
//! ([`AGENT_COMMANDS`], standing in for the daemon's registry).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use super::agent_commands::AgentCommands;
use super::context::Context;

static EXTRA: LazyLock<Vec<PathBuf>> = LazyLock::new(|| vec![PathBuf::from("/data/x")]);

/// The agent commands of the daemon's registry less its launchers (`bash`, `job`), as the
/// daemon hands them in.
pub(crate) static AGENT_COMMANDS: LazyLock<AgentCommands> = LazyLock::new(|| {
    AgentCommands::new([
        "read",
        "write",
        "edit",
        "glob",
        "search",
        "skill",
        "skill:load",
        "tools",
        "todo",
        "web_fetch",
        "web_search",
        "task:general",
        "task:explore",
        "task:skill:search",
        "task:skill:enhance",
    ])
});

fn session_pid(pid: i32) -> bool {
    pid == 100 || pid == 101
}

pub(crate) fn ctx(sandboxed: bool) -> Context<'static> {
    Context {
        cwd: Path::new("/home/u/proj"),
        home: Path::new("/home/u"),
        synapse_home: Path::new("/home/u/.synapse"),
        temp_dir: Path::new("/tmp"),
        extra_writable: EXTRA.as_slice(),
        sandboxed,
        is_session_pid: &session_pid,
        agent_commands: &AGENT_COMMANDS,
    }
}
