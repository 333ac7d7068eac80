//! The shell variables a command line or a session set, as far as where a write lands depends on
//! them: for each name, every value (as written, expanded only when a write is judged) a line
//! may have given it, or the text of a command that set it in a way this check cannot read
//! (`read`, `for`, `printf -v`, an array, `+=`).
//!
//! Values are only ever added. The parser flattens subshells, branches and loops, so a line
//! that ran half-way, `(f=x)` or `false && f=x` can only leave a variable with one more
//! possible value — never with a wrong single one.

use std::collections::BTreeMap;

use super::super::parse::{Parsed, SimpleCommand};

/// How many variables are told apart; past that, any variable may hold anything.
const MAX_NAMES: usize = 512;
/// How many values one variable keeps; past that, it may hold anything.
const MAX_VALUES: usize = 16;
/// Longest value kept as written (longer ones count as unreadable).
const MAX_VALUE_CHARS: usize = 1024;
/// Longest text kept for a variable set in an unreadable way.
const MAX_TEXT_CHARS: usize = 1024;
/// Most text kept for all variables together (the gate copies the state for every check);
/// past that, any variable may hold anything.
const MAX_TOTAL_CHARS: usize = 64 * 1024;

/// Variables whose value the check always knows, whatever was set: every value set is kept
/// beside the one the caller gives ([`super::expand::Scope`]).
const ALWAYS_KNOWN: [&str; 3] = ["HOME", "PWD", "SYNAPSE_HOME"];

/// Builtins whose `NAME=value` arguments assign.
const DECLARERS: [&str; 5] = ["export", "declare", "typeset", "local", "readonly"];

/// Variables and what may be in them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    vars: BTreeMap<String, VarFacts>,
    /// Something set variables whose names cannot be told (`declare -n`, `export "$n=…"`, too
    /// many names): the text that did it.
    any: Option<String>,
    /// Characters kept in values and texts.
    kept: usize,
}

/// What one variable may hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VarFacts {
    /// Values as written (`$SYNAPSE_HOME/settings.json`).
    pub values: Vec<String>,
    /// The text of a command that set it in a way this check cannot read.
    pub unseen: Option<String>,
}

impl Vars {
    /// The variables `parsed` (read from `line`) may set.
    pub(crate) fn of_line(parsed: &Parsed, line: &str) -> Self {
        let mut vars = Self::default();
        for cmd in parsed.all_commands() {
            vars.take_command(cmd);
        }
        vars.take_text(line);
        vars
    }

    /// Takes in the variables a line that ran in this shell may have set. Values are expanded
    /// only when a write is judged, so a value that reads a variable this shell had not set yet
    /// (`b=$a/x` before `a=…`) is marked unreadable: its variable held what the environment
    /// gave it then, not a value set later.
    pub(crate) fn record(&mut self, line: &Vars) {
        let mut early = Vec::new();
        for (name, facts) in &line.vars {
            for value in &facts.values {
                let unset = read_names(value).into_iter().find(|n| {
                    n != name && !ALWAYS_KNOWN.contains(n) && !self.vars.contains_key(*n)
                });
                if let Some(n) = unset {
                    early.push((
                        name.clone(),
                        format!("{name}={value} (`${n}` was not set yet)"),
                    ));
                }
            }
        }
        self.merge(line);
        for (name, text) in early {
            self.unseen(&name, &text);
        }
    }

    /// Adds what `other` may have set.
    pub(crate) fn merge(&mut self, other: &Vars) {
        if let Some(any) = &other.any {
            self.any.get_or_insert_with(|| any.clone());
        }
        for (name, facts) in &other.vars {
            for value in &facts.values {
                self.add(name, value);
            }
            if let Some(text) = &facts.unseen {
                self.unseen(name, text);
            }
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&VarFacts> {
        self.vars.get(name)
    }

    /// Why any variable may hold anything, if something made it so.
    pub(crate) fn any(&self) -> Option<&str> {
        self.any.as_deref()
    }

    fn take_command(&mut self, cmd: &SimpleCommand) {
        for a in &cmd.assignments {
            self.assignment(a, &cmd.text);
        }
        let Some(first) = cmd.words.first() else {
            return;
        };
        let args = cmd.words.get(1..).unwrap_or_default();
        let operands = || {
            args.iter()
                .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
        };
        match first.as_str() {
            d if DECLARERS.contains(&d) => {
                let options = args
                    .iter()
                    .filter(|a| a.starts_with('-') || a.starts_with('+'));
                let nameref = options.clone().any(|o| o.contains('n') && d != "export");
                let functions = options.clone().any(|o| o.contains('f'));
                if nameref {
                    self.any
                        .get_or_insert_with(|| clip(&cmd.text, MAX_TEXT_CHARS));
                } else if !functions {
                    for a in operands() {
                        self.assignment(a, &cmd.text);
                    }
                }
            }
            "read" => {
                let names = names_after_options(args, "adinNptu");
                if names.is_empty() {
                    self.unseen("REPLY", &cmd.text);
                }
                for name in names {
                    self.unseen(name, &cmd.text);
                }
            }
            "mapfile" | "readarray" => {
                let names = names_after_options(args, "dnOsuCc");
                self.unseen(names.last().copied().unwrap_or("MAPFILE"), &cmd.text);
            }
            "printf" => {
                if let Some(at) = args.iter().position(|a| a == "-v")
                    && let Some(name) = args.get(at + 1)
                {
                    self.unseen(name, &cmd.text);
                }
            }
            "getopts" => {
                if let Some(name) = args.get(1) {
                    self.unseen(name, &cmd.text);
                }
                self.unseen("OPTARG", &cmd.text);
            }
            "let" => {
                for a in args {
                    let name = a.split(['=', '+', '-', '*', '/']).next().unwrap_or(a);
                    self.unseen(name, &cmd.text);
                }
            }
            "unset" if !args.iter().any(|a| a == "-f") => {
                for a in operands() {
                    self.add(a, "");
                }
            }
            _ => {}
        }
    }

    /// `NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(…)`.
    fn assignment(&mut self, word: &str, text: &str) {
        let Some((lhs, value)) = word.split_once('=') else {
            return;
        };
        if lhs.contains(['$', '`']) {
            self.any.get_or_insert_with(|| clip(text, MAX_TEXT_CHARS));
            return;
        }
        let (name, plain) = match lhs.strip_suffix('+') {
            Some(name) => (name, false),
            None => (lhs, true),
        };
        let (name, plain) = match name.split_once('[') {
            Some((name, _)) => (name, false),
            None => (name, plain),
        };
        if !is_name(name) {
            return;
        }
        if plain && !value.starts_with('(') && value.len() <= MAX_VALUE_CHARS {
            self.add(name, value);
        } else {
            self.unseen(name, text);
        }
    }

    /// Assignments only visible in the text: `for NAME in`, `select NAME in`, `${NAME:=value}`.
    fn take_text(&mut self, line: &str) {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "for" | "select") && is_name(pair[1]) {
                self.unseen(pair[1], line);
            }
        }
        let mut rest = line;
        while let Some(at) = rest.find("${") {
            rest = &rest[at + 2..];
            let end = rest.find('}').unwrap_or(rest.len());
            let inner = &rest[..end];
            let name_end = inner
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(inner.len());
            let (name, op) = inner.split_at(name_end);
            let value = op.strip_prefix(":=").or_else(|| op.strip_prefix('='));
            if let Some(value) = value.filter(|_| is_name(name)) {
                self.add(name, value);
            }
        }
    }

    fn add(&mut self, name: &str, value: &str) {
        let Some(facts) = self.slot(name) else {
            return;
        };
        if facts.values.iter().any(|v| v == value) {
            return;
        }
        if facts.values.len() >= MAX_VALUES {
            facts
                .unseen
                .get_or_insert_with(|| format!("more than {MAX_VALUES} values of `{name}`"));
            return;
        }
        facts.values.push(value.to_string());
        self.kept += value.len();
    }

    fn unseen(&mut self, name: &str, text: &str) {
        let Some(facts) = self.slot(name) else {
            return;
        };
        if facts.unseen.is_none() {
            let text = clip(text, MAX_TEXT_CHARS);
            let len = text.len();
            facts.unseen = Some(text);
            self.kept += len;
        }
    }

    fn slot(&mut self, name: &str) -> Option<&mut VarFacts> {
        if self.kept > MAX_TOTAL_CHARS {
            self.any.get_or_insert_with(|| {
                format!("the variables set hold more than {MAX_TOTAL_CHARS} characters")
            });
            return None;
        }
        if !self.vars.contains_key(name) {
            if self.vars.len() >= MAX_NAMES {
                self.any
                    .get_or_insert_with(|| format!("more than {MAX_NAMES} variables were set"));
                return None;
            }
            self.kept += name.len();
        }
        Some(self.vars.entry(name.to_string()).or_default())
    }
}

/// A shell variable name.
pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The names of the variables `text` reads (`$NAME`, `${NAME…}`).
pub(crate) fn read_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let body = rest.strip_prefix('{').unwrap_or(rest);
        let len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..len];
        if is_name(name) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The operands of a builtin whose options in `with_arg` take the next word.
fn names_after_options<'a>(args: &'a [String], with_arg: &str) -> Vec<&'a str> {
    let mut names = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        if a == "--" {
            names.extend(iter.by_ref().map(String::as_str));
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            if flags.chars().last().is_some_and(|c| with_arg.contains(c)) {
                iter.next();
            }
        } else {
            names.push(a.as_str());
        }
    }
    names
}

fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::super::super::parse::parse;
    use super::*;

    fn vars(line: &str) -> Vars {
        Vars::of_line(&parse(line), line)
    }

    fn values(v: &Vars, name: &str) -> Vec<String> {
        v.get(name).map(|f| f.values.clone()).unwrap_or_default()
    }

    #[test]
    fn assignments_in_every_form_are_read() {
        let v = vars(
            "f=$SYNAPSE_HOME/settings.json; export g=~/x h; declare -x k=1; x=2 cmd; : ${d:=/etc}",
        );
        assert_eq!(values(&v, "f"), ["$SYNAPSE_HOME/settings.json"]);
        assert_eq!(values(&v, "g"), ["~/x"]);
        assert_eq!(values(&v, "k"), ["1"]);
        assert_eq!(values(&v, "x"), ["2"]);
        assert_eq!(values(&v, "d"), ["/etc"]);
        assert!(v.get("h").is_none());
    }

    #[test]
    fn values_it_cannot_read_keep_their_text() {
        let v = vars(
            "read -r a b <<< x; for i in 1 2; do :; done; printf -v p %s q; f+=x; arr=(a b); mapfile m",
        );
        for name in ["a", "b", "i", "p", "f", "arr", "m"] {
            assert!(
                v.get(name).is_some_and(|f| f.unseen.is_some()),
                "{name}: {v:?}"
            );
        }
        assert!(vars("declare -n r=SYNAPSE_HOME").any().is_some());
        assert!(vars("export \"$n\"=1").any().is_some());
        assert!(vars("f=1").any().is_none());
    }

    #[test]
    fn values_only_add_up() {
        let mut v = vars("f=/a");
        v.merge(&vars("(f=/b); unset f"));
        assert_eq!(values(&v, "f"), ["/a", "/b", ""]);
        let mut session = Vars::default();
        session.record(&vars("b=$a/x; c=$HOME/y"));
        assert!(session.get("b").is_some_and(|f| f.unseen.is_some()));
        assert!(session.get("c").is_some_and(|f| f.unseen.is_none()));
        session.record(&vars("d=$c"));
        assert!(session.get("d").is_some_and(|f| f.unseen.is_none()));
        let mut many = Vars::default();
        for i in 0..=MAX_VALUES {
            many.merge(&vars(&format!("f=/v{i}")));
        }
        assert!(many.get("f").is_some_and(|f| f.unseen.is_some()));
        let mut big = Vars::default();
        let value = "x".repeat(MAX_VALUE_CHARS);
        for i in 0..=(MAX_TOTAL_CHARS / MAX_VALUE_CHARS) {
            big.merge(&vars(&format!("v{i}={value}")));
        }
        assert!(
            big.any().is_some(),
            "a state past its size says any variable may be anything"
        );
    }
}
