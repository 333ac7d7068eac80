//! Expansions inside a word: `$name`, `${…}`, `$( )`, `$(( ))`, `$'…'`, backticks and
//! process substitutions. Command substitutions are parsed on the spot, so the commands inside
//! them land in the output before the word that holds them.

use super::MAX_NESTING;
use super::cursor::Parser;
use super::words::Word;

impl Parser {
    /// `$name`, `${…}`, `$(…)`, `$((…))`, `$'…'`, `$"…"`, or a literal `$`.
    pub(super) fn dollar(&mut self, w: &mut Word, in_dquotes: bool) {
        let start = self.pos;
        self.bump();
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                w.dynamic = true;
                self.arithmetic(start);
                w.value.push_str(&self.text(start, self.pos));
            }
            Some('(') => {
                self.bump();
                w.dynamic = true;
                w.subst = true;
                self.command_subst(start);
            }
            Some('{') => {
                w.dynamic = true;
                self.parameter(w, start);
            }
            Some('\'') if !in_dquotes => {
                w.quoted = true;
                self.ansi_c_quoted(w, start);
            }
            Some('"') if !in_dquotes => {
                self.bump();
                w.quoted = true;
                self.read_dquoted(w, Some('"'), false);
            }
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                w.dynamic = true;
                w.value.push('$');
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    self.bump();
                    w.value.push(c);
                }
            }
            Some(c @ ('@' | '*' | '#' | '?' | '$' | '!' | '-')) => {
                self.bump();
                w.dynamic = true;
                w.value.push('$');
                w.value.push(c);
            }
            _ => w.value.push('$'),
        }
    }

    /// After `$(`, `<(` or `>(`: the commands up to the matching `)`.
    pub(super) fn command_subst(&mut self, start: usize) {
        if self.depth + 1 > MAX_NESTING {
            self.abort_too_deep(start);
            return;
        }
        self.depth += 1;
        self.parse_list(super::grammar::Stop::Paren);
        self.depth -= 1;
        if self.peek() == Some(')') {
            self.bump();
        } else if !self.aborted {
            let part = self.snippet(start);
            self.opaque(format!("unterminated command substitution at `{part}`"));
        }
    }

    pub(super) fn process_subst(&mut self, w: &mut Word) {
        let start = self.pos;
        self.pos += 2;
        w.dynamic = true;
        w.subst = true;
        self.command_subst(start);
    }

    /// `$((…))` or `((…))`: skipped; a substitution inside is reported rather than followed.
    pub(super) fn arithmetic(&mut self, start: usize) {
        let mut depth = 0usize;
        while let Some(c) = self.bump() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        let text = self.text(start, self.pos);
        let inner = text.trim_start_matches('$').trim_start_matches("((");
        if depth > 0 {
            let part = self.snippet(start);
            self.opaque(format!("unterminated arithmetic at `{part}`"));
        } else if inner.contains("$(") || inner.contains('`') {
            self.opaque(format!("command substitution inside arithmetic `{text}`"));
        }
    }

    /// `${…}`: skipped to the matching brace; substitutions in defaults are still followed.
    pub(super) fn parameter(&mut self, w: &mut Word, start: usize) {
        if self.depth + 1 > MAX_NESTING {
            self.abort_too_deep(start);
            return;
        }
        self.depth += 1;
        self.bump();
        let mut braces = 1usize;
        let mut inner = Word::default();
        while braces > 0 && !self.aborted {
            match self.peek() {
                None => {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated `${{` at `{part}`"));
                    break;
                }
                Some('\\') => {
                    self.pos = (self.pos + 2).min(self.chars.len());
                }
                Some('\'') => self.single_quoted(&mut inner),
                Some('"') => {
                    self.bump();
                    self.read_dquoted(&mut inner, Some('"'), false);
                }
                Some('$') => self.dollar(&mut inner, false),
                Some('`') => self.backtick(&mut inner),
                Some(c) => {
                    self.bump();
                    match c {
                        '{' => braces += 1,
                        '}' => braces -= 1,
                        _ => {}
                    }
                }
            }
        }
        self.depth -= 1;
        w.subst |= inner.subst;
        w.value.push_str(&self.text(start, self.pos));
    }

    pub(super) fn ansi_c_quoted(&mut self, w: &mut Word, start: usize) {
        self.bump();
        let mut raw = String::new();
        loop {
            match self.bump() {
                Some('\'') => break,
                Some('\\') => {
                    raw.push('\\');
                    if let Some(n) = self.bump() {
                        raw.push(n);
                    }
                }
                Some(c) => raw.push(c),
                None => {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated `$'` quote at `{part}`"));
                    break;
                }
            }
        }
        w.value.push_str(&decode_ansi_c(&raw));
    }

    /// A backtick substitution: its inner text (with `\``, `\\`, `\$` unescaped) is parsed as
    /// its own command string.
    pub(super) fn backtick(&mut self, w: &mut Word) {
        let start = self.pos;
        self.bump();
        w.dynamic = true;
        w.subst = true;
        let mut inner = String::new();
        loop {
            match self.bump() {
                Some('`') => break,
                Some('\\') => match self.bump() {
                    Some(n @ ('`' | '\\' | '$')) => inner.push(n),
                    Some(n) => {
                        inner.push('\\');
                        inner.push(n);
                    }
                    None => inner.push('\\'),
                },
                Some(c) => inner.push(c),
                None => {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated backtick at `{part}`"));
                    break;
                }
            }
        }
        self.parse_string(&inner, "in backticks", start);
    }
}

/// The value of a `$'…'` string body (`\n`, `\t`, `\xHH`, `\NNN`, `\uXXXX`, …).
fn decode_ansi_c(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let mut digits = if radix == 8 {
            e.to_string()
        } else {
            String::new()
        };
        while digits.len() < max + usize::from(radix == 8) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(e);
                out.push_str(if radix == 8 { &digits[1..] } else { &digits });
            }
        }
    }
    out
}
