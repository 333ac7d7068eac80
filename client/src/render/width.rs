//! How wide text is on a terminal, in columns — a CJK character or most emoji take two, a
//! combining mark none — and cutting it to fit ([`fit`]). Every line the client cuts to the
//! terminal's width or to a column budget goes through here, so a line of wide characters
//! never wraps where a count of characters said it would fit.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The columns `s` takes on a terminal.
pub fn columns(s: &str) -> usize {
    s.width()
}

/// `s` cut to at most `room` columns; when it had to be cut, it ends with `…` (inside the
/// room).
pub fn fit(s: &str, room: usize) -> String {
    if columns(s) <= room {
        return s.to_string();
    }
    let budget = room.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > budget {
            break;
        }
        used += w;
        out.push(c);
    }
    if room > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_count_twice_and_a_cut_line_keeps_within_its_room() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("日本語"), 6);
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdefg", 6), "abcde…");
        // Three wide characters do not fit in 5 columns: two of them and the ellipsis do.
        assert_eq!(fit("日本語", 5), "日本…");
        assert!(columns(&fit("日本語のテキストです", 9)) <= 9);
        assert_eq!(fit("abc", 0), "");
    }
}
