//! The skill subsystem: skills (SKILL.md folders) are the agent's memory, and each script in a
//! skill becomes a shell command `skill:<skill>:<script>`.
//!
//! Flow: [`source`] finds the skill roots (project, user, env, plugin) → [`record`] loads each
//! folder (SKILL.md via `synapse_shared::skill`, scripts via [`script`] + [`docstring`]) →
//! [`state`] picks the winner per name and keeps [`wrapper`] files, [`index`] (index.json) and
//! the tool list in step → [`store::SkillStore`] answers queries; [`permissions`] and
//! [`settings_view`] apply settings.json; [`files`] guards paths; [`watcher`] feeds file changes
//! back in; [`catalog`] searches every extension command (`tools search`); [`commands`] holds
//! the texts the agent's `skill` / `tools` commands print.

pub mod catalog;
pub mod commands;
pub mod docstring;
pub mod error;
pub mod files;
pub mod index;
mod manage;
pub mod permissions;
pub mod record;
pub mod script;
pub mod settings_view;
pub mod source;
mod state;
pub mod store;
pub mod watcher;
pub mod wrapper;

pub use catalog::{SearchMode, SearchOutcome, TOOLS_USAGE, ToolCatalog, ToolEntry, ToolSource};
pub use commands::{SKILL_USAGE, skill_search_text};
pub use error::SkillError;
pub use permissions::SkillPermission;
pub use source::{RootConfig, SkillRoot, SkillSource};
pub use store::{LoadDecision, RefreshReport, SkillStore, SkillSummary, StorePaths};
pub use watcher::SkillWatcher;
