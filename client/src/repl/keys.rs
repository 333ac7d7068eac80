//! Keys pressed while a turn runs. rustyline owns the terminal only at the prompt; during a
//! turn this module puts the terminal in non-canonical, no-echo mode (signals stay on, so
//! Ctrl-C still raises SIGINT) and reads stdin on a thread of its own. Bytes become [`Key`]s:
//! a lone Esc cancels the turn, arrow-key and other escape sequences are swallowed whole (so Esc
//! never eats the key after it), everything else is type-ahead for the next prompt. Dropping
//! [`TurnKeys`] stops the thread before it could read another byte and restores the terminal.

use std::io::IsTerminal;
use std::os::fd::{AsFd, OwnedFd};
use std::thread::JoinHandle;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};
use tokio::sync::mpsc;

/// How long after an Esc byte the rest of an escape sequence may arrive.
const ESCAPE_SEQUENCE_WAIT_MS: u8 = 30;

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
    reader: Option<(OwnedFd, JoinHandle<()>)>,
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
        let mut raw = saved.clone();
        raw.local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        if termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).is_err() {
            return idle;
        }
        let Ok((wake_rx, wake_tx)) = nix::unistd::pipe() else {
            let _ = termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
            return idle;
        };
        let thread = std::thread::Builder::new()
            .name("synapse-turn-keys".into())
            .spawn(move || read_keys(wake_rx, tx));
        match thread {
            Ok(handle) => {
                idle.reader = Some((wake_tx, handle));
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
}

impl TurnKeys {
    /// Stops reading and restores the terminal (so something else can read lines); no keys
    /// come after this.
    pub fn stop(&mut self) {
        if let Some((wake, handle)) = self.reader.take() {
            let _ = nix::unistd::write(&wake, b"x");
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

/// Reads stdin until the wake pipe has data (or the receiver is gone).
fn read_keys(wake: OwnedFd, tx: mpsc::UnboundedSender<Key>) {
    let stdin = std::io::stdin();
    let mut decoder = KeyDecoder::default();
    loop {
        let timeout = if decoder.pending_escape() {
            PollTimeout::from(ESCAPE_SEQUENCE_WAIT_MS)
        } else {
            PollTimeout::NONE
        };
        let mut fds = [
            PollFd::new(stdin.as_fd(), PollFlags::POLLIN),
            PollFd::new(wake.as_fd(), PollFlags::POLLIN),
        ];
        let ready = match poll(&mut fds, timeout) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
        };
        let woken = fds[1]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP));
        let readable = fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
        if woken {
            return;
        }
        let mut keys = Vec::new();
        if ready == 0 {
            decoder.timeout(&mut keys);
        } else if readable {
            let mut buf = [0u8; 256];
            match nix::unistd::read(stdin.as_fd(), &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => decoder.feed(&buf[..n], &mut keys),
            }
        } else {
            return;
        }
        for key in keys {
            if tx.send(key).is_err() {
                return;
            }
        }
    }
}

/// Bytes to keys; keeps state across reads so a sequence split between reads is still whole.
#[derive(Debug, Default)]
pub struct KeyDecoder {
    state: State,
    utf8: Vec<u8>,
}

#[derive(Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// An Esc byte was read; what follows decides.
    Escape,
    /// Inside `Esc [ …` or `Esc O x`: swallowed up to the final byte.
    Sequence,
    Ss3,
}

impl KeyDecoder {
    pub fn pending_escape(&self) -> bool {
        self.state == State::Escape
    }

    /// Nothing followed an Esc in time: it was the Esc key.
    pub fn timeout(&mut self, keys: &mut Vec<Key>) {
        if self.state == State::Escape {
            keys.push(Key::Escape);
        }
        self.state = State::Ground;
    }

    pub fn feed(&mut self, bytes: &[u8], keys: &mut Vec<Key>) {
        for &b in bytes {
            match self.state {
                State::Escape => match b {
                    b'[' => self.state = State::Sequence,
                    b'O' => self.state = State::Ss3,
                    // Alt+Enter: a newline in the type-ahead.
                    b'\r' | b'\n' => {
                        self.state = State::Ground;
                        keys.push(Key::Char('\n'));
                    }
                    _ => {
                        // Esc, then a key typed right after it: both count.
                        keys.push(Key::Escape);
                        self.state = State::Ground;
                        self.ground(b, keys);
                    }
                },
                State::Sequence => {
                    if (0x40..=0x7e).contains(&b) {
                        self.state = State::Ground;
                    }
                }
                State::Ss3 => self.state = State::Ground,
                State::Ground => self.ground(b, keys),
            }
        }
    }

    fn ground(&mut self, b: u8, keys: &mut Vec<Key>) {
        match b {
            0x1b => self.state = State::Escape,
            b'\r' | b'\n' => keys.push(Key::Enter),
            0x7f | 0x08 => keys.push(Key::Backspace),
            0x15 => keys.push(Key::ClearLine),
            0x00..=0x1f => {}
            _ => {
                self.utf8.push(b);
                match std::str::from_utf8(&self.utf8) {
                    Ok(s) => {
                        keys.extend(s.chars().map(Key::Char));
                        self.utf8.clear();
                    }
                    Err(e) if e.error_len().is_some() || self.utf8.len() >= 4 => self.utf8.clear(),
                    Err(_) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<Key> {
        let mut d = KeyDecoder::default();
        let mut keys = Vec::new();
        for chunk in chunks {
            d.feed(chunk, &mut keys);
        }
        d.timeout(&mut keys);
        keys
    }

    #[test]
    fn lone_escape_cancels_and_keeps_what_follows() {
        assert_eq!(decode(&[b"\x1b"]), vec![Key::Escape]);
        assert_eq!(
            decode(&[b"\x1b/h"]),
            vec![Key::Escape, Key::Char('/'), Key::Char('h')]
        );
    }

    #[test]
    fn sequences_are_swallowed_whole_even_when_split() {
        assert_eq!(decode(&[b"\x1b[A", b"x"]), vec![Key::Char('x')]);
        assert_eq!(decode(&[b"\x1b", b"[1;5", b"C"]), vec![]);
        assert_eq!(decode(&[b"\x1bOP"]), vec![]);
    }

    #[test]
    fn text_enter_backspace_and_utf8() {
        assert_eq!(
            decode(&[b"h\xc3", b"\xa9\r\x7f"]),
            vec![Key::Char('h'), Key::Char('é'), Key::Enter, Key::Backspace]
        );
        assert_eq!(decode(&[b"\x1b\r"]), vec![Key::Char('\n')]);
    }
}
