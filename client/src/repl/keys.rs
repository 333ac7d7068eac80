//! Keys pressed while a turn runs. rustyline owns the terminal only at the prompt; during a
//! turn this module turns off line buffering and echo (signals stay on, so Ctrl-C still raises
//! SIGINT, and output processing stays on, so the turn's output renders as at the prompt) and
//! reads key events through crossterm on a thread of its own. A lone Esc cancels the turn, arrow
//! and function keys are ignored (crossterm reads their escape sequences whole, so Esc never eats
//! the key after it), everything else is type-ahead for the next prompt. Dropping [`TurnKeys`]
//! stops the thread and restores the terminal.

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};
use tokio::sync::mpsc;

/// How often the reader thread looks whether it should stop (the longest a turn's end waits).
const STOP_CHECK: Duration = Duration::from_millis(10);

/// One key pressed during a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Esc on its own: cancel the turn.
    Escape,
    Char(char),
    Enter,
    Backspace,
    /// Ctrl-U: clear the type-ahead line.
    ClearLine,
}

/// The reader thread and the terminal state to restore.
pub struct TurnKeys {
    keys: mpsc::UnboundedReceiver<Key>,
    reader: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
    saved: Option<Termios>,
}

impl TurnKeys {
    /// Starts reading keys when stdin is a terminal; otherwise yields no keys.
    pub fn start() -> Self {
        let (tx, keys) = mpsc::unbounded_channel();
        let mut idle = Self {
            keys,
            reader: None,
            saved: None,
        };
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return idle;
        }
        let Ok(saved) = termios::tcgetattr(stdin.as_fd()) else {
            return idle;
        };
        let mut keyed = saved.clone();
        keyed
            .local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        if termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &keyed).is_err() {
            return idle;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("synapse-turn-keys".into())
            .spawn({
                let stop = stop.clone();
                move || read_keys(&stop, &tx)
            });
        match thread {
            Ok(handle) => {
                idle.reader = Some((stop, handle));
                idle.saved = Some(saved);
                idle
            }
            Err(_) => {
                let _ = termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
                idle
            }
        }
    }

    /// True when keys are read from a terminal.
    pub fn is_live(&self) -> bool {
        self.reader.is_some()
    }

    /// The next key; pending forever when there is no terminal.
    pub async fn next(&mut self) -> Key {
        match self.keys.recv().await {
            Some(key) => key,
            None => std::future::pending().await,
        }
    }

    /// Stops reading and restores the terminal (so something else can read lines); no keys
    /// come after this.
    pub fn stop(&mut self) {
        if let Some((stop, handle)) = self.reader.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        if let Some(saved) = self.saved.take() {
            let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, &saved);
        }
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads key events until told to stop (or the receiver is gone, or the terminal fails).
fn read_keys(stop: &AtomicBool, tx: &mpsc::UnboundedSender<Key>) {
    while !stop.load(Ordering::Relaxed) {
        match event::poll(STOP_CHECK) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(_) => return,
        }
        let Ok(event) = event::read() else { return };
        for key in keys_of(&event) {
            if tx.send(key).is_err() {
                return;
            }
        }
    }
}

/// What a terminal event means during a turn.
fn keys_of(event: &Event) -> Vec<Key> {
    let Event::Key(KeyEvent {
        code,
        modifiers,
        kind,
        ..
    }) = *event
    else {
        // Resize, focus, mouse, paste: nothing for the type-ahead.
        return Vec::new();
    };
    if kind == KeyEventKind::Release {
        return Vec::new();
    }
    let alt = modifiers.contains(KeyModifiers::ALT);
    let ctrl = modifiers.contains(KeyModifiers::CONTROL);
    match code {
        KeyCode::Esc => vec![Key::Escape],
        // Alt+Enter: a newline in the type-ahead.
        KeyCode::Enter if alt => vec![Key::Char('\n')],
        KeyCode::Enter => vec![Key::Enter],
        KeyCode::Backspace => vec![Key::Backspace],
        KeyCode::Char('u') if ctrl => vec![Key::ClearLine],
        KeyCode::Char('h') if ctrl => vec![Key::Backspace],
        KeyCode::Char(_) if ctrl => Vec::new(),
        // Esc, then a key typed right after it (read as Alt+key): both count.
        KeyCode::Char(c) if alt => vec![Key::Escape, Key::Char(c)],
        KeyCode::Char(c) => vec![Key::Char(c)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn lone_escape_cancels_and_an_alt_key_is_escape_then_the_key() {
        assert_eq!(
            keys_of(&key(KeyCode::Esc, KeyModifiers::NONE)),
            [Key::Escape]
        );
        assert_eq!(
            keys_of(&key(KeyCode::Char('/'), KeyModifiers::ALT)),
            [Key::Escape, Key::Char('/')]
        );
    }

    #[test]
    fn arrows_function_keys_and_other_events_are_ignored() {
        assert_eq!(keys_of(&key(KeyCode::Up, KeyModifiers::NONE)), []);
        assert_eq!(keys_of(&key(KeyCode::Right, KeyModifiers::CONTROL)), []);
        assert_eq!(keys_of(&key(KeyCode::F(1), KeyModifiers::NONE)), []);
        assert_eq!(keys_of(&Event::Resize(80, 24)), []);
        assert_eq!(keys_of(&key(KeyCode::Char('x'), KeyModifiers::CONTROL)), []);
    }

    #[test]
    fn text_enter_backspace_clear_and_alt_enter() {
        let typed: Vec<Key> = [
            key(KeyCode::Char('é'), KeyModifiers::NONE),
            key(KeyCode::Enter, KeyModifiers::NONE),
            key(KeyCode::Backspace, KeyModifiers::NONE),
            key(KeyCode::Char('u'), KeyModifiers::CONTROL),
            key(KeyCode::Enter, KeyModifiers::ALT),
        ]
        .iter()
        .flat_map(keys_of)
        .collect();
        assert_eq!(
            typed,
            [
                Key::Char('é'),
                Key::Enter,
                Key::Backspace,
                Key::ClearLine,
                Key::Char('\n')
            ]
        );
    }
}
