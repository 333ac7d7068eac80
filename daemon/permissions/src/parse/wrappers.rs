//! Commands that run other commands: `sudo`, `env`, `xargs`, `nice`, `timeout`, … (their
//! wrapped command is added after them), `bash -c` and `eval` (their string is parsed as a
//! command string of its own), `find -exec` / `fd -x` (the executed command is added), and
//! `source` / `.` (reported as opaque: the file is not read).

use super::SimpleCommand;
use super::cursor::Parser;
use super::launchers;
use super::words::is_assignment;

/// How many wrappers deep (`sudo env nice timeout …`) are followed.
const MAX_WRAPPER_DEPTH: usize = 8;
/// Shells whose `-c STRING` is parsed.
const SHELLS: [&str; 6] = ["bash", "sh", "zsh", "dash", "ksh", "mksh"];

/// The command a wrapper starts, with the assignments it sets (`env A=1 cmd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unwrapped {
    pub assignments: Vec<String>,
    pub words: Vec<String>,
}

/// Which options of a wrapper take a separate argument.
pub(super) struct Opts {
    pub(super) short_arg: &'static str,
    pub(super) long_arg: &'static [&'static str],
}

impl Parser {
    /// The commands `cmd` starts through a wrapper (recursively); `bash -c` and `eval` strings
    /// are parsed straight into the output.
    pub(super) fn expand_wrappers(
        &mut self,
        cmd: &SimpleCommand,
        level: usize,
    ) -> Vec<SimpleCommand> {
        let mut out = Vec::new();
        let Some(program) = cmd.program() else {
            return out;
        };
        if level > MAX_WRAPPER_DEPTH {
            self.opaque(format!(
                "more than {MAX_WRAPPER_DEPTH} nested wrappers in `{}`",
                cmd.text
            ));
            return out;
        }
        let start = self.pos;
        match program {
            "source" | "." => self.opaque(format!(
                "`{}` runs commands from a file this check cannot see into",
                cmd.text
            )),
            "eval" => {
                let text = cmd.words.get(1..).unwrap_or_default().join(" ");
                if !text.trim().is_empty() {
                    self.parse_string(&text, "in `eval`", start);
                }
            }
            "watch" => {
                let at = skip_options(
                    &cmd.words,
                    1,
                    &Opts {
                        short_arg: "nq",
                        long_arg: &["interval", "equexit"],
                    },
                );
                let text = cmd.words.get(at..).unwrap_or_default().join(" ");
                if !text.trim().is_empty() {
                    self.parse_string(&text, "in `watch`", start);
                }
            }
            "su" | "runuser" => {
                if let Some(script) = su_command(&cmd.words) {
                    self.parse_string(&script, &format!("in `{program} -c`"), start);
                }
            }
            shell if SHELLS.contains(&shell) => {
                if let Some(Some(script)) = shell_c_string(&cmd.words) {
                    self.parse_string(&script, &format!("in `{shell} -c`"), start);
                }
            }
            "trap" => {
                // The action runs later, in this shell: its commands are judged now.
                if let Some(action) = cmd.words.get(1).filter(|a| !a.starts_with('-')) {
                    self.parse_string(action, "in `trap`", start);
                }
            }
            launcher if !launchers::command_strings(launcher, &cmd.words).is_empty() => {
                for script in launchers::command_strings(launcher, &cmd.words) {
                    self.parse_string(&script, &format!("in `{launcher}`"), start);
                }
            }
            launcher if launchers::unreadable(launcher, &cmd.words).is_some() => {
                if let Some(reason) = launchers::unreadable(launcher, &cmd.words) {
                    self.opaque(reason);
                }
            }
            "find" | "fd" | "fdfind" => {
                for words in exec_commands(program, &cmd.words) {
                    self.push_derived(words, Vec::new(), level, &mut out);
                }
            }
            _ => {
                if let Some(u) = unwrap_wrapper(&cmd.words) {
                    self.push_derived(u.words, u.assignments, level, &mut out);
                }
            }
        }
        out
    }

    fn push_derived(
        &mut self,
        words: Vec<String>,
        assignments: Vec<String>,
        level: usize,
        out: &mut Vec<SimpleCommand>,
    ) {
        if let Some(first) = words.first().filter(|w| w.contains('$') || w.contains('`')) {
            self.unknown_program(first);
        }
        let derived = SimpleCommand::derived(words, assignments);
        let more = self.expand_wrappers(&derived, level + 1);
        out.push(derived);
        out.extend(more);
    }
}

/// The command a wrapper such as `sudo -u x`, `env A=1`, `nice -n 5`, `timeout 10`, `xargs -0`
/// runs; `None` when `words` is not such a wrapper or it runs nothing (`env`, `command -v x`).
pub(crate) fn unwrap_wrapper(words: &[String]) -> Option<Unwrapped> {
    let program = words.first()?.rsplit('/').next()?;
    let opts = |short_arg, long_arg| Opts {
        short_arg,
        long_arg,
    };
    let (start, takes_assignments) = match program {
        "env" => return unwrap_env(words),
        "nohup" | "builtin" | "setsid" => (skip_options(words, 1, &opts("", &[])), false),
        "ionice" => (
            skip_options(words, 1, &opts("cnp", &["class", "classdata", "pid"])),
            false,
        ),
        "nice" => (skip_options(words, 1, &opts("n", &["adjustment"])), false),
        "timeout" => (
            skip_options(words, 1, &opts("sk", &["signal", "kill-after"])) + 1,
            false,
        ),
        "sudo" => {
            let end = skip_options(words, 1, &opts("CDghprtTUu", SUDO_LONG_ARG));
            if has_short_flag(&words[1..end], "elV")
                || has_long(&words[1..end], &["edit", "list", "version"])
            {
                return None;
            }
            (end, true)
        }
        "doas" => (skip_options(words, 1, &opts("uC", &[])), false),
        "exec" => (skip_options(words, 1, &opts("a", &[])), false),
        "command" => {
            let end = skip_options(words, 1, &opts("", &[]));
            if has_short_flag(&words[1..end], "vV") {
                return None;
            }
            (end, false)
        }
        "time" => (
            skip_options(words, 1, &opts("fo", &["format", "output"])),
            false,
        ),
        "stdbuf" => (
            skip_options(words, 1, &opts("ioe", &["input", "output", "error"])),
            false,
        ),
        "xargs" => (
            skip_options(words, 1, &opts("adEILnPs", XARGS_LONG_ARG)),
            false,
        ),
        other => return launchers::unwrap_launcher(other, words),
    };
    split_command(words, start, takes_assignments)
}

const SUDO_LONG_ARG: &[&str] = &[
    "chdir",
    "close-from",
    "group",
    "host",
    "prompt",
    "role",
    "type",
    "command-timeout",
    "other-user",
    "user",
];
const XARGS_LONG_ARG: &[&str] = &[
    "arg-file",
    "delimiter",
    "eof",
    "replace",
    "max-lines",
    "max-args",
    "max-procs",
    "max-chars",
    "process-slot-var",
];

/// `words[start..]` as assignments (when allowed) followed by a command.
pub(super) fn split_command(
    words: &[String],
    start: usize,
    takes_assignments: bool,
) -> Option<Unwrapped> {
    let rest = words.get(start..)?;
    let split = if takes_assignments {
        rest.iter().take_while(|w| is_assignment(w)).count()
    } else {
        0
    };
    let command = rest.get(split..)?;
    if command.is_empty() {
        return None;
    }
    Some(Unwrapped {
        assignments: rest[..split].to_vec(),
        words: command.to_vec(),
    })
}

/// `env [-i] [-u N] [-C DIR] [-S STRING] [VAR=x…] CMD…`.
fn unwrap_env(words: &[String]) -> Option<Unwrapped> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let split = if w == "-S" || w == "--split-string" {
            i += 1;
            words.get(i).cloned()
        } else if let Some(s) = w.strip_prefix("--split-string=") {
            Some(s.to_string())
        } else if w.starts_with("-S") && !w.starts_with("--") {
            Some(w[2..].to_string())
        } else {
            None
        };
        if let Some(s) = split {
            let mut expanded = shlex::split(&s)?;
            expanded.extend(words.get(i + 1..).unwrap_or_default().iter().cloned());
            expanded.insert(0, "env".to_string());
            return split_command(&expanded, 1, true);
        }
        if w == "--" {
            i += 1;
            break;
        }
        if w == "-" {
            i += 1;
            continue;
        }
        match option_width(
            words,
            i,
            &Opts {
                short_arg: "uC",
                long_arg: &["unset", "chdir"],
            },
        ) {
            Some(width) => i += width,
            None => break,
        }
    }
    split_command(words, i, true)
}

/// Index of the first word at or after `i` that is not an option (or after `--`).
pub(super) fn skip_options(words: &[String], mut i: usize, opts: &Opts) -> usize {
    while let Some(w) = words.get(i) {
        if w == "--" {
            return i + 1;
        }
        match option_width(words, i, opts) {
            Some(width) => i += width,
            None => return i,
        }
    }
    i.min(words.len())
}

/// How many words the option at `i` spans (1, or 2 with a separate argument); `None` when
/// `words[i]` is not an option.
fn option_width(words: &[String], i: usize, opts: &Opts) -> Option<usize> {
    let w = words.get(i)?;
    if let Some(long) = w.strip_prefix("--") {
        let separate = !long.contains('=') && opts.long_arg.contains(&long);
        return Some(if separate { 2 } else { 1 });
    }
    if w.len() < 2 || !w.starts_with('-') {
        return None;
    }
    let cluster: Vec<char> = w.chars().skip(1).collect();
    let arg_at = cluster.iter().position(|c| opts.short_arg.contains(*c));
    Some(match arg_at {
        Some(k) if k + 1 == cluster.len() => 2,
        _ => 1,
    })
}

/// Whether a short option cluster among `words` holds any of `flags`.
fn has_short_flag(words: &[String], flags: &str) -> bool {
    words
        .iter()
        .filter(|w| w.starts_with('-') && !w.starts_with("--"))
        .any(|w| w.chars().skip(1).any(|c| flags.contains(c)))
}

fn has_long(words: &[String], names: &[&str]) -> bool {
    words
        .iter()
        .filter_map(|w| w.strip_prefix("--"))
        .any(|l| names.contains(&l.split('=').next().unwrap_or(l)))
}

/// For `bash -c STRING …`: `Some(Some(STRING))`; `Some(None)` when `-c` has no string; `None`
/// without `-c`.
fn shell_c_string(words: &[String]) -> Option<Option<String>> {
    let mut i = 1;
    let mut c_flag = false;
    while let Some(w) = words.get(i) {
        if w == "--" || w == "-" {
            i += 1;
            break;
        }
        if w.starts_with("--") {
            i += if w == "--rcfile" || w == "--init-file" {
                2
            } else {
                1
            };
        } else if w.len() > 1 && (w.starts_with('-') || w.starts_with('+')) {
            c_flag |= w.contains('c');
            i += if w.contains('o') || w.contains('O') {
                2
            } else {
                1
            };
        } else {
            break;
        }
    }
    c_flag.then(|| words.get(i).cloned())
}

/// The command string of `su [-] [user] -c CMD` / `--command=CMD`.
fn su_command(words: &[String]) -> Option<String> {
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        if w == "-c" || w == "--command" {
            return iter.next().cloned();
        }
        if let Some(cmd) = w.strip_prefix("--command=") {
            return Some(cmd.to_string());
        }
    }
    None
}

/// The commands `find … -exec CMD … ;` (also `-execdir`, `-ok`, `-okdir`) or `fd … -x CMD…`
/// would run.
fn exec_commands(program: &str, words: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        if program != "find" {
            if matches!(w.as_str(), "-x" | "--exec" | "-X" | "--exec-batch") {
                found.push(iter.by_ref().cloned().collect());
            }
            continue;
        }
        if !matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let mut command: Vec<String> = Vec::new();
        for arg in iter.by_ref() {
            if arg == ";" || (arg == "+" && command.last().is_some_and(|l| l == "{}")) {
                break;
            }
            command.push(arg.clone());
        }
        found.push(command);
    }
    found.retain(|c| !c.is_empty());
    found
}
