//! The agent's own commands as the session shell defines them (`read`, `skill`, `todo`,
//! `task:general`, …). The daemon's command registry owns their names and hands them in, as it
//! hands in the paths of [`crate::Context`]: the engine never keeps a copy that a new command
//! could outgrow.
//!
//! Such a command in a line (`head f; skill search "x"`, `todo list | wc -l`) is the agent's, not
//! a same-named program on `PATH`: it starts no program named by its words, and the gate judges
//! it again, with its real arguments, when the shell runs it. Agent commands whose words name a
//! command they start (`bash --timeout N '…'`, `job start '…'`) are left out on purpose, so the
//! engine keeps looking inside them like any launcher.

use std::collections::BTreeSet;

/// The names of the agent commands the session shell defines, less the launchers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCommands {
    names: BTreeSet<String>,
}

impl AgentCommands {
    /// The commands in `names`: agent commands that run no command named by their words.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Self {
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether the bare word `name` starts one of the agent's commands.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}
