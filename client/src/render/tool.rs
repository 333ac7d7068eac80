//! A finished tool call as the REPL shows it: the `● command` line (with `[exit N]` when it
//! failed) and the first lines of its output, dimmed and indented under it, or for a successful
//! `edit`/`write` the diff it made ([`super::diff`]). Numbered calls say how to see the rest
//! (`/expand N`). On a terminal every line is cut to its width (a wrapped line reads as two).

use synapse_session::ToolDone;

use super::events::tool_line;
use super::theme::Theme;

/// Output lines shown under a tool call.
pub const PREVIEW_LINES: usize = 3;
/// Characters of one preview line before it is cut.
const PREVIEW_LINE_CHARS: usize = 160;

/// The block for one finished call, ending with a newline.
pub fn tool_block(theme: &Theme, call: &ToolDone) -> String {
    tool_block_numbered(theme, call, 0)
}

/// The block for call number `index` (0: unnumbered).
pub fn tool_block_numbered(theme: &Theme, call: &ToolDone, index: usize) -> String {
    // On a terminal no line is wider than it: a wrapped line would look like several.
    let width = if theme.terminal {
        super::live_tail::terminal_width().max(30)
    } else {
        usize::MAX
    };
    let line = fit_command(&tool_line(&call.command, call.exit_code), width - 1);
    let (bullet, rest) = line.split_at(line.find(' ').unwrap_or(0));
    let bullet = if call.exit_code == 0 {
        theme.green(bullet)
    } else {
        theme.red(bullet)
    };
    let mut out = format!("{bullet}{}\n", theme.bold(rest));
    if call.exit_code == 0 && !call.changes.is_empty() {
        for change in &call.changes {
            out.push_str(&super::diff::diff_block(theme, change, width));
        }
        return out;
    }
    let lines: Vec<&str> = call
        .output_preview
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(PREVIEW_LINES)
        .collect();
    let room = PREVIEW_LINE_CHARS.min(width.saturating_sub(7));
    for (i, l) in lines.iter().enumerate() {
        let lead = if i == 0 { "  ⎿  " } else { "     " };
        out.push_str(&theme.dim(&format!("{lead}{}", cut(l, room))));
        out.push('\n');
    }
    let total = call.output_lines as usize;
    let shown = lines.len();
    if total > shown && shown > 0 {
        let more = total - shown;
        let noun = if more == 1 { "line" } else { "lines" };
        let hint = if index > 0 && !call.output.is_empty() {
            format!(" (/expand {index})")
        } else {
            String::new()
        };
        out.push_str(&theme.dim(&format!("     … +{more} {noun}{hint}")));
        out.push('\n');
    }
    out
}

/// A preview line without control characters, cut to `room` columns.
fn cut(line: &str, room: usize) -> String {
    let line = super::safe_text::strip_controls(line).replace('\t', "    ");
    super::width::fit(&line, room)
}

/// The `● command [exit N]` line cut to `width` columns, keeping its `[exit N]`.
fn fit_command(line: &str, width: usize) -> String {
    use super::width::{columns, fit};
    if columns(line) <= width {
        return line.to_string();
    }
    let (head, tail) = match line.rfind(" [exit ") {
        Some(i) if line.ends_with(']') => line.split_at(i),
        _ => (line, ""),
    };
    let mut s = fit(head, width.saturating_sub(columns(tail)));
    s.push_str(tail);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(command: &str, exit_code: i32, preview: &str, lines: u32) -> ToolDone {
        ToolDone {
            id: "c1".into(),
            command: command.into(),
            exit_code,
            output_preview: preview.into(),
            output_lines: lines,
            output: preview.into(),
            changes: Vec::new(),
        }
    }

    #[test]
    fn success_with_long_output() {
        let out = tool_block(
            &Theme::plain(),
            &call("read src/main.rs", 0, "1\tfn main() {\n2\t}\n3\n4\n5", 40),
        );
        insta::assert_snapshot!(out);
    }

    #[test]
    fn failure_shows_exit_code() {
        let out = tool_block(
            &Theme::plain(),
            &call("cat nope", 1, "cat: nope: No such file", 1),
        );
        assert_eq!(out, "● cat nope [exit 1]\n  ⎿  cat: nope: No such file\n");
    }

    #[test]
    fn long_lines_are_cut_to_fit_keeping_the_exit_code() {
        assert_eq!(
            fit_command("● echo abcdef [exit 2]", 16),
            "● echo… [exit 2]"
        );
        assert_eq!(fit_command("● echo abcdef", 10), "● echo ab…");
        assert_eq!(fit_command("● ls", 10), "● ls");
        assert_eq!(cut(&"x".repeat(50), 10), format!("{}…", "x".repeat(9)));
        // Wide characters take two columns: the line still fits its width.
        let wide = fit_command("● echo 日本語のテキスト [exit 1]", 20);
        assert_eq!(wide, "● echo 日… [exit 1]");
        assert!(crate::render::width::columns(&wide) <= 20);
    }

    #[test]
    fn no_output_is_one_line() {
        let out = tool_block(&Theme::plain(), &call("true", 0, "", 0));
        assert_eq!(out, "● true\n");
    }
}
