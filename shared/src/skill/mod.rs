//! The skill format both sides agree on: SKILL.md parsing and Agent Skills spec validation, and
//! the naming of the `skill:<skill>:<script>` commands.
//!
//! Flow: [`frontmatter::split`] cuts the `---` block off a SKILL.md, [`spec::parse_skill_md`]
//! parses it with serde-saphyr and validates every field, returning a [`spec::SkillMeta`] plus
//! warnings (lenient rules) or a [`SkillFormatError`] naming file and line (the skill is skipped).
//! [`naming`] decides whether a skill or script name can become a shell command.

mod colon_retry;
pub mod error;
pub mod frontmatter;
pub mod naming;
pub mod spec;
mod validate;

pub use error::{SkillFormatError, SkillWarning};
pub use naming::{SKILL_COMMAND_PREFIX, check_command_component, split_wrapper_name, wrapper_name};
pub use spec::{SkillKind, SkillMeta, parse_skill_md, validate_name};
