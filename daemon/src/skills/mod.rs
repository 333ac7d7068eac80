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

pub mod agent_commands;
pub mod allowed_tools;
mod awareness;
pub mod bm25;
pub mod broken;
pub mod catalog;
pub mod commands;
pub mod docstring;
pub mod error;
pub mod files;
pub mod grants;
pub mod index;
mod manage;
pub mod permissions;
pub mod plugins;
mod python_main;
mod query;
pub mod record;
pub mod scope;
pub mod script;
mod script_help;
mod script_rules;
pub mod settings_view;
pub mod source;
mod state;
pub mod store;
pub mod watcher;
pub mod wrapper;

pub use awareness::{
    AWARENESS_BUDGET_BYTES_DEFAULT, SkillListing, budget_from as awareness_budget,
};
pub use catalog::{
    SearchMode, SearchOutcome, TOOLS_USAGE, ToolCatalog, ToolEntry, ToolScope, ToolSource,
};
pub use commands::{SKILL_USAGE, skill_search_text};
pub use error::SkillError;
pub use permissions::SkillPermission;
pub use source::{RootConfig, SkillRoot, SkillSource};
pub use store::{LoadDecision, RefreshReport, SkillStore, SkillSummary, StorePaths};
pub use watcher::SkillWatcher;

/// Opens the store for a daemon (full scan, report logged) and starts its watcher; a watcher
/// that cannot start is logged and the store still works (refresh by hand).
pub fn start(
    paths: &synapse_shared::paths::Paths,
    settings: std::sync::Arc<crate::workspace::SettingsHandle>,
) -> (std::sync::Arc<SkillStore>, Option<SkillWatcher>) {
    let (store, report) = SkillStore::open_from_env(paths, None, settings);
    store.remove_stale_staging();
    tracing::info!(
        skills = report.skills,
        tools = report.tools,
        "skills loaded"
    );
    for w in &report.warnings {
        tracing::warn!("skills: {w}");
    }
    for e in &report.errors {
        tracing::error!("skills: {e}");
    }
    let watcher = match SkillWatcher::start(store.clone()) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::error!("{e}; skills update only on `synapse tools refresh skills`");
            None
        }
    };
    (store, watcher)
}

/// Keeps the skill commands in step with a call's writes before its result returns: a file an
/// agent command wrote is applied at once (only paths inside a skill root change anything),
/// and at the end of a shell line the watcher applies what it saw without waiting for its
/// quiet time ([`watcher::SkillFlush`]).
pub fn change_listener(
    store: std::sync::Arc<SkillStore>,
    flush: Option<watcher::SkillFlush>,
) -> synapse_command::registry::ChangeListener {
    std::sync::Arc::new(move |written| {
        let store = store.clone();
        let flush = flush.clone();
        Box::pin(async move {
            match written {
                Some(paths) => {
                    let _ = tokio::task::spawn_blocking(move || store.apply_paths(&paths)).await;
                }
                None => {
                    if let Some(flush) = flush {
                        flush.flush().await;
                    }
                }
            }
        })
    })
}
