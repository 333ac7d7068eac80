//! Splitting a Bash-tool command string into the simple commands it would run.
//!
//! [`parse()`] walks the string once with a hand-written scanner: `cursor` holds the state,
//! `words`, `expansions` and `redirects` read words, quotes, `$…` expansions, redirects
//! and heredocs, and `grammar` reads lists, pipelines and compound commands. Every command
//! bash could run is collected: the ones inside `$( )`, backticks, `<( )`, subshells, groups,
//! `if`/`while`/`for`/`case` bodies, and the ones a wrapper such as `sudo`, `xargs`, `bash -c`
//! or `find -exec` would start (`wrappers`). Whatever cannot be seen into (a program named by
//! a variable, `eval "$x"`, `source file`, an unterminated quote) is reported in
//! [`Parsed::opaque`] instead of guessed. The scanner never panics, caps nesting at
//! [`MAX_NESTING`] and bounds how much nested text it re-reads.

mod compound;
mod cursor;
mod expansions;
mod grammar;
mod launchers;
mod redirects;
mod words;
mod wrappers;

#[cfg(test)]
mod tests;

pub(crate) use wrappers::unwrap_wrapper;

/// How deep substitutions, subshells and nested `bash -c` strings may go before the rest of the
/// command is reported as opaque.
pub const MAX_NESTING: usize = 32;

/// Everything a command string would run, as far as it can be read without running it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Pipelines in the order they were read; commands nested in substitutions come before the
    /// command that contains them.
    pub pipelines: Vec<Pipeline>,
    /// Human reasons the command could not be fully seen into, each naming the part.
    pub opaque: Vec<String>,
    /// Names of the shell functions the command defines (`f() { …; }`, `function f { …; }`).
    pub functions: Vec<String>,
}

/// `a | b | c` (also `|&`). Commands started by a wrapper follow the wrapper in the same list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipeline {
    /// The pipeline's commands from left to right; a lone command is a pipeline of one.
    pub commands: Vec<SimpleCommand>,
}

/// One program invocation with its words, leading assignments and redirects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Words after quote removal; words with `$( )`, backticks or `<( )` keep their raw text,
    /// `$VAR` stays as written.
    pub words: Vec<String>,
    /// Leading `VAR=value` words, after quote removal.
    pub assignments: Vec<String>,
    /// The command's redirections in the order written, wherever they stood among the words.
    pub redirects: Vec<Redirect>,
    /// The command's own source text, trimmed (for commands a wrapper starts: its words).
    pub text: String,
}

/// One redirection such as `2> f` or `<<EOF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The explicit file descriptor (`2` in `2>f`), if one was written.
    pub fd: Option<u32>,
    /// Which redirection it is (`>`, `>>`, `<`, `<<`, `>&`, …).
    pub op: RedirectOp,
    /// The file, the duplicated descriptor (`1` in `2>&1`), the here-string or the heredoc
    /// delimiter.
    pub target: String,
}

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `>`, `>|`, `&>`, `>& file`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<`
    Read,
    /// `2>&1`, `<&3`, `>&-`: no file is opened.
    Dup,
    /// `<<<`
    HereString,
    /// `<<`, `<<-`
    HereDoc,
    /// `<>`
    ReadWrite,
}

/// Device paths a write redirect may target without writing a file.
const HARMLESS_DEVICES: [&str; 3] = ["/dev/null", "/dev/stdout", "/dev/stderr"];

impl SimpleCommand {
    /// The first word, reduced to its basename when it is a path (`/usr/bin/rm` → `rm`).
    pub fn program(&self) -> Option<&str> {
        let first = self.words.first()?;
        match first.rsplit('/').next() {
            Some(base) if !base.is_empty() => Some(base),
            _ => Some(first.as_str()),
        }
    }

    /// File targets of write, append and read-write redirects (not `/dev/null` and friends).
    pub fn writes(&self) -> Vec<&str> {
        self.redirects
            .iter()
            .filter(|r| {
                matches!(
                    r.op,
                    RedirectOp::Write | RedirectOp::Append | RedirectOp::ReadWrite
                )
            })
            .map(|r| r.target.as_str())
            .filter(|t| !HARMLESS_DEVICES.contains(t) && !t.starts_with("/dev/fd/"))
            .collect()
    }

    /// A command started by a wrapper (`sudo rm x` → `rm x`): no redirects of its own.
    pub(crate) fn derived(words: Vec<String>, assignments: Vec<String>) -> Self {
        let text = join_words(&words);
        Self {
            words,
            assignments,
            redirects: Vec::new(),
            text,
        }
    }
}

impl Parsed {
    /// Every simple command, pipeline by pipeline.
    pub fn all_commands(&self) -> impl Iterator<Item = &SimpleCommand> {
        self.pipelines.iter().flat_map(|p| p.commands.iter())
    }
}

/// Reads `command` into its simple commands. Never panics.
pub fn parse(command: &str) -> Parsed {
    parse_nested(command, 0)
}

/// [`parse`] at a nesting depth (for `bash -c` strings and backticks).
pub(crate) fn parse_nested(command: &str, depth: usize) -> Parsed {
    let mut parser = cursor::Parser::new(command, depth);
    parser.run();
    parser.out
}

/// Words joined by spaces, quoting the ones that need it so the text reads back the same.
pub(crate) fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if w.is_empty() || w.chars().any(char::is_whitespace) {
                shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned())
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
