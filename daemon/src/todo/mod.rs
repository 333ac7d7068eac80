//! The agent's task list (`todo`, the seed's `plan`): one list per session, kept in the
//! session's folder ([`store`]), edited by the `todo` agent shell command ([`command`]), and
//! checked when the model ends a turn ([`guard`], the runner's [`TurnGuard`]) so unfinished
//! items bring one reminder.
//!
//! [`TurnGuard`]: crate::agent::runner::TurnGuard

pub mod command;
pub mod guard;
pub mod list;
pub mod store;

use std::sync::Arc;

pub use command::TodoCommand;
pub use guard::TodoGuard;
pub use store::TodoStore;

use crate::shell::CommandRegistry;

/// Adds `todo` to `registry`.
pub fn register(registry: &mut CommandRegistry, store: TodoStore) {
    registry.register(Arc::new(TodoCommand::new(store)));
}
