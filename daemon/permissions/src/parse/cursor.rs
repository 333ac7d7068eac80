//! The cursor under [`super::parse`]: the command's characters, the position, the nesting
//! depth and what has been found so far ([`Parser::out`]). The reading itself lives in
//! [`super::words`], [`super::expansions`], [`super::redirects`] and [`super::grammar`], each an
//! `impl Parser` block over this state.

use super::redirects::PendingHeredoc;
use super::{MAX_NESTING, Parsed};

/// Total characters of nested strings one command string may make the parser read.
const NESTED_TEXT_BUDGET_CHARS: usize = 1_000_000;

pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) pending: Vec<PendingHeredoc>,
    pub(super) out: Parsed,
    pub(super) aborted: bool,
    /// Characters nested strings (`bash -c`, `eval`, backticks, heredocs) may still add: each
    /// level re-reads its text, so without a budget nesting could cost exponential time.
    budget: usize,
}

/// Characters that end an unquoted word.
pub(super) fn is_delimiter(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\r' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Parser {
    pub(super) fn new(src: &str, depth: usize) -> Self {
        Self {
            chars: src.chars().collect(),
            pos: 0,
            depth,
            pending: Vec::new(),
            out: Parsed::default(),
            aborted: false,
            budget: NESTED_TEXT_BUDGET_CHARS,
        }
    }

    /// A parser for `text` one level below this one, charged to this parser's budget; `None`
    /// (after reporting) when nesting or the budget is exhausted.
    pub(super) fn nested(&mut self, text: &str, start: usize) -> Option<Parser> {
        let cost = text.chars().count();
        if self.depth + 1 > MAX_NESTING {
            self.abort_too_deep(start);
            return None;
        }
        if cost > self.budget {
            let part = self.snippet(start);
            self.opaque(format!("too much nested text to read at `{part}`"));
            self.pos = self.chars.len();
            self.aborted = true;
            return None;
        }
        let mut sub = Parser::new(text, self.depth + 1);
        sub.budget = self.budget - cost;
        Some(sub)
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    pub(super) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    pub(super) fn starts_with(&self, s: &str) -> bool {
        (self.pos..)
            .zip(s.chars())
            .all(|(i, c)| self.chars.get(i) == Some(&c))
    }

    pub(super) fn text(&self, start: usize, end: usize) -> String {
        let end = end.min(self.chars.len());
        self.chars
            .get(start..end)
            .map_or_else(String::new, |s| s.iter().collect())
    }

    /// Up to 40 characters of source from `start`, for messages.
    pub(super) fn snippet(&self, start: usize) -> String {
        let text: String = self.chars.iter().skip(start).take(40).collect();
        let more = self.chars.len() > start + 40;
        format!("{}{}", text.trim_end(), if more { "…" } else { "" })
    }

    pub(super) fn opaque(&mut self, reason: String) {
        self.out.opaque.push(reason);
    }

    /// A command whose program is named by a variable or a substitution (`$c -h` in a loop over
    /// found commands): why it cannot be judged, and what to run instead.
    pub(super) fn unknown_program(&mut self, word: &str) {
        self.opaque(format!(
            "the program name `{word}` is only known at run time; name each program in the line \
             instead: run the command that finds them on its own first (e.g. `tools search \
             memory`), then the ones it lists by name, one after another (e.g. \
             `mcp:memory:<tool> -h`)"
        ));
    }

    /// Stops reading: the rest of the command is too deep to look into.
    pub(super) fn abort_too_deep(&mut self, start: usize) {
        let part = self.snippet(start);
        self.opaque(format!(
            "nesting deeper than {MAX_NESTING} levels at `{part}`"
        ));
        self.pos = self.chars.len();
        self.aborted = true;
    }

    /// The unquoted characters from the cursor up to the next delimiter (for reserved words).
    pub(super) fn peek_raw_word(&self) -> String {
        self.chars
            .iter()
            .skip(self.pos)
            .take_while(|c| !is_delimiter(**c))
            .collect()
    }

    /// Skips spaces, tabs, line continuations and a comment (up to, not over, its newline).
    pub(super) fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// Adds what a nested parser found; its opaque reasons are prefixed with `context`.
    pub(super) fn merge(&mut self, sub: Parser, context: &str) {
        self.budget = sub.budget;
        self.aborted |= sub.aborted;
        self.out.pipelines.extend(sub.out.pipelines);
        self.out.functions.extend(sub.out.functions);
        self.out.opaque.extend(
            sub.out
                .opaque
                .into_iter()
                .map(|r| format!("{context}: {r}")),
        );
    }

    /// Parses `text` (a backtick body, a `bash -c` string) one level deeper.
    pub(super) fn parse_string(&mut self, text: &str, context: &str, start: usize) {
        let Some(mut sub) = self.nested(text, start) else {
            return;
        };
        sub.run();
        self.merge(sub, context);
    }
}
