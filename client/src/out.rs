//! Output that a closed pipe does not break. The standard `print!`, `println!`, `eprint!` and
//! `eprintln!` panic when the reader has gone (`synapse skill list | head -1`, `synapse run … 2>&1
//! | head -1`); this crate's macros of the same names, declared first in `lib.rs` so every module
//! uses them instead, write through [`write_out`] and [`write_err`], which drop the text when it
//! cannot be written. [`Quiet`] does the same for a writer used with `write!`, and `cli::main`
//! ends a command whose `?` met a closed pipe without a word.
//!
//! So a closed stdout or stderr ends nothing by itself: `synapse run` goes on to its end and exits
//! with its own status, as Claude Code does (`cat` would die of SIGPIPE, status 141, just as
//! quietly; the run's status says more: whether the task was done).

use std::fmt;
use std::io::{self, Write};

/// `print!` that drops its text when stdout cannot take it.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!($($arg)*))
    };
}

/// `println!` that drops its text when stdout cannot take it.
macro_rules! println {
    () => {
        $crate::out::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that drops its text when stderr cannot take it.
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::out::write_err(format_args!($($arg)*))
    };
}

/// `eprintln!` that drops its text when stderr cannot take it.
macro_rules! eprintln {
    () => {
        $crate::out::write_err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stdout; a write that fails (a closed pipe, a terminal gone) is dropped.
pub fn write_out(args: fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|()| out.flush());
}

/// Writes to stderr; a write that fails is dropped.
pub fn write_err(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Whether an error comes from writing to a pipe nobody reads any more.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// A writer for which a closed pipe is not an error: what cannot be written is dropped.
pub struct Quiet<W: Write>(pub W);

impl<W: Write> Write for Quiet<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(buf.len()),
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.0.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A pipe whose reader has gone.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_pipe_drops_the_text_other_errors_stay() {
        let mut quiet = Quiet(Closed);
        writeln!(quiet, "lost {}", 1).unwrap();
        quiet.flush().unwrap();
        let error = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_closed_pipe(&error.context("writing the list")));
        let other = anyhow::Error::from(io::Error::from(io::ErrorKind::NotFound));
        assert!(!is_closed_pipe(&other));
    }
}
