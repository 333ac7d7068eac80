//! What a session's shell is started with: directory, environment, and the Synapse additions
//! to that environment (`$SYNAPSE_HOME/bin` first on PATH, no pagers or colours, no rc hooks,
//! none of the daemon's credentials, and the tag that lets the daemon find everything the shell starts), and the filesystem
//! sandbox it runs in, if any.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::workspace::WorkspaceBinding;

use synapse_sandbox::SandboxSpec;
use synapse_shared::shell_env::{
    COMMAND_TAG_VAR, SCRATCH_VAR, SESSION_VAR, SHELL_TAG_VAR, WORKSPACE_VAR,
};

/// Everything needed to start (or restart) a session's shell.
#[derive(Debug, Clone)]
pub struct ShellSpec {
    pub cwd: PathBuf,
    /// The complete environment (the session's; [`ShellSpec::shell_env`] adds Synapse's part).
    pub env: Vec<(OsString, OsString)>,
    /// `$SYNAPSE_HOME/bin`, put first on PATH (after the workspace's own bin folder).
    pub bin_dir: Option<PathBuf>,
    /// The workspace the session belongs to; its bin folder goes first on PATH.
    pub workspace: Option<WorkspaceBinding>,
    /// Confine the shell and everything it starts to these writable folders
    /// ([`synapse_sandbox`]). Ignored (plain bash) when this machine cannot sandbox.
    pub sandbox: Option<SandboxSpec>,
    /// The agent functions and the session's channel token ([`super::channel`]); `None`: agent
    /// commands run only on the fast path.
    pub agent: Option<AgentHook>,
    /// The session's scratch folder (spilled output, job logs, MCP images), named in the
    /// shell's environment so a wrapper's call saves its images there.
    pub scratch: Option<PathBuf>,
    /// The session's process limit, enforced by the keeper of each of its shells and jobs
    /// ([`super::cgroup`]).
    pub processes: super::cgroup::ProcessLimit,
    /// Variables that hold the daemon's credentials, removed from the shell's environment
    /// ([`SecretVariables`]).
    pub secrets: SecretVariables,
}

/// The environment variables holding credentials the daemon keeps to itself: every provider's
/// model keys ([`synapse_llm::config::secret_variables`]) always, and whatever the assembly adds
/// from the subsystems that own more (the web-search keys). Each name comes from its owner, so a
/// new provider's key is scrubbed without a second list to update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretVariables(std::sync::Arc<[String]>);

impl Default for SecretVariables {
    fn default() -> Self {
        Self::with(std::iter::empty())
    }
}

impl SecretVariables {
    /// The model providers' variables and `more`.
    pub fn with<'a>(more: impl IntoIterator<Item = &'a str>) -> Self {
        let mut all: Vec<String> = synapse_llm::config::secret_variables()
            .map(str::to_owned)
            .chain(more.into_iter().map(str::to_owned))
            .collect();
        all.sort();
        all.dedup();
        Self(all.into())
    }

    /// Whether `name` is one of them.
    pub fn contains(&self, name: &std::ffi::OsStr) -> bool {
        self.0.iter().any(|v| name == v.as_str())
    }
}

/// What a shell needs to run agent commands through the agent channel.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentHook {
    /// The session's secret (also inside `init_script`).
    pub token: String,
    /// Shell code defining the agent functions, run when the shell starts.
    pub init_script: String,
}

impl std::fmt::Debug for AgentHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentHook { .. }")
    }
}

/// What a shell's environment never takes from the session's: the daemon's own variables,
/// what rc files would run, and the daemon's credentials (a command such as `env` would
/// otherwise put them in the conversation and its session file).
const DROPPED: [&str; 9] = [
    WORKSPACE_VAR,
    SCRATCH_VAR,
    SESSION_VAR,
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    SHELL_TAG_VAR,
    COMMAND_TAG_VAR,
    synapse_command::daemon_process::OWNER_VAR,
];

/// Settings that keep tools from paging or colouring; they replace the session's.
const FIXED: [(&str, &str); 4] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
];

/// Whether session variable `name` reaches the shell as the session has it (PATH and the
/// [`FIXED`] ones are rewritten).
pub(super) fn passes_through(name: &std::ffi::OsStr, secrets: &SecretVariables) -> bool {
    !DROPPED.iter().any(|d| name == *d) && !secrets.contains(name) && name != "PATH"
}

impl ShellSpec {
    /// The environment the shell gets: the session's, minus rc-file hooks, plus PATH and the
    /// settings that keep tools from paging or colouring.
    pub(super) fn shell_env(&self, tag: &str) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = self
            .env
            .iter()
            .filter(|(k, _)| passes_through(k, &self.secrets) && !FIXED.iter().any(|(f, _)| k == f))
            .cloned()
            .collect();
        let old_path = self
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let mut path = OsString::new();
        if let Some(own) = self.workspace.as_ref().and_then(|w| w.own.as_ref()) {
            path.push(own.bin_dir.as_os_str());
            path.push(":");
        }
        if let Some(ws) = &self.workspace {
            path.push(ws.bin_dir.as_os_str());
        }
        if let Some(bin) = &self.bin_dir {
            if !path.is_empty() {
                path.push(":");
            }
            path.push(bin.as_os_str());
        }
        match old_path {
            Some(p) if !p.is_empty() => {
                if !path.is_empty() {
                    path.push(":");
                }
                path.push(p);
            }
            _ => {
                if !path.is_empty() {
                    path.push(":");
                }
                path.push("/usr/local/bin:/usr/bin:/bin");
            }
        }
        env.push(("PATH".into(), path));
        env.extend(
            FIXED
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        env.push((SHELL_TAG_VAR.into(), tag.into()));
        if let Some(ws) = &self.workspace {
            env.push((WORKSPACE_VAR.into(), ws.root.clone().into_os_string()));
            if let Some(own) = &ws.own {
                env.push((SESSION_VAR.into(), own.session.clone().into()));
            }
        }
        if let Some(scratch) = &self.scratch {
            env.push((SCRATCH_VAR.into(), scratch.clone().into_os_string()));
        }
        if let Some((k, v)) = synapse_command::daemon_process::owner_env() {
            env.push((k.into(), v.into()));
        }
        env
    }
}
