//! Errors of the skill subsystem. Each names the skill, file or argument it is about and, where
//! there is one, the fix.

use std::io;
use std::path::PathBuf;

use synapse_shared::skill::SkillFormatError;

#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("{0}")]
    Format(#[from] SkillFormatError),
    #[error("no skill named {name:?}{hint}", hint = suggestions_hint(.suggestions))]
    NotFound {
        name: String,
        suggestions: Vec<String>,
    },
    #[error("skill {name:?} is denied by permissions.skill in {settings}", settings = .settings.display())]
    Denied { name: String, settings: PathBuf },
    #[error(
        "loading skill {name:?} needs approval (permissions.skill says \"ask\"); nobody approved it"
    )]
    ApprovalRequired { name: String },
    #[error(
        "skill {name:?} is only run by the user (its SKILL.md says `disable-model-invocation: true`); \
         the user starts it with /{name} in the REPL"
    )]
    UserOnly { name: String },
    #[error("skill {name:?} is disabled; enable it with `synapse skill enable {name}`")]
    Disabled { name: String },
    #[error("{path:?} is outside skill {skill:?}: {reason}")]
    PathEscape {
        skill: String,
        path: String,
        reason: &'static str,
    },
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("invalid description: {reason}")]
    InvalidDescription { reason: String },
    #[error("skill {name:?} already exists at {path}", path = .path.display())]
    AlreadyExists { name: String, path: PathBuf },
    #[error("skill {id} is a {origin} skill; only user skills can be deleted")]
    NotDeletable { id: String, origin: &'static str },
    #[error("settings: {0}")]
    Settings(#[from] synapse_shared::settings::SettingsError),
    #[error("cannot {action} {path}: {source}", path = .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("cannot watch skill folders: {0}")]
    Watch(String),
    #[error("cannot approve skill {name:?}: {reason}")]
    Approval { name: String, reason: String },
}

impl SkillError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

fn suggestions_hint(s: &[String]) -> String {
    if s.is_empty() {
        "; list skills with `tools search skill:` or `synapse skill list`".to_string()
    } else {
        format!("; did you mean: {}?", s.join(", "))
    }
}
