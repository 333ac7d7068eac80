//! Type-ahead: what the user types while a turn runs. Lines ended with Enter are queued and run
//! after the turn, in order, as if typed at the prompt; the unfinished line becomes the start of
//! the next prompt. The current text is published to a [`Typed`] handle that the spinner draws,
//! so what is typed is visible at once.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::Notify;

use super::keys::Key;

/// What the spinner shows of the type-ahead; [`Typed::changed`] wakes it to redraw.
#[derive(Debug, Clone, Default)]
pub struct Typed(Arc<(Mutex<String>, Notify)>);

impl Typed {
    pub fn text(&self) -> String {
        self.0.0.lock().clone()
    }

    pub async fn changed(&self) {
        self.0.1.notified().await;
    }

    fn set(&self, text: String) {
        *self.0.0.lock() = text;
        self.0.1.notify_waiters();
    }
}

/// Lines typed during a turn.
#[derive(Debug, Default)]
pub struct TypeAhead {
    line: String,
    queued: VecDeque<String>,
    shown: Typed,
}

impl TypeAhead {
    /// The handle the spinner draws from.
    pub fn shown(&self) -> Typed {
        self.shown.clone()
    }

    pub fn key(&mut self, key: Key) {
        match key {
            Key::Char(c) => self.line.push(c),
            Key::Backspace => {
                self.line.pop();
            }
            Key::ClearLine => self.line.clear(),
            Key::Enter => {
                let line = std::mem::take(&mut self.line);
                if !line.trim().is_empty() {
                    self.queued.push_back(line);
                }
            }
            Key::Escape => {}
        }
        self.publish();
    }

    /// Queues a line as if it was typed (the prompt of `synapse "<prompt>"`).
    pub fn queue(&mut self, line: String) {
        self.queued.push_back(line);
        self.publish();
    }

    /// The next queued line.
    pub fn next_line(&mut self) -> Option<String> {
        let line = self.queued.pop_front();
        self.publish();
        line
    }

    /// The unfinished line, for the next prompt.
    pub fn take_partial(&mut self) -> String {
        let line = std::mem::take(&mut self.line);
        self.publish();
        line
    }

    fn publish(&self) {
        let mut text = String::new();
        if !self.queued.is_empty() {
            text.push_str(&format!("{} queued", self.queued.len()));
            if !self.line.is_empty() {
                text.push_str(" · ");
            }
        }
        text.push_str(&self.line.replace('\n', "⏎"));
        self.shown.set(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_queue_and_the_partial_line_is_shown() {
        let mut t = TypeAhead::default();
        for c in "/help".chars() {
            t.key(Key::Char(c));
        }
        t.key(Key::Enter);
        t.key(Key::Char('n'));
        t.key(Key::Char('x'));
        t.key(Key::Backspace);
        assert_eq!(t.shown().text(), "1 queued · n");
        assert_eq!(t.next_line().as_deref(), Some("/help"));
        assert_eq!(t.next_line(), None);
        assert_eq!(t.take_partial(), "n");
        assert_eq!(t.shown().text(), "");
    }
}
