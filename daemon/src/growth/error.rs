//! Why a self-growth call failed, by kind, so the gRPC edge (`server/skills_growth.rs`) can
//! answer with the right status: a skill or session that does not exist is NotFound, a bad name
//! InvalidArgument, a model that cannot be reached Unavailable, and so on.

use std::path::PathBuf;

use crate::skills::SkillError;

use super::versions::VersionError;

#[derive(Debug, thiserror::Error)]
pub enum GrowthError {
    /// From the skill store: not found, denied, disabled, …
    #[error(transparent)]
    Skill(#[from] SkillError),
    #[error(transparent)]
    Version(#[from] VersionError),
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("{0:?} is not a session id")]
    BadSessionId(String),
    #[error(
        "no session {id} ({path} does not exist); `synapse sessions list` shows the sessions",
        path = .path.display()
    )]
    NoSession { id: String, path: PathBuf },
    #[error("cannot read {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The sub-agent's model could not be set up or called (no key, bad settings, …).
    #[error(transparent)]
    Model(#[from] crate::agent::AgentError),
    /// The sub-agent's turn did not complete (cancelled, limits, model error mid-run); the text
    /// includes notes on versions saved on the way.
    #[error("{0}")]
    Run(String),
    /// A blocking task of the daemon failed (a bug, not bad input).
    #[error("internal error: {0}")]
    Internal(String),
}

impl GrowthError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        Self::Internal(e.to_string())
    }
}
