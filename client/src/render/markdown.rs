//! Streaming Markdown. The model's text arrives in small deltas; a terminal shows it rendered
//! (termimad) one complete line at a time, except fenced code blocks and tables, which are held
//! until they close so they render as a whole (code in colour, highlighted for its language by
//! [`super::highlight`]). Piped output (`MarkdownStream::plain`) is written through unchanged,
//! delta by delta.

use termimad::{Alignment, MadSkin};

/// Columns used when the terminal's width cannot be read.
const FALLBACK_WIDTH: usize = 100;

/// Turns text deltas into printable output.
pub struct MarkdownStream {
    skin: Option<MadSkin>,
    /// Colour output: code blocks are syntax-highlighted.
    color: bool,
    width: usize,
    /// The current line, not yet ended by a newline.
    partial: String,
    /// Lines of an open code fence or table.
    block: Vec<String>,
    fence: Option<String>,
    in_table: bool,
    /// Anything was emitted since the last [`MarkdownStream::reset`].
    emitted: bool,
}

impl MarkdownStream {
    /// Rendered Markdown for a terminal `width` columns wide; `color` picks the styled skin.
    pub fn rendered(color: bool, width: usize) -> Self {
        let mut skin = if color {
            MadSkin::default()
        } else {
            MadSkin::no_style()
        };
        for header in &mut skin.headers {
            header.align = Alignment::Left;
        }
        let mut s = Self::new(Some(skin), width.max(20));
        s.color = color;
        s
    }

    /// Text passed through as it arrives.
    pub fn plain() -> Self {
        Self::new(None, FALLBACK_WIDTH)
    }

    /// Rendered for the current terminal.
    pub fn for_terminal(color: bool) -> Self {
        let (cols, _) = termimad::terminal_size();
        let width = if cols == 0 {
            FALLBACK_WIDTH
        } else {
            usize::from(cols)
        };
        Self::rendered(color, width)
    }

    fn new(skin: Option<MadSkin>, width: usize) -> Self {
        Self {
            skin,
            color: false,
            width,
            partial: String::new(),
            block: Vec::new(),
            fence: None,
            in_table: false,
            emitted: false,
        }
    }

    /// Output ready to print after `delta` (possibly empty).
    pub fn push(&mut self, delta: &str) -> String {
        if self.skin.is_none() {
            self.emitted |= !delta.is_empty();
            self.partial.push_str(delta);
            if let Some(i) = self.partial.rfind('\n') {
                self.partial.drain(..=i);
            }
            return delta.to_string();
        }
        self.partial.push_str(delta);
        let mut out = String::new();
        while let Some(i) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=i).collect();
            out.push_str(&self.line(line.trim_end_matches(['\n', '\r'])));
        }
        self.emitted |= !out.is_empty();
        out
    }

    /// Everything still held (an unterminated last line, an open block), ending with a newline
    /// when anything was printed at all.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if self.skin.is_none() {
            if !self.partial.is_empty() {
                out.push('\n');
            }
            self.partial.clear();
            return out;
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            out.push_str(&self.line(&line));
        }
        out.push_str(&self.close_block());
        self.emitted |= !out.is_empty();
        out
    }

    /// True when this stream printed anything since it was created or reset.
    pub fn emitted(&self) -> bool {
        self.emitted
    }

    /// Forgets what was emitted (a new answer starts).
    pub fn reset(&mut self) {
        self.emitted = false;
    }

    fn line(&mut self, line: &str) -> String {
        let trimmed = line.trim_start();
        if let Some(marker) = &self.fence {
            self.block.push(line.to_string());
            if trimmed.starts_with(marker.as_str()) && self.block.len() > 1 {
                return self.close_block();
            }
            return String::new();
        }
        let mut out = String::new();
        if self.in_table && !trimmed.starts_with('|') {
            out.push_str(&self.close_block());
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            out.push_str(&self.close_block());
            self.fence = Some(trimmed[..3].to_string());
            self.block.push(line.to_string());
        } else if trimmed.starts_with('|') {
            self.in_table = true;
            self.block.push(line.to_string());
        } else {
            out.push_str(&self.render(line));
        }
        out
    }

    fn close_block(&mut self) -> String {
        let fence = self.fence.take();
        self.in_table = false;
        if self.block.is_empty() {
            return String::new();
        }
        let block = std::mem::take(&mut self.block);
        if let Some(marker) = fence.filter(|_| self.color)
            && let Some(code) = highlighted_fence(&marker, &block)
        {
            return code;
        }
        self.render(&block.join("\n"))
    }

    fn render(&self, markdown: &str) -> String {
        let Some(skin) = &self.skin else {
            return format!("{markdown}\n");
        };
        if markdown.trim().is_empty() {
            return "\n".to_string();
        }
        let text = skin.text(markdown, Some(self.width)).to_string();
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A fenced block (opening line, code, closing line if it came) highlighted for the language
/// its opening line names; `None` leaves it to termimad.
fn highlighted_fence(marker: &str, block: &[String]) -> Option<String> {
    let (open, rest) = block.split_first()?;
    let lang = open.trim_start().trim_start_matches(marker.chars().next()?);
    let body = match rest.last() {
        Some(last) if last.trim_start().starts_with(marker) => &rest[..rest.len() - 1],
        _ => rest,
    };
    let mut code = body.join("\n");
    code.push('\n');
    super::highlight::highlight(lang.trim(), &code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(stream: &mut MarkdownStream, deltas: &[&str]) -> String {
        let mut out = String::new();
        for d in deltas {
            out.push_str(&stream.push(d));
        }
        out.push_str(&stream.finish());
        out
    }

    #[test]
    fn plain_passes_deltas_through() {
        let mut s = MarkdownStream::plain();
        assert_eq!(s.push("Hel"), "Hel");
        assert_eq!(s.push("lo **x**"), "lo **x**");
        assert_eq!(s.finish(), "\n");
        assert!(s.emitted());
    }

    #[test]
    fn lines_render_when_complete() {
        let mut s = MarkdownStream::rendered(false, 60);
        assert_eq!(s.push("Some **bold"), "");
        assert_eq!(s.push("** text\n- one"), "Some bold text\n");
        assert_eq!(s.finish(), "• one\n");
    }

    #[test]
    fn code_fences_and_tables_render_whole() {
        let mut s = MarkdownStream::rendered(false, 60);
        let out = feed(
            &mut s,
            &[
                "# Title\n",
                "```rust\nfn main() {}\n",
                "```\n",
                "| a | b |\n|---|---|\n| 1 | 2 |\n",
                "done",
            ],
        );
        insta::assert_snapshot!(out);
    }

    #[test]
    fn code_blocks_in_colour_are_highlighted_for_their_language() {
        let mut s = MarkdownStream::rendered(true, 60);
        let out = feed(
            &mut s,
            &["```python\n", "print('hi')\n", "```\n", "after\n"],
        );
        assert!(out.contains("\x1b[38;2;"), "{out:?}");
        assert!(out.contains("print"), "{out:?}");
        assert!(!out.contains("```"), "{out:?}");
        // No colour: the plain rendering, no escapes.
        let mut s = MarkdownStream::rendered(false, 60);
        let out = feed(&mut s, &["```python\n", "print('hi')\n", "```\n"]);
        assert!(!out.contains('\x1b'), "{out:?}");
    }
}
