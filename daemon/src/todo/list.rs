//! The task list itself: items with a status, the edits `todo` makes (at most one item in
//! progress at a time), and how the list reads in command output and reminders.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub text: String,
    pub status: Status,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoList {
    pub items: Vec<TodoItem>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TodoError {
    #[error("the list is empty; add items first with `todo add \"<item>\"…`")]
    Empty,
    #[error("there is no item {number}; the list has items 1 to {len}")]
    NoSuchItem { number: usize, len: usize },
    #[error("{0:?} is not an item number")]
    NotANumber(String),
    #[error("an item must not be empty")]
    EmptyItem,
}

impl TodoList {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Items not done yet, with their 1-based numbers.
    pub fn unfinished(&self) -> impl Iterator<Item = (usize, &TodoItem)> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.status != Status::Done)
            .map(|(n, i)| (n + 1, i))
    }

    pub fn add(&mut self, texts: &[String]) -> Result<(), TodoError> {
        let texts: Vec<String> = texts.iter().map(|t| t.trim().to_string()).collect();
        if texts.is_empty() || texts.iter().any(String::is_empty) {
            return Err(TodoError::EmptyItem);
        }
        self.items.extend(texts.into_iter().map(|text| TodoItem {
            text,
            status: Status::Pending,
        }));
        Ok(())
    }

    /// Puts item `number` in progress; the item that was in progress goes back to pending and
    /// its number is returned.
    pub fn start(&mut self, number: &str) -> Result<Option<usize>, TodoError> {
        let index = self.index(number)?;
        let mut demoted = None;
        for (i, item) in self.items.iter_mut().enumerate() {
            if i != index && item.status == Status::InProgress {
                item.status = Status::Pending;
                demoted = Some(i + 1);
            }
        }
        self.items[index].status = Status::InProgress;
        Ok(demoted)
    }

    pub fn done(&mut self, number: &str) -> Result<(), TodoError> {
        let index = self.index(number)?;
        self.items[index].status = Status::Done;
        Ok(())
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    fn index(&self, number: &str) -> Result<usize, TodoError> {
        if self.items.is_empty() {
            return Err(TodoError::Empty);
        }
        let n: usize = number
            .trim()
            .parse()
            .map_err(|_| TodoError::NotANumber(number.to_string()))?;
        if n == 0 || n > self.items.len() {
            return Err(TodoError::NoSuchItem {
                number: n,
                len: self.items.len(),
            });
        }
        Ok(n - 1)
    }

    /// The list as shown after every change.
    pub fn render(&self) -> String {
        if self.items.is_empty() {
            return "Todo list is empty.\n".to_string();
        }
        let done = self
            .items
            .iter()
            .filter(|i| i.status == Status::Done)
            .count();
        let mut out = format!("Todo ({done}/{} done):\n", self.items.len());
        for (n, item) in self.items.iter().enumerate() {
            out.push_str(&line(n + 1, item));
        }
        out
    }
}

impl TodoList {
    /// The list as the session's plan, for front ends (every item of medium priority: `todo`
    /// has no priorities).
    pub fn plan(&self) -> Vec<synapse_session::PlanEntry> {
        use synapse_session::{PlanEntry, PlanPriority, PlanStatus};
        self.items
            .iter()
            .map(|item| PlanEntry {
                content: item.text.clone(),
                status: match item.status {
                    Status::Pending => PlanStatus::Pending,
                    Status::InProgress => PlanStatus::InProgress,
                    Status::Done => PlanStatus::Completed,
                },
                priority: PlanPriority::Medium,
            })
            .collect()
    }
}

/// `  2. [>] write the tests`
pub fn line(number: usize, item: &TodoItem) -> String {
    let mark = match item.status {
        Status::Pending => "[ ]",
        Status::InProgress => "[>]",
        Status::Done => "[x]",
    };
    format!("  {number}. {mark} {}\n", item.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> TodoList {
        let mut l = TodoList::default();
        l.add(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        l
    }

    #[test]
    fn at_most_one_item_is_in_progress() {
        let mut l = list(&["a", "b", "c"]);
        assert_eq!(l.start("1").unwrap(), None);
        assert_eq!(l.start("3").unwrap(), Some(1));
        assert_eq!(
            l.render(),
            "Todo (0/3 done):\n  1. [ ] a\n  2. [ ] b\n  3. [>] c\n"
        );
        l.done("3").unwrap();
        l.done("1").unwrap();
        assert_eq!(l.unfinished().map(|(n, _)| n).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn bad_numbers_are_explained() {
        let mut l = list(&["a"]);
        assert_eq!(
            l.start("2").unwrap_err().to_string(),
            "there is no item 2; the list has items 1 to 1"
        );
        assert!(matches!(l.done("x"), Err(TodoError::NotANumber(_))));
        assert!(matches!(
            TodoList::default().done("1"),
            Err(TodoError::Empty)
        ));
        assert!(matches!(l.add(&[" ".into()]), Err(TodoError::EmptyItem)));
    }
}
