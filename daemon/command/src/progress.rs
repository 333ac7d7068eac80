//! The live tail of a running command: while a native command runs, its session shell reports
//! the last lines it printed to a [`ProgressSink`] at most every [`PROGRESS_INTERVAL`], and only
//! when something new was printed. The chat session turns them into `ToolOutput` events, so
//! the user sees a long build progress instead of a bare spinner.

use std::sync::Arc;
use std::time::Duration;

/// How often a running command's tail is reported.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);
/// Lines in one report.
pub const PROGRESS_LINES: usize = 5;
/// Characters kept of one reported line.
const PROGRESS_LINE_CHARS: usize = 300;

/// Receives `(tail, total_bytes)` of the running command.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(String, u64) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `f` with the output's last lines and the bytes seen so far.
    pub fn new(f: impl Fn(String, u64) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Reports the latest `tail` of the output and its size so far.
    pub fn report(&self, tail: String, total_bytes: u64) {
        (self.0)(tail, total_bytes);
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The last [`PROGRESS_LINES`] complete-or-partial lines of `text`, each cut to a bounded width.
pub fn tail_lines(text: &str) -> String {
    let trimmed = text.trim_end_matches('\n');
    let lines: Vec<&str> = trimmed.rsplit('\n').take(PROGRESS_LINES).collect();
    lines
        .into_iter()
        .rev()
        .map(|l| {
            // A carriage return redraws the line in a terminal: show what it would show last.
            let shown = l.rsplit('\r').find(|s| !s.is_empty()).unwrap_or("");
            shown.chars().take(PROGRESS_LINE_CHARS).collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_as_a_terminal_shows_them() {
        let text: String = (0..20).map(|i| format!("line {i}\n")).collect();
        assert_eq!(
            tail_lines(&text),
            "line 15\nline 16\nline 17\nline 18\nline 19"
        );
        assert_eq!(tail_lines("10%\r50%\r"), "50%");
        assert_eq!(tail_lines("partial"), "partial");
        assert_eq!(tail_lines(&"x".repeat(1000)).len(), PROGRESS_LINE_CHARS);
    }
}
