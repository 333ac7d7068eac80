//! Reading a Bash-tool command string: is it a simple command, a heredoc for an agent command,
//! or something that looks like a tool call pasted into the command?
//!
//! Only the quoting rules matter here (single quotes, double quotes, backslashes); words are
//! split with `shlex`. Anything this module is unsure about goes to the real shell.

/// Where the router sends a command string.
#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    /// An agent shell command: its words (the first is the name) and heredoc input, if any.
    Agent {
        words: Vec<String>,
        stdin: Option<String>,
    },
    /// The command as typed, to the persistent shell.
    Native,
    /// The model wrote a tool call instead of a command; `suggestion` is the command inside it.
    ToolCallLookalike { suggestion: Option<String> },
}

/// Classifies `command`; `is_agent` says whether a first word names an agent command.
pub fn classify(command: &str, is_agent: impl Fn(&str) -> bool) -> Route {
    let trimmed = command.trim();
    if let Some(suggestion) = tool_call_lookalike(trimmed) {
        return Route::ToolCallLookalike { suggestion };
    }
    if let Some((head, body)) = split_heredoc(trimmed) {
        return match shlex::split(head) {
            Some(words) if words.first().is_some_and(|w| is_agent(w)) => Route::Agent {
                words,
                stdin: Some(body),
            },
            _ => Route::Native,
        };
    }
    if !is_simple(trimmed) {
        return Route::Native;
    }
    match shlex::split(trimmed) {
        Some(words) if words.first().is_some_and(|w| is_agent(w)) => {
            Route::Agent { words, stdin: None }
        }
        _ => Route::Native,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Quote {
    None,
    Single,
    Double,
}

/// Walks `s` tracking quotes; calls `f(index, char, quote state, next char)` for each char that
/// is not escaped by a backslash. Stops early when `f` returns false.
fn scan(s: &str, mut f: impl FnMut(usize, char, Quote, Option<char>) -> bool) {
    let mut quote = Quote::None;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        match (quote, c) {
            (Quote::None | Quote::Double, '\\') => {
                chars.next();
                continue;
            }
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::Single, '\'') => quote = Quote::None,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Double, '"') => quote = Quote::None,
            _ => {}
        }
        if !f(i, c, quote, next) {
            return;
        }
    }
}

/// No unquoted `|`, `&`, `;`, `<`, `>`, parentheses or newline, and no `$(` or backtick outside
/// single quotes: one command with plain words.
pub fn is_simple(s: &str) -> bool {
    let mut simple = true;
    scan(s, |_, c, quote, next| {
        let special = match quote {
            Quote::None => {
                matches!(c, '|' | '&' | ';' | '<' | '>' | '(' | ')' | '`' | '\n')
                    || (c == '$' && next == Some('('))
            }
            Quote::Double => c == '`' || (c == '$' && next == Some('(')),
            Quote::Single => false,
        };
        simple = !special;
        simple
    });
    simple
}

/// True when bash would change the words of `s` (its first line, for a heredoc): `$`
/// expansions and backticks outside single quotes, and unquoted globs, braces or a leading
/// `~` word. Such a line must run in bash, which does the expansion, not on the fast path.
pub fn needs_expansion(s: &str) -> bool {
    let head = split_heredoc(s).map(|(h, _)| h).unwrap_or(s);
    let mut expands = false;
    let mut word_start = true;
    scan(head, |_, c, quote, next| {
        expands = match quote {
            Quote::None => {
                matches!(c, '$' | '`' | '*' | '?' | '[' | '{') || (c == '~' && word_start)
            }
            Quote::Double => c == '`' || (c == '$' && next.is_some_and(|n| n != '"')),
            Quote::Single => false,
        };
        word_start = quote == Quote::None && c.is_whitespace();
        !expands
    });
    expands
}

/// `head <<DELIM\nbody\nDELIM` (also `<<'DELIM'`, `<<"DELIM"`, `<<-DELIM`) with a simple head
/// and nothing after the terminator: `(head, body)`. The body is taken verbatim.
pub fn split_heredoc(s: &str) -> Option<(&str, String)> {
    let (first_line, rest) = s.split_once('\n')?;
    let mut at = None;
    scan(first_line, |i, c, quote, next| {
        if quote == Quote::None && c == '<' && next == Some('<') {
            at = Some(i);
            return false;
        }
        true
    });
    let at = at?;
    let head = first_line[..at].trim_end();
    if !is_simple(head) {
        return None;
    }
    let mut op = &first_line[at + 2..];
    let strip_tabs = op.starts_with('-');
    if strip_tabs {
        op = &op[1..];
    }
    let delim_words = shlex::split(op.trim())?;
    let [delim] = delim_words.as_slice() else {
        return None;
    };
    if delim.is_empty() {
        return None;
    }
    let mut body = String::new();
    let mut lines = rest.split_inclusive('\n');
    let mut terminated = false;
    for line in lines.by_ref() {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let content = if strip_tabs {
            content.trim_start_matches('\t')
        } else {
            content
        };
        if content == delim {
            terminated = true;
            break;
        }
        body.push_str(if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        });
    }
    let trailing: String = lines.collect();
    if !terminated || !trailing.trim().is_empty() {
        return None;
    }
    Some((head, body))
}

/// `Bash(command=…)`, `{"command": …}` or an XML-ish invoke block pasted as the command.
fn tool_call_lookalike(s: &str) -> Option<Option<String>> {
    // `get`, not slicing: byte `p.len()` may fall inside a multi-byte character ("🌀𐲀").
    let starts = |p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    if s.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(s).ok()?;
        let inner = value
            .get("command")
            .or_else(|| value.get("input")?.get("command"))?;
        return Some(inner.as_str().map(str::to_owned));
    }
    if starts("bash(")
        || starts("bash {")
        || s.starts_with("<invoke")
        || s.starts_with("<function_calls")
    {
        let suggestion = s
            .split_once("command=")
            .and_then(|(_, rest)| shlex::split(rest.trim_end_matches(')')))
            .and_then(|w| w.into_iter().next());
        return Some(suggestion);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_are_found_outside_single_quotes_only() {
        for yes in [
            "read \"$PWD/a.txt\"",
            "read $HOME/x",
            "glob ../x/*.rs",
            "read ~/a",
            "write f \"`date`\"",
            "read a{1,2}",
            "write f $'a\\nb'",
        ] {
            assert!(needs_expansion(yes), "{yes}");
        }
        for no in [
            "read a.txt",
            "write f 'x = \"$p\\nq\"'",
            "glob '**/*.rs'",
            "edit f 'a~b' \"c\\$d\"",
            "write f <<'EOF'\n$x *\nEOF",
        ] {
            assert!(!needs_expansion(no), "{no}");
        }
    }

    fn agent(w: &str) -> bool {
        matches!(w, "read" | "write" | "edit" | "glob" | "search" | "bash")
    }

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn simple_agent_commands_are_split_into_words() {
        assert_eq!(
            classify("write f \"use ls -h here\"", agent),
            Route::Agent {
                words: words(&["write", "f", "use ls -h here"]),
                stdin: None
            }
        );
        assert_eq!(
            classify(r#"write d/a.txt "L1\nL2""#, agent),
            Route::Agent {
                words: words(&["write", "d/a.txt", r"L1\nL2"]),
                stdin: None
            }
        );
        assert_eq!(
            classify("search 'a|b' --path src", agent),
            Route::Agent {
                words: words(&["search", "a|b", "--path", "src"]),
                stdin: None
            }
        );
        assert_eq!(
            classify("write f 'multi\nline'", agent),
            Route::Agent {
                words: words(&["write", "f", "multi\nline"]),
                stdin: None
            }
        );
    }

    #[test]
    fn operators_outside_quotes_go_to_the_shell() {
        for cmd in [
            "read f | head",
            "read f > out",
            "read f; ls",
            "read f && ls",
            "read f || ls",
            "read f &",
            "read $(echo f)",
            "read \"$(echo f)\"",
            "read `echo f`",
            "read f\nls",
            "read < f",
            "ls -la",
            "echo 'unterminated",
        ] {
            assert_eq!(classify(cmd, agent), Route::Native, "{cmd:?}");
        }
        assert!(is_simple("echo 'a|b' \"c;d\" e\\|f"));
    }

    #[test]
    fn heredocs_feed_agent_commands() {
        let cmd = "write out.txt <<'EOF'\nline $x\n  two\nEOF\n";
        assert_eq!(
            classify(cmd, agent),
            Route::Agent {
                words: words(&["write", "out.txt"]),
                stdin: Some("line $x\n  two\n".into())
            }
        );
        let cmd = "write t.sh <<-\"END\"\n\tindented\n\tEND";
        assert_eq!(
            classify(cmd, agent),
            Route::Agent {
                words: words(&["write", "t.sh"]),
                stdin: Some("indented\n".into())
            }
        );
        assert_eq!(classify("cat > f <<EOF\nx\nEOF", agent), Route::Native);
        assert_eq!(classify("write f <<EOF\nx\nEOF\nls", agent), Route::Native);
    }

    #[test]
    fn tool_calls_are_recognised() {
        assert_eq!(
            classify(r#"Bash(command="ls -la")"#, agent),
            Route::ToolCallLookalike {
                suggestion: Some("ls -la".into())
            }
        );
        assert_eq!(
            classify(r#"{"command": "pwd", "restart": false}"#, agent),
            Route::ToolCallLookalike {
                suggestion: Some("pwd".into())
            }
        );
        assert_eq!(classify(r#"{"other": 1}"#, agent), Route::Native);
        assert_eq!(classify("🌀𐲀", agent), Route::Native);
        assert_eq!(classify("bashé", agent), Route::Native);
    }
}

#[cfg(test)]
#[path = "syntax_props.rs"]
mod props;
