//! The pattern an "always allow" answer saves for a simple command.
//!
//! - Everyday commands get a prefix rule: for programs with subcommands (git, npm, cargo,
//!   docker, …) the words up to the subcommand (`git status:*`, `npm -g install:*`), plus the
//!   script name for runners (`npm run build:*`); for other programs `prog:*`.
//! - Risky commands and writes outside the writable folders (or to paths that cannot be
//!   checked) get their exact words
//!   (`rm -rf ../build`), because a prefix such as `rm:*` would allow far more than was
//!   approved. One exception: when the risk lies in the subcommand and its options alone (the
//!   prefix up to the first operand is itself risky), that prefix is offered —
//!   `git push --force:*`, `npm install:*` — since every command it matches carries the same
//!   risk the user just approved.
//! - Interpreters keep what they run: `python3 -m pip install:*` (a module is read like a
//!   program, with its subcommand), `python3 -m http.server:*`, `node build.js:*` — not
//!   `python3:*`, which would allow every script.
//! - Words with glob characters are escaped so the saved text is still matched exactly.

use super::super::argv::git_subcommand;
use super::super::context::Context;
use super::super::parse::{Pipeline, SimpleCommand};
use super::super::risky::risky;

/// Programs whose first operand is a subcommand.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "deno",
    "cargo",
    "rustup",
    "go",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "conda",
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "zypper",
    "apk",
    "brew",
    "port",
    "snap",
    "flatpak",
    "gem",
    "bundle",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "systemctl",
    "journalctl",
    "gh",
    "terraform",
    "make",
    "just",
    "dotnet",
    "mvn",
    "gradle",
    "composer",
    "mix",
    "swift",
];

/// Interpreters whose first operand (a script, or `-m <module>` for Python) is what runs.
fn is_interpreter(program: &str) -> bool {
    matches!(
        program,
        "python" | "python2" | "python3" | "node" | "ruby" | "perl" | "php" | "bash" | "sh" | "zsh"
    ) || program
        .strip_prefix("python3.")
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// Where the command proper starts: `python3 -m pip …` is read as `pip …` from index 2.
fn module_start(program: &str, words: &[String]) -> Option<usize> {
    (program.starts_with("python") && words.get(1).is_some_and(|w| w == "-m") && words.len() > 2)
        .then_some(2)
}

/// Subcommands that run a named script: the script name is part of the prefix.
const RUNNERS: [&str; 5] = ["run", "run-script", "exec", "x", "dlx"];

/// The pattern "always" would save for `cmd`; `dangerous` when it is risky or what it writes is
/// the concern (outside the writable folders, or not knowable). Empty for a command without
/// words (a bare redirect).
pub(super) fn suggestion(cmd: &SimpleCommand, dangerous: bool, ctx: &Context) -> String {
    let words = &cmd.words;
    let Some(program) = cmd.program() else {
        return String::new();
    };
    let start = module_start(program, words).unwrap_or(0);
    let program = if start > 0 {
        words[start].as_str()
    } else {
        program
    };
    let sub_at = if SUBCOMMAND_PROGRAMS.contains(&program) {
        subcommand_index(program, &words[start..]).map(|at| at + start)
    } else {
        None
    };
    if dangerous {
        return match sub_at.and_then(|at| risky_prefix(words, at, ctx)) {
            Some(end) => prefix(&words[..end]),
            None => exact(words),
        };
    }
    match sub_at {
        Some(at) if RUNNERS.contains(&words[at].as_str()) && at + 1 < words.len() => {
            prefix(&words[..at + 2])
        }
        Some(at) => prefix(&words[..=at]),
        None if start > 0 => prefix(&words[..=start]),
        None if is_interpreter(program) && words.get(1).is_some_and(|w| !w.starts_with('-')) => {
            prefix(&words[..2])
        }
        None => prefix(&words[..1]),
    }
}

fn subcommand_index(program: &str, words: &[String]) -> Option<usize> {
    if program == "git" {
        return git_subcommand(words).map(|(at, _)| at);
    }
    let at = words.iter().skip(1).position(|w| !w.starts_with('-'))? + 1;
    let word = &words[at];
    let looks_like = word
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':');
    looks_like.then_some(at)
}

/// The end of "subcommand and its options" when that prefix alone is risky.
fn risky_prefix(words: &[String], sub_at: usize, ctx: &Context) -> Option<usize> {
    let end = sub_at
        + 1
        + words[sub_at + 1..]
            .iter()
            .take_while(|w| w.starts_with('-'))
            .count();
    let head = SimpleCommand::derived(words[..end].to_vec(), Vec::new());
    let alone = Pipeline {
        commands: vec![head],
    };
    risky(&alone, &alone.commands[0], ctx).map(|_| end)
}

fn prefix(words: &[String]) -> String {
    format!("{}:*", shell_join(words))
}

/// The exact words as a pattern: shell-quoted, or glob-escaped when a word holds a glob
/// character (the pattern is then read as a glob that matches only these words).
fn exact(words: &[String]) -> String {
    if words.iter().any(|w| w.contains(['*', '?', '['])) {
        return words
            .iter()
            .map(|w| {
                w.chars().fold(String::new(), |mut out, c| {
                    if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
                        out.push('\\');
                    }
                    out.push(c);
                    out
                })
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    shell_join(words)
}

/// Words joined so that the pattern reader splits them back the same: quoted only when they
/// hold whitespace, quotes, a backslash or start a comment (`~` and `$` stay readable).
fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && !w.starts_with('#')
                && !w.contains(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '\\'));
            if plain {
                w.clone()
            } else {
                shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned())
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
