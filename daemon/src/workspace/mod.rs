//! Workspaces: one daemon serves many projects. A session is bound at open/resume to the project
//! root found upward from its cwd ([`root::project_root`]); the workspace is where the project
//! layer of a session's state hangs. [`settings::SettingsHandle`] is the one owner of the user's
//! `settings.json`, handed to every subsystem that reads settings. [`instructions`] reads the
//! project's and the user's instruction files (`AGENTS.md`, `CLAUDE.md`) for a session's prompt.
//! [`registry::Workspaces`] knows which workspaces are up: the sessions holding each, its folder
//! and bin folder, and when it goes down; the MCP hub and the skill store subscribe to it.
//! [`binding::WorkspaceBinding`] is a session's binding to its workspace, and [`trust_pins`] the
//! content pins of the project files `synapse trust` accepted (the gate, hooks and custom commands
//! read them; only a trust review or an "always" answer writes them).

pub mod binding;
pub mod git;
pub mod instructions;
pub mod registry;
pub mod root;
pub mod settings;
pub mod trust_pins;

pub use binding::WorkspaceBinding;
pub use registry::Workspaces;
pub use root::{PROJECT_MARKERS, project_root};
pub use settings::SettingsHandle;
pub use synapse_command::workspaces::{WorkspaceDirs, WorkspaceListener, workspace_id};
