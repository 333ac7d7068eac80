//! Expanding a path word the way bash would, without running anything: brace expansion, `~`,
//! `$NAME` / `${NAME}` / `${NAME:-word}` and friends, and word splitting of what a variable
//! held. A word may have several possible values (a variable set twice, a brace list); what
//! cannot be known without running the command (`$(…)`, backticks, `$RANDOM`, a variable set
//! by `read`, `${f%/*}`) is reported instead of guessed, with the text that may hold the value.

use std::path::PathBuf;

use super::super::context::Context;
use super::vars::{Vars, is_name, read_names};

/// How many values one word may expand to before it counts as unknown.
pub(super) const MAX_WORD_VALUES: usize = 64;
/// Variables the shell itself sets (`cd` sets `OLDPWD`, every command `$_`): never known.
const SHELL_SET: &[&str] = &[
    "OLDPWD",
    "_",
    "REPLY",
    "OPTARG",
    "MAPFILE",
    "BASH_REMATCH",
    "DIRSTACK",
    "BASH_ARGV",
    "BASH_SOURCE",
    "RANDOM",
    "SRANDOM",
];
/// How deep variables that name variables are followed.
const MAX_DEPTH: usize = 8;

/// What a word may expand to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Expansion {
    pub values: Vec<String>,
    /// Why some value is only known at run time.
    pub unknown: Vec<String>,
}

impl Expansion {
    fn value(v: String) -> Self {
        Self {
            values: vec![v],
            unknown: Vec::new(),
        }
    }

    fn unknown(why: String) -> Self {
        Self {
            values: Vec::new(),
            unknown: vec![why],
        }
    }

    fn union(&mut self, other: Expansion) {
        for v in other.values {
            if !self.values.contains(&v) {
                self.values.push(v);
            }
        }
        for u in other.unknown {
            if !self.unknown.contains(&u) {
                self.unknown.push(u);
            }
        }
        self.cap();
    }

    /// Every value of `self` followed by every value of `other`.
    fn then(self, other: Expansion) -> Expansion {
        let mut unknown = self.unknown;
        unknown.extend(other.unknown);
        let mut values = Vec::new();
        for a in &self.values {
            for b in &other.values {
                values.push(format!("{a}{b}"));
                if values.len() > MAX_WORD_VALUES {
                    break;
                }
            }
        }
        let mut out = Expansion { values, unknown };
        out.cap();
        out
    }

    fn cap(&mut self) {
        if self.values.len() > MAX_WORD_VALUES {
            self.values.clear();
            self.unknown
                .push(format!("more than {MAX_WORD_VALUES} possible values"));
        }
    }
}

/// Where variables come from: the session shell's environment as far as it is known, what the
/// session set, what the line sets, and the folders the line may be in (`$PWD`).
pub(super) struct Scope<'a> {
    pub ctx: &'a Context<'a>,
    /// Known values of the session shell's environment (`SYNAPSE_HOME`).
    pub env: &'a [(&'a str, &'a str)],
    pub session: &'a Vars,
    pub line: &'a Vars,
    /// Why the session shell's state cannot be told (`source`, `eval` of run-time text).
    pub unknown_state: Option<&'a str>,
    pub dirs: &'a [PathBuf],
}

impl Scope<'_> {
    /// Every value `word` may expand to.
    pub(super) fn expand(&self, word: &str) -> Expansion {
        self.expand_at(word, 0, true)
    }

    fn expand_at(&self, word: &str, depth: usize, split: bool) -> Expansion {
        if depth > MAX_DEPTH {
            return Expansion::unknown(format!("`{word}` names variables too deeply"));
        }
        let alternatives = match braces(word) {
            Ok(a) => a,
            Err(why) => return Expansion::unknown(why),
        };
        let mut out = Expansion::default();
        for alt in alternatives {
            out.union(self.expand_one(&alt, depth, split));
        }
        out
    }

    fn expand_one(&self, word: &str, depth: usize, split: bool) -> Expansion {
        let (mut out, rest) = self.tilde(word);
        let mut literal = String::new();
        let mut at = 0;
        while let Some(c) = rest[at..].chars().next() {
            at += c.len_utf8();
            match c {
                '`' => return Expansion::unknown(format!("`{word}` holds a command substitution")),
                '$' => {
                    let Some((part, used)) = self.dollar(&rest[at..], depth) else {
                        literal.push('$');
                        continue;
                    };
                    out = out.then(Expansion::value(std::mem::take(&mut literal)));
                    out = out.then(part);
                    at += used;
                }
                _ => literal.push(c),
            }
        }
        out = out.then(Expansion::value(literal));
        if split {
            let pieces: Vec<String> = out
                .values
                .iter()
                .filter(|v| v.contains(char::is_whitespace))
                .flat_map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                .collect();
            out.union(Expansion {
                values: pieces,
                unknown: Vec::new(),
            });
        }
        out
    }

    /// A leading `~`, `~/…`, `~+`, `~user`: the expansion so far and the rest of the word.
    fn tilde<'w>(&self, word: &'w str) -> (Expansion, &'w str) {
        let Some(rest) = word.strip_prefix('~') else {
            return (Expansion::value(String::new()), word);
        };
        let end = rest.find('/').unwrap_or(rest.len());
        let (user, tail) = rest.split_at(end);
        let head = match user {
            "" => self.var("HOME", 0),
            "+" => self.var("PWD", 0),
            "-" => Expansion::unknown("`~-` is the previous folder".to_string()),
            name if is_name(name) || name.contains(['.', '-']) => Expansion::value(
                self.ctx
                    .home
                    .parent()
                    .unwrap_or(self.ctx.home)
                    .join(name)
                    .display()
                    .to_string(),
            ),
            _ => return (Expansion::value(String::new()), word),
        };
        (head, tail)
    }

    /// What follows a `$`: its expansion and how many bytes it used (`None`: a lone `$`).
    fn dollar(&self, after: &str, depth: usize) -> Option<(Expansion, usize)> {
        let first = after.chars().next()?;
        if first == '(' {
            return Some((
                Expansion::unknown("a command substitution or arithmetic".to_string()),
                after.len(),
            ));
        }
        if first == '{' {
            let inner_len = matching_brace(after)?;
            let inner = &after[1..inner_len];
            return Some((self.braced(inner, depth), inner_len + 1));
        }
        if first.is_ascii_alphabetic() || first == '_' {
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            return Some((self.var(&after[..len], depth), len));
        }
        if first.is_ascii_digit() || "@*#?-$!".contains(first) {
            return Some((
                Expansion::unknown(format!("`${first}` is only known at run time")),
                1,
            ));
        }
        None
    }

    /// `${…}`.
    fn braced(&self, inner: &str, depth: usize) -> Expansion {
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let (name, op) = inner.split_at(name_len);
        if !is_name(name) {
            return Expansion::unknown(format!("`${{{inner}}}` is only known at run time"));
        }
        let word = |w: &str| self.expand_at(w, depth + 1, false);
        if op.is_empty() {
            return self.var(name, depth);
        }
        for prefix in [":-", ":=", "-", "="] {
            if let Some(w) = op.strip_prefix(prefix) {
                let mut out = self.var(name, depth);
                out.union(word(w));
                return out;
            }
        }
        for prefix in [":+", "+"] {
            if let Some(w) = op.strip_prefix(prefix) {
                let mut out = Expansion::value(String::new());
                out.union(word(w));
                return out;
            }
        }
        if op.starts_with(":?") || op.starts_with('?') {
            return self.var(name, depth);
        }
        Expansion::unknown(format!("`${{{inner}}}` is only known at run time"))
    }

    /// Every value variable `name` may hold.
    pub(super) fn var(&self, name: &str, depth: usize) -> Expansion {
        if depth > MAX_DEPTH {
            return Expansion::unknown(format!("`${name}` names variables too deeply"));
        }
        let mut out = Expansion::default();
        let mut known = true;
        match name {
            "HOME" => out.union(Expansion::value(self.ctx.home.display().to_string())),
            "PWD" => {
                for dir in self.dirs {
                    out.union(Expansion::value(dir.display().to_string()));
                }
            }
            _ => match self.env.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => out.union(Expansion::value((*v).to_string())),
                None => known = false,
            },
        }
        let set = [self.session, self.line]
            .iter()
            .any(|v| v.get(name).is_some());
        if SHELL_SET.contains(&name) {
            out.union(Expansion::unknown(format!("`${name}` is set by the shell")));
        }
        if name != "IFS" && self.splits_oddly() {
            out.union(Expansion::unknown(
                "`IFS` was changed, so how values split cannot be told".to_string(),
            ));
        }
        // A variable the session or the line set holds what they set; one they never set holds
        // whatever the environment gave the shell.
        if !known && !set {
            out.union(Expansion::unknown(format!(
                "`${name}` comes from the environment"
            )));
        }
        for vars in [self.session, self.line] {
            if let Some(any) = vars.any() {
                out.union(Expansion::unknown(format!(
                    "`${name}` may have been set by `{any}`"
                )));
            }
            let Some(facts) = vars.get(name) else {
                continue;
            };
            for value in &facts.values {
                out.union(self.expand_at(value, depth + 1, false));
            }
            if let Some(text) = &facts.unseen {
                out.union(Expansion::unknown(format!("`${name}` was set by `{text}`")));
            }
        }
        if let Some(why) = self.unknown_state {
            out.union(Expansion::unknown(format!(
                "`${name}` may have been set unseen since {why}"
            )));
        }
        out
    }

    /// `IFS` was set to something other than blanks: unquoted values split where this check
    /// does not split them.
    fn splits_oddly(&self) -> bool {
        [self.session, self.line].iter().any(|vars| {
            vars.get("IFS").is_some_and(|ifs| {
                ifs.unseen.is_some()
                    || ifs
                        .values
                        .iter()
                        .any(|v| !v.chars().all(char::is_whitespace))
            })
        })
    }

    /// The text of every variable `text` reads, and of the variables those read (for telling
    /// whether a line names a file through a variable).
    pub(super) fn referenced(&self, text: &str, out: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for name in read_names(text) {
            for vars in [self.session, self.line] {
                if let Some(any) = vars.any() {
                    out.push('\n');
                    out.push_str(any);
                }
                let Some(facts) = vars.get(name) else {
                    continue;
                };
                for value in &facts.values {
                    out.push('\n');
                    out.push_str(value);
                    self.referenced(value, out, depth + 1);
                }
                if let Some(unseen) = &facts.unseen {
                    out.push('\n');
                    out.push_str(unseen);
                }
            }
        }
    }
}

/// Length up to the `}` matching the `{` at the start of `s`.
fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Brace expansion (`a{b,c}d` → `abd`, `acd`; `{1..3}`), bounded. `${…}` is left alone.
pub(super) fn braces(word: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    expand_braces(word, &mut out, 0)?;
    Ok(out)
}

fn expand_braces(word: &str, out: &mut Vec<String>, depth: usize) -> Result<(), String> {
    if out.len() > MAX_WORD_VALUES || depth > MAX_DEPTH {
        return Err(format!("`{word}` has too many brace expansions"));
    }
    let Some((open, close, parts)) = first_brace_list(word) else {
        out.push(word.to_string());
        return Ok(());
    };
    let (head, tail) = (&word[..open], &word[close + 1..]);
    let alternatives = match parts {
        BraceList::Items(items) => items,
        BraceList::Range(a, b) => range(a, b)
            .ok_or_else(|| format!("`{word}` has a brace range this check does not expand"))?,
    };
    for alt in alternatives {
        expand_braces(&format!("{head}{alt}{tail}"), out, depth + 1)?;
    }
    Ok(())
}

enum BraceList<'a> {
    Items(Vec<String>),
    Range(&'a str, &'a str),
}

/// The first `{…}` with a top-level `,` or `..` not preceded by `$`.
fn first_brace_list(word: &str) -> Option<(usize, usize, BraceList<'_>)> {
    let bytes = word.as_bytes();
    let mut search = 0;
    while let Some(rel) = word[search..].find('{') {
        let open = search + rel;
        search = open + 1;
        if open > 0 && bytes[open - 1] == b'$' {
            if let Some(len) = matching_brace(&word[open..]) {
                search = open + len + 1;
            }
            continue;
        }
        let Some(len) = matching_brace(&word[open..]) else {
            continue;
        };
        let close = open + len;
        let inner = &word[open + 1..close];
        let mut items = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    items.push(inner[start..i].to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !items.is_empty() {
            items.push(inner[start..].to_string());
            return Some((open, close, BraceList::Items(items)));
        }
        if let Some((a, b)) = inner.split_once("..")
            && !a.is_empty()
            && !b.is_empty()
            && !b.contains("..")
        {
            return Some((open, close, BraceList::Range(a, b)));
        }
    }
    None
}

/// `{1..3}`, `{a..c}` (no step), bounded.
fn range(a: &str, b: &str) -> Option<Vec<String>> {
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let (lo, hi) = (x.min(y), x.max(y));
        if hi - lo > MAX_WORD_VALUES as i64 {
            return None;
        }
        return Some((lo..=hi).map(|n| n.to_string()).collect());
    }
    let (mut x, mut y) = (a.chars(), b.chars());
    match (x.next(), x.next(), y.next(), y.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (lo, hi) = (x.min(y), x.max(y));
            Some((lo..=hi).map(|c| c.to_string()).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::parse::parse;
    use super::super::super::test_support::ctx;
    use super::*;

    fn expand_with(word: &str, session: &[&str], line: &str) -> Expansion {
        let mut vars = Vars::default();
        for l in session {
            vars.merge(&Vars::of_line(&parse(l), l));
        }
        let line_vars = Vars::of_line(&parse(line), line);
        let ctx = ctx(false);
        let dirs = [ctx.cwd.to_path_buf()];
        let scope = Scope {
            ctx: &ctx,
            env: &[("SYNAPSE_HOME", "/home/u/.synapse")],
            session: &vars,
            line: &line_vars,
            unknown_state: None,
            dirs: &dirs,
        };
        scope.expand(word)
    }

    fn values(word: &str, session: &[&str], line: &str) -> Vec<String> {
        expand_with(word, session, line).values
    }

    #[test]
    fn known_variables_expand() {
        let s = "/home/u/.synapse/settings.json";
        for word in [
            "$SYNAPSE_HOME/settings.json",
            "${SYNAPSE_HOME}/settings.json",
            "${SYNAPSE_HOME:-/x}/settings.json",
            "~/.synapse/settings.json",
            "$HOME/.synapse/settings.json",
            "~/.synapse/{settings,other}.json",
        ] {
            assert!(values(word, &[], "").iter().any(|v| v == s), "{word}");
        }
        assert_eq!(values("$f", &["f=~/.synapse/settings.json"], ""), [s]);
        assert!(values("$f", &[], "d=~/.synapse; f=$d/settings.json").contains(&s.into()));
        assert!(values("$PWD/x", &[], "").contains(&"/home/u/proj/x".into()));
    }

    #[test]
    fn what_is_only_known_at_run_time_is_named() {
        for word in [
            "$(pwd)/x", "`pwd`/x", "$RANDOM", "${f%/*}", "$1", "$_", "$f",
        ] {
            let e = expand_with(word, &["read f"], "");
            assert!(!e.unknown.is_empty(), "{word}: {e:?}");
        }
        assert!(expand_with("/a/$x", &[], "").unknown[0].contains("environment"));
        assert_eq!(values("/a/$x", &[], "x=b"), ["/a/b"]);
        assert!(!expand_with("$OLDPWD", &[], "OLDPWD=/x").unknown.is_empty());
        assert!(
            !expand_with("$f", &["IFS=/", "f=/a/b"], "")
                .unknown
                .is_empty()
        );
        assert!(
            expand_with("$f", &["IFS= read -r x", "f=/a/b"], "")
                .unknown
                .is_empty()
        );
    }

    #[test]
    fn braces_expand_bounded() {
        assert_eq!(braces("a{b,c}d").unwrap_or_default(), ["abd", "acd"]);
        assert_eq!(braces("{1..3}").unwrap_or_default(), ["1", "2", "3"]);
        assert_eq!(braces("${x}{}").unwrap_or_default(), ["${x}{}"]);
        assert!(braces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}").is_err());
    }
}
