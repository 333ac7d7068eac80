//! Redirects (`>`, `>>`, `2>&1`, `<<EOF`, …) and heredoc bodies, which are read when the line
//! that opened them ends.

use super::cursor::Parser;
use super::words::Word;
use super::{Redirect, RedirectOp};

pub(super) struct PendingHeredoc {
    pub(super) delimiter: String,
    pub(super) quoted: bool,
    pub(super) strip_tabs: bool,
}

impl Parser {
    /// Consumes a newline; heredocs opened on the line just ended take their bodies now.
    pub(super) fn newline(&mut self) {
        self.bump();
        for doc in std::mem::take(&mut self.pending) {
            let body = self.heredoc_body(&doc);
            if !doc.quoted {
                self.parse_heredoc_body(&body);
            }
        }
    }

    pub(super) fn heredoc_body(&mut self, doc: &PendingHeredoc) -> String {
        let mut body = String::new();
        while self.peek().is_some() {
            let line: String = self
                .chars
                .iter()
                .skip(self.pos)
                .take_while(|c| **c != '\n')
                .collect();
            self.pos += line.chars().count() + 1;
            let compared = if doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line.as_str()
            };
            if compared == doc.delimiter {
                break;
            }
            body.push_str(&line);
            body.push('\n');
        }
        self.pos = self.pos.min(self.chars.len());
        body
    }

    /// An unquoted heredoc body expands like a double-quoted string: look for substitutions.
    pub(super) fn parse_heredoc_body(&mut self, body: &str) {
        let Some(mut sub) = self.nested(body, self.pos) else {
            return;
        };
        let mut scratch = Word::default();
        sub.read_dquoted(&mut scratch, None, true);
        self.merge(sub, "in a heredoc");
    }

    /// Length of a file-descriptor number directly followed by `<` or `>` at the cursor.
    pub(super) fn fd_prefix_len(&self) -> Option<usize> {
        let digits = self
            .chars
            .iter()
            .skip(self.pos)
            .take_while(|c| c.is_ascii_digit())
            .count();
        let next = self.peek_at(digits);
        (digits > 0 && matches!(next, Some('<' | '>'))).then_some(digits)
    }

    /// Whether a redirect operator (with or without a descriptor number) starts here.
    pub(super) fn at_redirect(&self) -> bool {
        match self.peek() {
            Some('<' | '>') => self.peek_at(1) != Some('('),
            Some('&') => self.peek_at(1) == Some('>'),
            Some(c) if c.is_ascii_digit() => self.fd_prefix_len().is_some(),
            _ => false,
        }
    }

    /// Reads a redirect at the cursor ([`Self::at_redirect`] was true).
    pub(super) fn read_redirect(&mut self) -> Option<Redirect> {
        let start = self.pos;
        let digits = self.fd_prefix_len().unwrap_or(0);
        let fd = (digits > 0)
            .then(|| self.text(self.pos, self.pos + digits).parse::<u32>().ok())
            .flatten();
        self.pos += digits;
        const OPS: [(&str, RedirectOp); 12] = [
            ("&>>", RedirectOp::Append),
            ("&>", RedirectOp::Write),
            ("<<<", RedirectOp::HereString),
            ("<<-", RedirectOp::HereDoc),
            ("<<", RedirectOp::HereDoc),
            ("<&", RedirectOp::Dup),
            ("<>", RedirectOp::ReadWrite),
            ("<", RedirectOp::Read),
            (">>", RedirectOp::Append),
            (">|", RedirectOp::Write),
            (">&", RedirectOp::Dup),
            (">", RedirectOp::Write),
        ];
        let (token, mut op) = OPS.iter().copied().find(|(t, _)| self.starts_with(t))?;
        self.pos += token.chars().count();
        self.skip_blanks();
        let Some(target) = self.read_word() else {
            let part = self.snippet(start);
            self.opaque(format!("redirect without a target at `{part}`"));
            return None;
        };
        if token == ">&" && !is_descriptor(&target.value) {
            op = RedirectOp::Write;
        }
        if op == RedirectOp::HereDoc {
            self.pending.push(PendingHeredoc {
                delimiter: target.value.clone(),
                quoted: target.quoted,
                strip_tabs: token == "<<-",
            });
        }
        Some(Redirect {
            fd,
            op,
            target: target.value,
        })
    }
}

/// `1`, `-`, `3-`: what may follow `>&` without naming a file.
fn is_descriptor(target: &str) -> bool {
    let digits = target.strip_suffix('-').unwrap_or(target);
    digits.is_empty() || digits.chars().all(|c| c.is_ascii_digit())
}
