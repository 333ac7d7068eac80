//! The compound commands whose words are not all commands: `for`/`select` lists, `case`
//! arms and `[[ ]]` expressions. Their words are read only for the substitutions inside; the
//! commands in their bodies are read by [`super::grammar`] like any list.

use super::cursor::Parser;
use super::grammar::Stop;

impl Parser {
    /// `for NAME [in WORDS]` or `for ((…))`: the list words are not commands, but their
    /// substitutions are.
    pub(super) fn for_clause(&mut self) {
        self.skip_blanks();
        if self.starts_with("((") {
            self.arithmetic(self.pos);
            return;
        }
        self.read_word();
        loop {
            self.skip_blanks();
            match self.peek() {
                None | Some(';' | '\n' | '&' | '|' | ')') => return,
                _ if self.peek_raw_word() == "do" => return,
                _ => {
                    if self.read_word().is_none() {
                        return;
                    }
                }
            }
        }
    }

    /// `case WORD in [(]PAT[|PAT]…) LIST ;; … esac`.
    pub(super) fn case_clause(&mut self, start: usize) {
        self.skip_blanks();
        self.read_word();
        self.skip_blank_lines();
        if self.peek_raw_word() != "in" {
            let part = self.snippet(start);
            self.opaque(format!("`case` without `in` at `{part}`"));
            return;
        }
        self.consume_raw("in");
        while !self.aborted {
            self.skip_blank_lines();
            if self.peek_raw_word() == "esac" {
                self.consume_raw("esac");
                return;
            }
            if matches!(self.peek(), None | Some(')')) || !self.case_pattern() {
                let part = self.snippet(start);
                self.opaque(format!("could not read the `case` at `{part}`"));
                return;
            }
            self.parse_list(Stop::CaseArm);
            for end in [";;&", ";;", ";&"] {
                if self.starts_with(end) {
                    self.consume_raw(end);
                    break;
                }
            }
        }
    }

    /// `[(]PAT[|PAT]…)`; false when no closing `)` was found.
    fn case_pattern(&mut self) -> bool {
        if self.peek() == Some('(') {
            self.bump();
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                Some(')') => {
                    self.bump();
                    return true;
                }
                Some('|') => {
                    self.bump();
                }
                None | Some(';' | '&' | '\n' | '<' | '>' | '(') => return false,
                _ => {
                    if self.read_word().is_none() {
                        return false;
                    }
                }
            }
        }
    }

    /// `[[ … ]]`: operators are skipped, words are read for their substitutions.
    pub(super) fn cond_clause(&mut self, start: usize) {
        loop {
            self.skip_blank_lines();
            match self.peek() {
                None | Some(';') => {
                    let part = self.snippet(start);
                    self.opaque(format!("unterminated `[[` at `{part}`"));
                    return;
                }
                Some('&' | '|' | '<' | '>' | '(' | ')') => {
                    self.bump();
                }
                _ if self.peek_raw_word() == "]]" => {
                    self.consume_raw("]]");
                    return;
                }
                _ => {
                    if self.read_word().is_none() {
                        self.bump();
                    }
                }
            }
            if self.aborted {
                return;
            }
        }
    }
}
