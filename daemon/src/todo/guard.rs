//! The turn-end reminder: a [`TurnGuard`] that, when the model ends a turn while the session's
//! task list still has unfinished items, hands the runner a reminder listing them.

use super::list;
use super::store::TodoStore;
use crate::agent::runner::TurnGuard;

pub struct TodoGuard {
    store: TodoStore,
    session: String,
}

impl TodoGuard {
    pub fn new(store: TodoStore, session: impl Into<String>) -> Self {
        Self {
            store,
            session: session.into(),
        }
    }
}

impl TurnGuard for TodoGuard {
    fn before_end(&self) -> Option<String> {
        // A list that cannot be read is reported by `todo` itself; no reminder then.
        let list = self.store.load(&self.session).ok()?;
        let open: String = list
            .unfinished()
            .map(|(n, item)| list::line(n, item))
            .collect();
        if open.is_empty() {
            return None;
        }
        Some(format!(
            "<system-reminder>\nYour todo list still has unfinished items:\n{open}\
             Continue with them, or mark them done (`todo done N`) or clear the list \
             (`todo clear`) if they are finished or no longer needed. If you need the user's \
             answer first, say so and end your turn.\n</system-reminder>"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::list::TodoList;

    #[test]
    fn reminds_only_while_items_are_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = TodoStore::new(dir.path().to_path_buf());
        let guard = TodoGuard::new(store.clone(), "s");
        assert_eq!(guard.before_end(), None);
        let mut list = TodoList::default();
        list.add(&["a".into(), "b".into()]).unwrap();
        list.start("2").unwrap();
        store.save("s", &list).unwrap();
        let reminder = guard.before_end().unwrap();
        assert!(reminder.contains("  1. [ ] a\n  2. [>] b\n"), "{reminder}");
        list.done("1").unwrap();
        list.done("2").unwrap();
        store.save("s", &list).unwrap();
        assert_eq!(guard.before_end(), None);
    }
}
