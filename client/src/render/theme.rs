//! Colours for the REPL, decided once: on when stdout is a terminal and `NO_COLOR` is unset or
//! empty (no-color.org), off otherwise. Every styled string goes through a [`Theme`], so a
//! plain rendering is the same text without escape sequences.

use std::io::IsTerminal;

use owo_colors::OwoColorize;

/// How to style output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Emit ANSI colours and attributes.
    pub color: bool,
    /// stdout is a terminal: Markdown is rendered, the spinner is drawn.
    pub terminal: bool,
}

impl Theme {
    /// The theme for this process's stdout and environment.
    pub fn detect() -> Self {
        let terminal = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: terminal && !no_color,
            terminal,
        }
    }

    /// No colours, no terminal features (tests and pipes).
    pub fn plain() -> Self {
        Self {
            color: false,
            terminal: false,
        }
    }

    pub fn dim(&self, s: &str) -> String {
        self.paint(s, |s| s.dimmed().to_string())
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint(s, |s| s.bold().to_string())
    }
    pub fn red(&self, s: &str) -> String {
        self.paint(s, |s| s.red().to_string())
    }
    pub fn green(&self, s: &str) -> String {
        self.paint(s, |s| s.green().to_string())
    }
    pub fn yellow(&self, s: &str) -> String {
        self.paint(s, |s| s.yellow().to_string())
    }
    pub fn cyan(&self, s: &str) -> String {
        self.paint(s, |s| s.cyan().to_string())
    }

    fn paint(&self, s: &str, style: impl Fn(&str) -> String) -> String {
        if self.color { style(s) } else { s.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_theme_adds_no_escapes() {
        let t = Theme::plain();
        assert_eq!(t.red("x") + &t.dim("y") + &t.bold("z"), "xyz");
    }

    #[test]
    fn colour_theme_wraps_in_escapes() {
        let t = Theme {
            color: true,
            terminal: true,
        };
        let red = t.red("x");
        assert!(red.starts_with("\x1b[") && red.contains('x'), "{red:?}");
    }
}
