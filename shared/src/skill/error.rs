//! Errors and warnings produced while reading a SKILL.md. Every one names the file and, where
//! known, the line, so the user can jump to it.

use std::fmt;
use std::path::PathBuf;

/// Why a SKILL.md could not be loaded. The skill is skipped; the others load.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkillFormatError {
    /// The file's first line is not `---`, so it has no frontmatter.
    #[error("{path}:1: SKILL.md must start with a `---` line opening the YAML frontmatter", path = .path.display())]
    MissingFrontmatter {
        /// The SKILL.md.
        path: PathBuf,
    },
    /// The file could not be read: an I/O error, a link leaving the skill folder, not a regular
    /// file, not UTF-8, or too large.
    #[error("{path}: cannot read: {reason}", path = .path.display())]
    Unreadable {
        /// The SKILL.md.
        path: PathBuf,
        /// The read error, as text.
        reason: String,
    },
    /// The opening `---` has no closing `---` (or `...`) line after it.
    #[error("{path}:{line}: frontmatter opened here is never closed by a `---` line", path = .path.display())]
    UnterminatedFrontmatter {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based line of the opening `---`.
        line: usize,
    },
    /// The frontmatter is not valid YAML.
    #[error("{path}:{line}: invalid YAML frontmatter: {message}", path = .path.display())]
    Yaml {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based file line of the syntax error (the first YAML line when the parser gave none).
        line: usize,
        /// The YAML parser's message, without its own position.
        message: String,
    },
    /// The frontmatter is valid YAML but not a mapping (a list, a bare string…).
    #[error("{path}:{line}: the frontmatter must be a YAML mapping of `key: value` lines", path = .path.display())]
    NotAMapping {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based file line of the first YAML line.
        line: usize,
    },
    /// `description` is missing, empty or only whitespace.
    #[error("{path}:{line}: `description` is required (1-1024 characters saying what the skill does and when to use it)", path = .path.display())]
    MissingDescription {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based file line of the empty `description`, or of the opening `---` when it is missing.
        line: usize,
    },
    /// `name` breaks the spec (characters, hyphens, length), or is missing with no folder name to
    /// fall back on.
    #[error("{path}:{line}: invalid skill name {name:?}: {reason}", path = .path.display())]
    InvalidName {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based file line of `name`, or of the opening `---` when it is missing.
        line: usize,
        /// The rejected name (empty when missing).
        name: String,
        /// Which rule it breaks, with the fix.
        reason: String,
    },
    /// `name` or `description` is not a string (a list, a mapping…).
    #[error("{path}:{line}: `{field}` must be {expected}", path = .path.display())]
    WrongType {
        /// The SKILL.md.
        path: PathBuf,
        /// 1-based file line of the field.
        line: usize,
        /// The frontmatter key at fault.
        field: String,
        /// What it must be, with its article (`a string`).
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
    /// The SKILL.md the warning is about.
    pub path: PathBuf,
    /// 1-based line in `path`, when known.
    pub line: Option<usize>,
    /// What was wrong and what was done instead (`… ignored`, `using the folder name …`).
    pub message: String,
}

impl SkillWarning {
    /// A warning about `path`, at 1-based `line` when known.
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
