//! Argument parsing shared by the agent shell commands: options (`--offset N`, `--offset=N`,
//! `-i`), `--` to end options, and the escape sequences accepted in `write`/`edit` content.

use std::collections::HashMap;

/// One option a command accepts.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    /// `--offset`, `-i`.
    pub name: &'static str,
    /// Another spelling (`--ignore-case` for `-i`).
    pub alias: Option<&'static str>,
    /// Whether the option takes the next word as its value.
    pub takes_value: bool,
}

impl OptSpec {
    /// An option that stands alone (`--all`).
    pub const fn flag(name: &'static str) -> Self {
        Self {
            name,
            alias: None,
            takes_value: false,
        }
    }

    /// An option followed by its value (`--offset N`).
    pub const fn value(name: &'static str) -> Self {
        Self {
            name,
            alias: None,
            takes_value: true,
        }
    }

    /// The same option under another spelling.
    pub const fn alias(mut self, alias: &'static str) -> Self {
        self.alias = Some(alias);
        self
    }
}

/// Unknown dashed words: an error (`read --bogus`) or plain positionals (`edit f "-x" "-y"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownOpts {
    /// An unknown dashed word is a usage error.
    Reject,
    /// An unknown dashed word is an ordinary word.
    Positional,
}

#[derive(Debug, Default)]
/// The words of one command line, sorted into options and positionals.
pub struct Parsed {
    /// The words that are not options, in order.
    pub positionals: Vec<String>,
    options: HashMap<&'static str, Option<String>>,
}

impl Parsed {
    /// Whether the flag `name` (or its alias) was given.
    pub fn flag(&self, name: &str) -> bool {
        self.options.contains_key(name)
    }

    /// The value of option `name` (or its alias), when given.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.options.get(name).and_then(|v| v.as_deref())
    }

    /// A non-negative integer option, `default` when absent.
    pub fn number(&self, name: &str, default: usize) -> Result<usize, String> {
        match self.value(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("{name} expects a non-negative whole number (got {v:?})")),
        }
    }
}

fn looks_like_option(word: &str) -> bool {
    let body = word.strip_prefix("--").or_else(|| word.strip_prefix('-'));
    body.and_then(|b| b.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic())
        && !word.contains(char::is_whitespace)
}

/// Sorts `args` into the options `opts` names and positionals; the error names the word that was wrong.
pub fn parse(args: Vec<String>, opts: &[OptSpec], unknown: UnknownOpts) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut iter = args.into_iter();
    while let Some(word) = iter.next() {
        if word == "--" {
            parsed.positionals.extend(iter.by_ref());
            break;
        }
        if !looks_like_option(&word) {
            parsed.positionals.push(word);
            continue;
        }
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (word.clone(), None),
        };
        let Some(spec) = opts
            .iter()
            .find(|o| o.name == name || o.alias == Some(name.as_str()))
        else {
            match unknown {
                UnknownOpts::Reject => return Err(format!("unknown option {word}")),
                UnknownOpts::Positional => {
                    parsed.positionals.push(word);
                    continue;
                }
            }
        };
        let value = if spec.takes_value {
            match inline.or_else(|| iter.next()) {
                Some(v) => Some(v),
                None => return Err(format!("{} needs a value", spec.name)),
            }
        } else if inline.is_some() {
            return Err(format!("{} takes no value", spec.name));
        } else {
            None
        };
        parsed.options.insert(spec.name, value);
    }
    Ok(parsed)
}

/// Interprets `\n`, `\t` and `\\` (after shell quoting) in content arguments; other
/// backslashes stay as they are.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    const OPTS: &[OptSpec] = &[
        OptSpec::value("--offset"),
        OptSpec::flag("-i").alias("--ignore-case"),
    ];

    #[test]
    fn options_values_and_positionals() {
        let p = parse(
            v(&["f", "--offset", "3", "--ignore-case"]),
            OPTS,
            UnknownOpts::Reject,
        )
        .unwrap();
        assert_eq!(p.positionals, v(&["f"]));
        assert_eq!(p.number("--offset", 0), Ok(3));
        assert!(p.flag("-i"));
        let p = parse(
            v(&["--offset=7", "--", "--offset"]),
            OPTS,
            UnknownOpts::Reject,
        )
        .unwrap();
        assert_eq!(p.number("--offset", 0), Ok(7));
        assert_eq!(p.positionals, v(&["--offset"]));
        let p = parse(v(&["- list item", "-5"]), OPTS, UnknownOpts::Reject).unwrap();
        assert_eq!(p.positionals, v(&["- list item", "-5"]));
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(
            parse(v(&["--bogus"]), OPTS, UnknownOpts::Reject).unwrap_err(),
            "unknown option --bogus"
        );
        assert_eq!(
            parse(v(&["--offset"]), OPTS, UnknownOpts::Reject).unwrap_err(),
            "--offset needs a value"
        );
        let p = parse(v(&["--offset", "x"]), OPTS, UnknownOpts::Reject).unwrap();
        assert!(p.number("--offset", 0).unwrap_err().contains("(got \"x\")"));
        let p = parse(v(&["-x"]), OPTS, UnknownOpts::Positional).unwrap();
        assert_eq!(p.positionals, v(&["-x"]));
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"L1\nL2\tx\\n\q"), "L1\nL2\tx\\n\\q");
    }
}
