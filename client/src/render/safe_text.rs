//! Text from commands and the model made safe to print on the user's terminal: every terminal
//! control sequence (CSI such as colours and screen clears, OSC such as clipboard writes and
//! titles, DCS/APC/PM strings, other escapes) and every C0/C1 control character except newline
//! and tab is removed. A lone carriage return, which could overwrite a printed line to spoof a
//! transcript, becomes a newline. The client's own colours are added after this, so they stay.

/// `text` without terminal control sequences.
pub fn strip_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\u{1b}' => skip_escape(&mut chars),
            // CSI, OSC, DCS… as single C1 characters.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{9e}' | '\u{9f}' | '\u{98}' => skip_string(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | '_' | '^' | 'X') => skip_string(chars),
        // Two- and three-character escapes (ESC ( B, ESC # 8, ESC c…).
        Some('(' | ')' | '*' | '+' | '#' | '%' | ' ') => {
            chars.next();
        }
        _ => {}
    }
}

/// Parameters and intermediates up to the final byte `@`–`~`.
fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            return;
        }
    }
}

/// A string ended by BEL or ST (`ESC \` or U+009C).
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_removed_and_text_kept() {
        assert_eq!(strip_controls("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(
            strip_controls("x\u{1b}]52;c;ZXZpbA==\u{7}y"),
            "xy",
            "clipboard write"
        );
        assert_eq!(
            strip_controls("\u{1b}[2J\u{1b}[Hclear"),
            "clear",
            "screen clear"
        );
        assert_eq!(strip_controls("t\u{1b}]0;title\u{1b}\\u"), "tu");
        assert_eq!(strip_controls("ok\rfake line\n"), "ok\nfake line\n");
        assert_eq!(strip_controls("a\r\nb\tc\u{7}\u{8}"), "a\nb\tc");
        assert_eq!(strip_controls("café ✓"), "café ✓");
    }
}
