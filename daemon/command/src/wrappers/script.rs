//! [`WrapperScript`]: what a wrapper is (its command, the words it `exec`s, its help) and the
//! one way it is rendered to bash.
//!
//! Every piece of text that comes from outside (a skill's docstring, a server's tool schema,
//! names, paths) is embedded as a single-quoted shell word built by [`sh_quote`] and printed with
//! `printf '%s\n'`: nothing in a hostile name or help (`'`, `$()`, backticks, newlines, `EOF`) is
//! ever parsed by bash. The words of the `exec` line must survive that quoting unchanged (no
//! control characters), else the wrapper is not written ([`ScriptError`]): a wrapper that ran
//! something other than what it names would be worse than none. Arguments reach the target as
//! `"$@"`. `-h` and `--help` as the first argument print the help without running anything,
//! unless the help is [`Help::ThenTarget`] (a script with its own `--help`).

/// What `--help` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Help {
    /// Prints this text and exits 0.
    Text(String),
    /// Prints this text and a blank line, then runs the target with `--help` (whose own help
    /// follows).
    ThenTarget(String),
}

/// One wrapper, before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperScript {
    /// The command name (the file name in the bin folder).
    pub command: String,
    /// Where it comes from, for the header: "a skill script", "an MCP tool".
    pub origin: &'static str,
    /// `# Label: value` lines after the header (the skill id and script path, the server and
    /// tool): for a person reading the file.
    pub about: Vec<(&'static str, String)>,
    /// `-h`: usage and one line.
    pub short_help: String,
    /// `--help`: the whole document.
    pub long_help: Help,
    /// Variables exported to the target: `(NAME, value)`.
    pub exports: Vec<(&'static str, String)>,
    /// The program and its leading arguments; `"$@"` follows.
    pub exec: Vec<String>,
}

/// A word of the `exec` line that quoting would change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} contains a control character and cannot be put in a wrapper: {word:?}")]
pub struct ScriptError {
    /// Which part of the wrapper the word is ("the script path").
    pub what: String,
    /// The word.
    pub word: String,
}

/// Quotes `s` as one shell word: `'…'`, with `'` written as `'\''`. NUL (which bash cannot
/// hold) and other control characters except tab and newline are dropped.
pub fn sh_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `text` without the control characters [`sh_quote`] drops: what a help printout shows.
pub fn clean_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// One line for a `#` comment: every control character (newlines included) becomes a space.
pub fn comment_safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `word` quoted, or why it cannot be.
fn exact_word(what: &str, word: &str) -> Result<String, ScriptError> {
    if word
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(ScriptError {
            what: what.to_string(),
            word: comment_safe(word),
        });
    }
    Ok(sh_quote(word))
}

/// The interpreter line's bash: the one the session shells run, by absolute path (no `env`
/// lookup on every call), unless its path cannot stand in a `#!` line.
fn shebang_bash() -> String {
    match crate::bash_path().to_str() {
        Some(p) if p.starts_with('/') && !p.contains(char::is_whitespace) && p.len() < 120 => {
            p.to_string()
        }
        _ => "/usr/bin/env bash".to_string(),
    }
}

impl WrapperScript {
    /// The whole file.
    pub fn render(&self) -> Result<String, ScriptError> {
        let mut exec = String::from("exec");
        for w in &self.exec {
            exec.push(' ');
            exec.push_str(&exact_word("a word of the command it runs", w)?);
        }
        exec.push_str(" \"$@\"");
        let mut exports = String::new();
        for (name, value) in &self.exports {
            exports.push_str(&format!(
                "export {name}={}\n",
                exact_word(&format!("${name}"), value)?
            ));
        }
        // Each help text is printed with exactly one newline after it.
        let text = |t: &str| sh_quote(t.trim_end_matches('\n'));
        let long = match &self.long_help {
            Help::Text(t) => format!("printf '%s\\n' {}; exit 0", text(t)),
            Help::ThenTarget(t) => format!("printf '%s\\n\\n' {}", text(t)),
        };
        let mut about = String::new();
        for (label, value) in &self.about {
            about.push_str(&format!("# {label}: {}\n", comment_safe(value)));
        }
        Ok(format!(
            "#!{bash}\n\
             # Generated by synapsed from {origin}; rewritten when it changes. Do not edit.\n\
             # Command: {command}\n\
             {about}\
             case \"${{1-}}\" in\n  \
               -h) printf '%s\\n' {short}; exit 0 ;;\n  \
               --help) {long} ;;\n\
             esac\n\
             {exports}\
             {exec}\n",
            bash = shebang_bash(),
            origin = self.origin,
            command = comment_safe(&self.command),
            short = text(&self.short_help),
        ))
    }
}

#[cfg(test)]
#[path = "script_tests.rs"]
mod tests;
