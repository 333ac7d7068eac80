//! Rule patterns from the settings, matched against one simple command (never a whole command
//! line: that is what keeps `git status:*` from allowing `git status; rm -rf ~`) or against an
//! MCP tool name.
//!
//! Three forms, chosen by the text:
//! - prefix `git status:*`: the command's first words are `git status` (the program word may be
//!   a path: `/usr/bin/git status` matches); for names, `mcp:fs:*` means "starts with `mcp:fs:`";
//! - glob, when the text holds `*`, `?` or `[`: `npm run *` over the words joined by single
//!   spaces (`*` spans spaces);
//! - exact otherwise: the words, normalised the way the shell would split them, are equal.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};

use super::parse::SimpleCommand;

/// A pattern that could not be read; the message says what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The text is empty or only whitespace.
    #[error("empty pattern (expected a command such as \"git status:*\")")]
    Empty,
    /// A prefix pattern with no words before `:*` (`:*` alone).
    #[error("`{pattern}` has nothing before `:*` (expected a command such as \"git status:*\")")]
    BarePrefix {
        /// The pattern as written, trimmed.
        pattern: String,
    },
    /// A quote is opened and never closed, so the words cannot be split.
    #[error("`{pattern}` has an unterminated quote")]
    Quoting {
        /// The pattern as written, trimmed.
        pattern: String,
    },
    /// The text holds `*`, `?` or `[` but is not a glob `globset` accepts (`[a-`).
    #[error("`{pattern}` is not a valid glob: {reason}")]
    Glob {
        /// The pattern as written, trimmed.
        pattern: String,
        /// What `globset` found wrong with it.
        reason: String,
    },
}

/// One allow/ask/deny pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// `git status:*`: the words before `:*`, and the text before it for names.
    Prefix {
        /// The pattern as written, trimmed (`git status:*`).
        source: String,
        /// The words before `:*` after quote removal; a command matches when its words start
        /// with them (its program word may be a path to the first one).
        words: Vec<String>,
        /// The text before `:*` with a `:` appended (`mcp:fs:`), which a tool name must start
        /// with.
        name_prefix: String,
    },
    /// `npm run *`
    Glob {
        /// The pattern as written, trimmed.
        source: String,
        /// The glob over the pattern's words joined by single spaces; `*` also spans spaces.
        matcher: GlobMatcher,
    },
    /// `git status`, normalised to single spaces.
    Exact {
        /// The pattern as written, trimmed; a tool name must equal it.
        source: String,
        /// The words after quote removal joined by single spaces; a command's joined words
        /// must equal it.
        normalized: String,
    },
}

impl Pattern {
    /// Reads a pattern from settings text; the form is chosen as the module docs say. Leading
    /// and trailing whitespace is ignored.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let source = text.trim().to_string();
        if source.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some(head) = source.strip_suffix(":*") {
            let quoting = || PatternError::Quoting {
                pattern: source.clone(),
            };
            let words = shlex::split(head).ok_or_else(quoting)?;
            if words.is_empty() {
                return Err(PatternError::BarePrefix { pattern: source });
            }
            let name_prefix = format!("{}:", head.trim());
            return Ok(Pattern::Prefix {
                source,
                words,
                name_prefix,
            });
        }
        if source.contains(['*', '?', '[']) {
            let spaced = source.split_whitespace().collect::<Vec<_>>().join(" ");
            let glob = GlobBuilder::new(&spaced)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| PatternError::Glob {
                    pattern: source.clone(),
                    reason: e.kind().to_string(),
                })?;
            return Ok(Pattern::Glob {
                source,
                matcher: glob.compile_matcher(),
            });
        }
        let words = shlex::split(&source).ok_or_else(|| PatternError::Quoting {
            pattern: source.clone(),
        })?;
        Ok(Pattern::Exact {
            normalized: words.join(" "),
            source,
        })
    }

    /// The text the pattern was read from.
    pub fn source(&self) -> &str {
        match self {
            Pattern::Prefix { source, .. }
            | Pattern::Glob { source, .. }
            | Pattern::Exact { source, .. } => source,
        }
    }

    /// Whether one simple command's words match.
    pub fn matches_command(&self, cmd: &SimpleCommand) -> bool {
        let Some(first) = cmd.words.first() else {
            return false;
        };
        let joined = cmd.words.join(" ");
        let program = cmd.program().unwrap_or(first);
        let with_basename =
            (program != first).then(|| format!("{program}{}", &joined[first.len()..]));
        let either = |test: &dyn Fn(&str) -> bool| {
            test(&joined) || with_basename.as_deref().is_some_and(test)
        };
        match self {
            Pattern::Prefix { words, .. } => {
                words.len() <= cmd.words.len()
                    && (words[0] == *first || words[0] == program)
                    && words[1..] == cmd.words[1..words.len()]
            }
            Pattern::Glob { matcher, .. } => either(&|s| matcher.is_match(s)),
            Pattern::Exact { normalized, .. } => either(&|s| s == normalized),
        }
    }

    /// Whether an MCP tool name (`mcp:server:tool`) matches.
    pub fn matches_name(&self, name: &str) -> bool {
        match self {
            Pattern::Prefix { name_prefix, .. } => name.starts_with(name_prefix.as_str()),
            Pattern::Glob { matcher, .. } => matcher.is_match(name),
            Pattern::Exact { source, .. } => name == source,
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.source())
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn matches(pattern: &str, command: &str) -> bool {
        let pattern = Pattern::parse(pattern).unwrap();
        let parsed = parse(command);
        let cmd = parsed.all_commands().next().cloned().unwrap_or_default();
        pattern.matches_command(&cmd)
    }

    #[test]
    fn prefix_matches_on_word_boundaries() {
        assert!(matches("git status:*", "git status"));
        assert!(matches("git status:*", "git status -s"));
        assert!(matches("git status:*", "/usr/bin/git status"));
        assert!(matches("git status:*", "'git' \"status\" x"));
        assert!(!matches("git status:*", "git statusx"));
        assert!(!matches("git status:*", "git"));
        assert!(!matches("git status:*", "gitx status"));
        assert!(matches("\"my tool\" run:*", "'my tool' run x"));
    }

    #[test]
    fn glob_spans_words() {
        assert!(matches("npm run *", "npm run build --x"));
        assert!(matches("npm  run  *", "npm run test"));
        assert!(!matches("npm run *", "npm install"));
        assert!(matches("ls *", "/bin/ls -la"));
        assert!(matches("cargo test?", "cargo tests"));
    }

    #[test]
    fn exact_normalises_spacing_and_quotes() {
        assert!(matches("git  status", "git status"));
        assert!(matches("echo 'a b'", "echo \"a b\""));
        assert!(!matches("git status", "git status -s"));
        assert!(matches("rm -rf ../build", "/bin/rm -rf ../build"));
    }

    #[test]
    fn names_use_the_same_forms() {
        let p = |s: &str| Pattern::parse(s).unwrap();
        assert!(p("mcp:fs:*").matches_name("mcp:fs:write_file"));
        assert!(!p("mcp:fs:*").matches_name("mcp:fsx:write_file"));
        assert!(p("mcp:fs:read_*").matches_name("mcp:fs:read_file"));
        assert!(!p("mcp:fs:read_*").matches_name("mcp:fs:write_file"));
        assert!(p("mcp:fs:read_file").matches_name("mcp:fs:read_file"));
        assert!(!p("mcp:fs:read_file").matches_name("mcp:fs:read_files"));
    }

    #[test]
    fn bad_patterns_are_errors_that_round_trip_otherwise() {
        assert_eq!(Pattern::parse("  ").unwrap_err(), PatternError::Empty);
        assert!(matches!(
            Pattern::parse(":*"),
            Err(PatternError::BarePrefix { .. })
        ));
        assert!(matches!(
            Pattern::parse(" :*"),
            Err(PatternError::BarePrefix { .. })
        ));
        assert!(matches!(
            Pattern::parse("echo 'x"),
            Err(PatternError::Quoting { .. })
        ));
        assert!(matches!(
            Pattern::parse("a[b"),
            Err(PatternError::Glob { .. })
        ));
        for text in ["git status:*", "npm run *", "git status"] {
            assert_eq!(Pattern::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn a_chain_is_never_matched_as_a_whole() {
        let pattern = Pattern::parse("git status:*").unwrap();
        let parsed = parse("git status; rm -rf ~");
        let matched: Vec<bool> = parsed
            .all_commands()
            .map(|c| pattern.matches_command(c))
            .collect();
        assert_eq!(matched, [true, false]);
    }
}
