//! Lists, pipelines and commands: the structure above words. Only the simple commands matter
//! to the permission check, so compound commands are read flatly: reserved words such as `if`,
//! `then`, `do`, `{` are skipped at command position; `for` and `select` lists, `case` arms
//! and `[[ ]]` expressions are handed to [`super::compound`]. Subshells `( )` nest through
//! [`Stop::Paren`].

use super::cursor::Parser;
use super::words::{Word, is_assignment};
use super::{MAX_NESTING, Pipeline, SimpleCommand};

/// Where a list ends besides the end of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Eof,
    /// At an unmatched `)` (left for the caller).
    Paren,
    /// At `;;`, `;&`, `;;&` or `esac` (left for the caller).
    CaseArm,
}

/// Words that are not program names at command position.
const PREFIX_WORDS: [&str; 9] = [
    "if", "then", "elif", "else", "do", "while", "until", "!", "{",
];
/// Words that close a compound command (redirects may follow).
const CLOSING_WORDS: [&str; 3] = ["fi", "done", "}"];

impl Parser {
    /// Reads the whole input.
    pub(super) fn run(&mut self) {
        self.parse_list(Stop::Eof);
    }

    pub(super) fn parse_list(&mut self, stop: Stop) {
        while !self.aborted {
            self.skip_blanks();
            let Some(c) = self.peek() else { return };
            match c {
                '\n' => self.newline(),
                ';' if stop == Stop::CaseArm && matches!(self.peek_at(1), Some(';' | '&')) => {
                    return;
                }
                ';' | '&' => {
                    self.bump();
                }
                '|' if self.peek_at(1) == Some('|') => self.pos += 2,
                '|' | ')' => {
                    if c == ')' && stop != Stop::Eof {
                        return;
                    }
                    let part = self.snippet(self.pos);
                    self.opaque(format!("unexpected `{c}` at `{part}`"));
                    self.bump();
                }
                _ => {
                    if stop == Stop::CaseArm && self.peek_raw_word() == "esac" {
                        return;
                    }
                    let before = self.pos;
                    self.parse_pipeline(stop);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
    }

    fn parse_pipeline(&mut self, stop: Stop) {
        let mut commands = Vec::new();
        loop {
            self.parse_command(stop, &mut commands);
            self.skip_blanks();
            if self.peek() == Some('|') && self.peek_at(1) != Some('|') {
                self.bump();
                if self.peek() == Some('&') {
                    self.bump();
                }
                self.skip_blank_lines();
                continue;
            }
            break;
        }
        if !commands.is_empty() {
            self.out.pipelines.push(Pipeline { commands });
        }
    }

    /// Blanks, comments and newlines (after `|`, inside `case` and `[[ ]]`).
    pub(super) fn skip_blank_lines(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() != Some('\n') {
                return;
            }
            self.newline();
        }
    }

    /// One command of a pipeline, appended to `commands` (with any commands it wraps).
    fn parse_command(&mut self, stop: Stop, commands: &mut Vec<SimpleCommand>) {
        while !self.aborted {
            self.skip_blanks();
            let start = self.pos;
            match self.peek() {
                None | Some(')' | ';' | '&' | '|' | '\n') => return,
                Some('(') if self.peek_at(1) == Some('(') => {
                    self.arithmetic(start);
                    return;
                }
                Some('(') => {
                    self.subshell(start);
                    self.trailing_redirects(start, commands);
                    return;
                }
                _ => {}
            }
            let raw = self.peek_raw_word();
            let word = raw.as_str();
            if PREFIX_WORDS.contains(&word) {
                self.consume_raw(word);
                continue;
            }
            match word {
                "time" => {
                    self.consume_raw(word);
                    self.skip_blanks();
                    if self.peek_raw_word() == "-p" {
                        self.consume_raw("-p");
                    }
                }
                "coproc" => {
                    // `coproc NAME { …; }` names the coprocess; `coproc cmd args` does not.
                    self.consume_raw(word);
                    self.skip_blanks();
                    let name = self.peek_raw_word();
                    let after = self.pos + name.chars().count();
                    let rest = self.text(after, after + 3);
                    if !name.is_empty()
                        && matches!(rest.trim_start().chars().next(), Some('{' | '('))
                    {
                        self.consume_raw(&name);
                    }
                }
                "function" => {
                    self.consume_raw(word);
                    self.skip_blanks();
                    if let Some(name) = self.read_word() {
                        self.out.functions.push(name.value);
                    }
                    self.skip_blanks();
                    self.empty_parens();
                }
                _ if CLOSING_WORDS.contains(&word) || (word == "esac" && stop != Stop::CaseArm) => {
                    self.consume_raw(word);
                    self.trailing_redirects(start, commands);
                    return;
                }
                "esac" => return,
                "for" | "select" => {
                    self.consume_raw(word);
                    self.for_clause();
                    return;
                }
                "case" => {
                    self.consume_raw(word);
                    self.case_clause(start);
                    self.trailing_redirects(start, commands);
                    return;
                }
                "[[" => {
                    self.consume_raw(word);
                    self.cond_clause(start);
                    return;
                }
                _ => {
                    self.simple_command(commands);
                    return;
                }
            }
        }
    }

    pub(super) fn consume_raw(&mut self, word: &str) {
        self.pos += word.chars().count();
    }

    /// `(` list `)`, one level deeper.
    fn subshell(&mut self, start: usize) {
        if self.depth + 1 > MAX_NESTING {
            self.abort_too_deep(start);
            return;
        }
        self.bump();
        self.depth += 1;
        self.parse_list(Stop::Paren);
        self.depth -= 1;
        if self.peek() == Some(')') {
            self.bump();
        } else if !self.aborted {
            let part = self.snippet(start);
            self.opaque(format!("unterminated subshell at `{part}`"));
        }
    }

    /// `()` after a function name.
    fn empty_parens(&mut self) {
        if self.peek() == Some('(') {
            self.bump();
            self.skip_blanks();
            if self.peek() == Some(')') {
                self.bump();
            }
        }
    }

    /// Redirects after `)`, `}`, `done`, `fi`, `esac`: they apply to the whole compound command,
    /// recorded as a command without words.
    fn trailing_redirects(&mut self, start: usize, commands: &mut Vec<SimpleCommand>) {
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            if !self.at_redirect() {
                break;
            }
            match self.read_redirect() {
                Some(r) => redirects.push(r),
                None => break,
            }
        }
        if !redirects.is_empty() {
            commands.push(SimpleCommand {
                words: Vec::new(),
                assignments: Vec::new(),
                redirects,
                text: self.text(start, self.pos).trim().to_string(),
            });
        }
    }

    fn simple_command(&mut self, commands: &mut Vec<SimpleCommand>) {
        let start = self.pos;
        let mut end = start;
        let mut words: Vec<Word> = Vec::new();
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        while !self.aborted {
            self.skip_blanks();
            match self.peek() {
                None | Some(';' | '|' | '\n' | ')') => break,
                Some('&') if self.peek_at(1) != Some('>') => break,
                Some('(') => {
                    if words.len() == 1 && assignments.is_empty() && redirects.is_empty() {
                        // `name() { …; }`: a function definition; its body is read next.
                        if let Some(name) = words.first() {
                            self.out.functions.push(name.value.clone());
                        }
                        self.empty_parens();
                        return;
                    }
                    let part = self.snippet(self.pos);
                    self.opaque(format!("unexpected `(` at `{part}`"));
                    break;
                }
                _ if self.at_redirect() => {
                    if let Some(r) = self.read_redirect() {
                        redirects.push(r);
                    }
                }
                _ => match self.read_word() {
                    Some(w) if words.is_empty() && is_assignment(&w.raw) => {
                        assignments.push(w.value);
                    }
                    Some(w) => words.push(w),
                    None => break,
                },
            }
            end = self.pos;
        }
        if words.is_empty() && assignments.is_empty() && redirects.is_empty() {
            return;
        }
        if let Some(first) = words.first().filter(|w| w.dynamic) {
            let raw = first.raw.clone();
            self.unknown_program(&raw);
        }
        let cmd = SimpleCommand {
            words: words.into_iter().map(|w| w.value).collect(),
            assignments,
            redirects,
            text: self.text(start, end).trim().to_string(),
        };
        let wrapped = self.expand_wrappers(&cmd, 0);
        commands.push(cmd);
        commands.extend(wrapped);
    }
}
