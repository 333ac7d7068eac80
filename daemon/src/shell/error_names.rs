//! Bash's own error messages as the model expects them. The session shell runs each line by
//! sourcing it from a file descriptor (`. /dev/fd/7`, see [`super::process`]), so bash names
//! that "file" in its errors: `/dev/fd/7: line 1: foo: command not found`,
//! `/dev/fd/7: eval: line 1: syntax error …`. [`ErrorNames`] rewrites both prefixes to
//! `bash: line N: ` — what `bash -c` prints — on the output stream, across chunk boundaries,
//! holding back at most one possible prefix until the bytes after it arrive.

/// What bash puts before an error raised in the sourced line.
const SOURCED: &[u8] = b"/dev/fd/7: ";
/// What follows [`SOURCED`] for a syntax error (bash names the `eval`).
const EVAL: &[u8] = b"eval: ";
const LINE: &[u8] = b"line ";
/// What the prefix becomes.
const SHOWN: &[u8] = b"bash: line ";
/// Digits of a line number looked at (longer runs are left as they are).
const LINE_DIGITS_MAX: usize = 9;

/// Rewrites bash's error prefixes in one shell's output stream.
#[derive(Debug, Default)]
pub struct ErrorNames {
    held: Vec<u8>,
}

/// How the bytes at one position compare with a prefix.
enum Found {
    /// The whole prefix: its length and where the line number's digits are.
    Prefix {
        len: usize,
        digits: std::ops::Range<usize>,
    },
    /// These bytes could still become a prefix: wait for more.
    Maybe,
    No,
}

impl ErrorNames {
    /// Passes `bytes` on to `out`, rewritten; may hold back a possible prefix at the end.
    pub fn feed(&mut self, bytes: &[u8], out: &mut impl FnMut(&[u8])) {
        if self.held.is_empty() && !bytes.contains(&b'/') {
            out(bytes);
            return;
        }
        let mut text = std::mem::take(&mut self.held);
        text.extend_from_slice(bytes);
        let mut done = 0;
        let mut i = 0;
        while let Some(offset) = text[i..].iter().position(|&b| b == b'/') {
            let at = i + offset;
            match found_at(&text[at..]) {
                Found::Prefix { len, digits } => {
                    out(&text[done..at]);
                    out(SHOWN);
                    out(&text[at + digits.start..at + digits.end]);
                    out(b": ");
                    i = at + len;
                    done = i;
                }
                Found::Maybe => {
                    out(&text[done..at]);
                    self.held = text[at..].to_vec();
                    return;
                }
                Found::No => i = at + 1,
            }
        }
        out(&text[done..]);
    }

    /// Passes on whatever is held back (the command finished).
    pub fn flush(&mut self, out: &mut impl FnMut(&[u8])) {
        if !self.held.is_empty() {
            out(&std::mem::take(&mut self.held));
        }
    }
}

/// Whether `s` starts with `/dev/fd/7: [eval: ]line <digits>: `.
fn found_at(s: &[u8]) -> Found {
    let mut at = 0;
    let part = |want: &[u8], at: &mut usize| -> Option<bool> {
        let have = &s[*at..];
        let n = have.len().min(want.len());
        if have[..n] != want[..n] {
            return Some(false);
        }
        if n < want.len() {
            return None;
        }
        *at += want.len();
        Some(true)
    };
    match part(SOURCED, &mut at) {
        Some(true) => {}
        Some(false) => return Found::No,
        None => return Found::Maybe,
    }
    // `eval: ` or straight `line `: both start differently, so try `eval: ` first.
    let before_eval = at;
    match part(EVAL, &mut at) {
        Some(true) => {}
        Some(false) => at = before_eval,
        None => return Found::Maybe,
    }
    match part(LINE, &mut at) {
        Some(true) => {}
        Some(false) => return Found::No,
        None => return Found::Maybe,
    }
    let start = at;
    while at < s.len() && s[at].is_ascii_digit() && at - start < LINE_DIGITS_MAX {
        at += 1;
    }
    let end = at;
    if at == s.len() {
        return if end - start < LINE_DIGITS_MAX {
            Found::Maybe
        } else {
            Found::No
        };
    }
    if end == start {
        return Found::No;
    }
    match part(b": ", &mut at) {
        Some(true) => Found::Prefix {
            len: at,
            digits: start..end,
        },
        Some(false) => Found::No,
        None => Found::Maybe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(stream: &[u8], chunk: usize) -> String {
        let mut names = ErrorNames::default();
        let mut out = Vec::new();
        for piece in stream.chunks(chunk) {
            names.feed(piece, &mut |b: &[u8]| out.extend_from_slice(b));
        }
        names.flush(&mut |b: &[u8]| out.extend_from_slice(b));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bash_s_prefixes_read_as_bash_at_any_chunk_size() {
        let stream = "a\n/dev/fd/7: line 1: foo: command not found\n\
                      x/dev/fd/7: eval: line 12: syntax error near unexpected token `)'\n\
                      /dev/fd/7: line 3: cd: /nope: No such file or directory\n";
        let want = "a\nbash: line 1: foo: command not found\n\
                    xbash: line 12: syntax error near unexpected token `)'\n\
                    bash: line 3: cd: /nope: No such file or directory\n";
        for chunk in 1..stream.len() {
            assert_eq!(rewrite(stream.as_bytes(), chunk), want, "chunk {chunk}");
        }
    }

    #[test]
    fn other_text_passes_unchanged_even_when_it_looks_close() {
        for text in [
            "/dev/fd/7 is a pipe\n",
            "/dev/fd/7: line x: not a number\n",
            "/dev/fd/8: line 1: another fd\n",
            "path /usr/bin/env and /dev/fd/7: lin",
            "/dev/fd/7: line 1",
            "cat /dev/fd/7: eval: nothing\n",
            "ünïcödé / ✓\n",
        ] {
            for chunk in 1..=text.len() {
                assert_eq!(
                    rewrite(text.as_bytes(), chunk),
                    text,
                    "{text:?} chunk {chunk}"
                );
            }
        }
    }
}
