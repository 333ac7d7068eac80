//! The live tail of a running command on a terminal: the last lines it printed, redrawn in place
//! under the command as `ToolOutput` events arrive, and erased when the call finishes (the
//! one-line summary takes its place). Only for a terminal: piped output never sees it.

use std::io::{self, Write};

/// Prefix of each tail line.
const GUTTER: &str = "  │ ";

/// The tail region currently on screen.
#[derive(Debug, Default)]
pub struct LiveTail {
    /// Lines the region takes now (0: nothing drawn).
    drawn: usize,
}

impl LiveTail {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the region with `tail` (its control sequences stripped, each line cut to the
    /// terminal's width so that none wraps).
    pub fn update(&mut self, out: &mut impl Write, tail: &str, width: usize) -> io::Result<()> {
        let text = super::safe_text::strip_controls(tail);
        let room = width
            .saturating_sub(super::width::columns(GUTTER) + 1)
            .max(10);
        let mut frame = String::new();
        self.erase_into(&mut frame);
        let mut drawn = 0;
        for line in text.lines() {
            let cut = super::width::fit(line, room);
            frame.push_str(&format!("\x1b[2m{GUTTER}{cut}\x1b[0m\n"));
            drawn += 1;
        }
        self.drawn = drawn;
        out.write_all(frame.as_bytes())?;
        out.flush()
    }

    /// Erases the region (the call finished).
    pub fn clear(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.drawn == 0 {
            return Ok(());
        }
        let mut frame = String::new();
        self.erase_into(&mut frame);
        self.drawn = 0;
        out.write_all(frame.as_bytes())?;
        out.flush()
    }

    fn erase_into(&self, frame: &mut String) {
        if self.drawn > 0 {
            // To the start of the region's first line, then clear to the end of the screen.
            frame.push_str(&format!("\x1b[{}F\x1b[J", self.drawn));
        }
    }
}

/// The terminal's width in columns (80 when it cannot be read).
pub fn terminal_width() -> usize {
    termimad::crossterm::terminal::size()
        .map(|(w, _)| usize::from(w))
        .unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_is_redrawn_in_place_and_erased() {
        let mut tail = LiveTail::new();
        let mut out = Vec::new();
        tail.update(&mut out, "one\ntwo\x1b]52;c;x\x07", 80)
            .unwrap();
        let first = String::from_utf8(out.clone()).unwrap();
        assert_eq!(first, "\x1b[2m  │ one\x1b[0m\n\x1b[2m  │ two\x1b[0m\n");
        out.clear();
        tail.update(&mut out, &"x".repeat(500), 40).unwrap();
        let second = String::from_utf8(out.clone()).unwrap();
        assert!(second.starts_with("\x1b[2F\x1b[J"), "{second:?}");
        assert!(
            second.contains(&format!("│ {}…\x1b[0m", "x".repeat(34))),
            "{second:?}"
        );
        out.clear();
        tail.clear(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\x1b[1F\x1b[J");
    }
}
