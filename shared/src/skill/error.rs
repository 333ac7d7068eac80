//! Errors and warnings produced while reading a SKILL.md. Every one names the file and, where
//! known, the line, so the user can jump to it.

use std::fmt;
use std::path::PathBuf;

/// Why a SKILL.md could not be loaded. The skill is skipped; the others load.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkillFormatError {
    #[error("{path}:1: SKILL.md must start with a `---` line opening the YAML frontmatter", path = .path.display())]
    MissingFrontmatter { path: PathBuf },
    #[error("{path}: cannot read: {reason}", path = .path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{path}:{line}: frontmatter opened here is never closed by a `---` line", path = .path.display())]
    UnterminatedFrontmatter { path: PathBuf, line: usize },
    #[error("{path}:{line}: invalid YAML frontmatter: {message}", path = .path.display())]
    Yaml {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: the frontmatter must be a YAML mapping of `key: value` lines", path = .path.display())]
    NotAMapping { path: PathBuf, line: usize },
    #[error("{path}:{line}: `description` is required (1-1024 characters saying what the skill does and when to use it)", path = .path.display())]
    MissingDescription { path: PathBuf, line: usize },
    #[error("{path}:{line}: invalid skill name {name:?}: {reason}", path = .path.display())]
    InvalidName {
        path: PathBuf,
        line: usize,
        name: String,
        reason: String,
    },
    #[error("{path}:{line}: `{field}` must be {expected}", path = .path.display())]
    WrongType {
        path: PathBuf,
        line: usize,
        field: String,
        expected: &'static str,
    },
}

impl SkillFormatError {
    /// The SKILL.md the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::MissingFrontmatter { path }
            | Self::Unreadable { path, .. }
            | Self::UnterminatedFrontmatter { path, .. }
            | Self::Yaml { path, .. }
            | Self::NotAMapping { path, .. }
            | Self::MissingDescription { path, .. }
            | Self::InvalidName { path, .. }
            | Self::WrongType { path, .. } => path,
        }
    }
}

/// Something wrong that does not stop the skill from loading (lenient rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillWarning {
    pub path: PathBuf,
    /// 1-based line in `path`, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl SkillWarning {
    pub fn new(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for SkillWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}
