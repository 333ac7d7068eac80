//! The agent's view of the web: `web_fetch` and `web_search`, agent shell commands that the
//! daemon registers on the shell router's registry ([`register`]).
//!
//! `web_fetch` ([`fetch_command`]) parses a URL, checks it against the address [`policy`],
//! fetches it with redirects followed by hand ([`fetch`]), turns the body into what the model
//! reads ([`render`]) and keeps it in a per-session [`cache`]. `web_search`
//! ([`search_command`]) asks the provider from [`settings`] through [`search`]. Both read the
//! `web` section of settings.json each time they run.

pub mod cache;
pub mod fetch;
pub mod fetch_command;
pub mod policy;
pub mod render;
pub mod search;
pub mod search_command;
pub mod settings;

use std::path::PathBuf;
use std::sync::Arc;

use synapse_shared::settings::Settings;

use crate::shell::CommandRegistry;

/// The current settings, read when a command runs.
pub type SettingsFn = Arc<dyn Fn() -> Settings + Send + Sync>;

/// Adds `web_fetch` and `web_search` to `registry`.
pub fn register(registry: &mut CommandRegistry, settings: SettingsFn, settings_path: PathBuf) {
    registry
        .register(Arc::new(fetch_command::WebFetchCommand::new(
            settings.clone(),
        )))
        .register(Arc::new(search_command::WebSearchCommand::new(
            settings,
            settings_path,
        )));
}
