//! Reading one shell word: quotes, backslash escapes, and the parenthesised groups that stay
//! part of a word (array values, extended globs). Expansions are handed to
//! [`super::expansions`].

use super::cursor::{Parser, is_delimiter};

/// One shell word as read from the source.
#[derive(Debug, Default, Clone)]
pub(super) struct Word {
    /// The source text of the word.
    pub raw: String,
    /// After quote removal (the raw text when the word holds a substitution).
    pub value: String,
    /// Some part was quoted or escaped.
    pub quoted: bool,
    /// Holds a `$` expansion or a substitution: its value is only known at run time.
    pub dynamic: bool,
    /// Holds `$( )`, backticks or `<( )`.
    pub subst: bool,
}

impl Parser {
    /// Reads one word; `None` when the cursor is at a delimiter or the end.
    pub(super) fn read_word(&mut self) -> Option<Word> {
        let start = self.pos;
        let mut w = Word::default();
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') => self.process_subst(&mut w),
                '(' if is_array_assignment(&w) => self.balanced_group(&mut w),
                '@' | '!' | '+' | '*' | '?' if self.peek_at(1) == Some('(') => {
                    self.bump();
                    w.value.push(c);
                    self.balanced_group(&mut w);
                }
                c if is_delimiter(c) => break,
                '\'' => self.single_quoted(&mut w),
                '"' => {
                    self.bump();
                    w.quoted = true;
                    self.read_dquoted(&mut w, Some('"'), false);
                }
                '\\' => {
                    self.bump();
                    match self.bump() {
                        Some('\n') => {}
                        Some(n) => {
                            w.quoted = true;
                            w.value.push(n);
                        }
                        None => w.value.push('\\'),
                    }
                }
                '$' => self.dollar(&mut w, false),
                '`' => self.backtick(&mut w),
                _ => {
                    self.bump();
                    w.value.push(c);
                }
            }
            if self.aborted {
                break;
            }
        }
        if self.pos == start {
            return None;
        }
        w.raw = self.text(start, self.pos);
        if w.subst {
            w.value = w.raw.clone();
        }
        Some(w)
    }

    pub(super) fn single_quoted(&mut self, w: &mut Word) {
        let start = self.pos;
        self.bump();
        w.quoted = true;
        loop {
            match self.bump() {
                Some('\'') => return,
                Some(c) => w.value.push(c),
                None => {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated single quote at `{part}`"));
                    return;
                }
            }
        }
    }

    /// Reads double-quoted text up to `end` (`None`: to the end, for heredoc bodies, where `"`
    /// is an ordinary character).
    pub(super) fn read_dquoted(&mut self, w: &mut Word, end: Option<char>, heredoc: bool) {
        let start = self.pos.saturating_sub(1);
        loop {
            if self.aborted {
                return;
            }
            let Some(c) = self.peek() else {
                if end.is_some() {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated double quote at `{part}`"));
                }
                return;
            };
            if Some(c) == end {
                self.bump();
                return;
            }
            match c {
                '\\' => {
                    self.bump();
                    match self.peek() {
                        Some(n @ ('$' | '`' | '\\')) => {
                            self.bump();
                            w.value.push(n);
                        }
                        Some('"') if !heredoc => {
                            self.bump();
                            w.value.push('"');
                        }
                        Some('\n') => {
                            self.bump();
                        }
                        _ => w.value.push('\\'),
                    }
                }
                '$' => self.dollar(w, true),
                '`' => self.backtick(w),
                _ => {
                    self.bump();
                    w.value.push(c);
                }
            }
        }
    }

    /// A parenthesised group kept as part of a word (array assignment, extended glob).
    pub(super) fn balanced_group(&mut self, w: &mut Word) {
        let start = self.pos;
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.bump() {
            w.value.push(c);
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => {
                    if let Some(n) = self.bump() {
                        w.value.push(n);
                    }
                }
                (None, '$') => w.dynamic = true,
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
        let part = self.snippet(start);
        self.opaque(format!("unterminated `(` at `{part}`"));
    }
}

/// `name=` so far and unquoted: the `(` that follows opens an array value.
fn is_array_assignment(w: &Word) -> bool {
    w.value.ends_with('=') && !w.quoted && is_assignment(&w.value)
}

/// `NAME=…`, `NAME+=…`, `NAME[i]=…` with an unquoted valid name.
pub(super) fn is_assignment(raw: &str) -> bool {
    let Some(eq) = raw.find('=') else {
        return false;
    };
    let name = raw[..eq].strip_suffix('+').unwrap_or(&raw[..eq]);
    let name = match name.find('[') {
        Some(b) if name.ends_with(']') => &name[..b],
        _ => name,
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
