//! [`AgentError`]: what can go wrong in the agent core outside a turn's own outcome (a turn that
//! fails at the model ends with a [`super::TurnFailure`] instead): the model configuration, the
//! provider, a summary for compaction, a permission-mode change, a sub-agent that cannot start.

use synapse_llm::{ConfigError, LlmError};

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// No usable model configuration (no key, a bad provider or URL, …).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The provider could not be built or called.
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("the model returned an empty summary")]
    EmptySummary,
    #[error("permissions are not enforced in this daemon")]
    NoGate,
    #[error("unknown permission mode {0:?}: use auto, ask, read-only or yolo")]
    UnknownMode(String),
    #[error("the daemon is stopping")]
    Stopping,
    /// An `--add-dir` that is not an existing folder given by its absolute path.
    #[error("--add-dir {0}: no such directory; give an existing folder")]
    AddDir(String),
}
