//! Less common programs that start another program: process tools (`flock`, `strace`,
//! `taskset`, `chrt`, `numactl`, `unshare`, `setpriv`, `prlimit`, `valgrind`, …), multi-call
//! binaries (`busybox rm`), and the ones that take a command *string* (`script -c`, `flock -c`,
//! `sg`, `hyperfine`). [`unwrap_launcher`] gives the command words a launcher starts;
//! [`command_strings`] the strings to parse as command lines of their own; [`unreadable`] names
//! the launchers whose command cannot be picked out of their arguments (they make the line
//! opaque rather than let a guess through).

use super::wrappers::{Opts, Unwrapped, skip_options, split_command};

/// One launcher: which options take a separate argument, and how many operands come before the
/// command (`taskset MASK cmd`, `flock FILE cmd`).
struct Launcher {
    name: &'static str,
    opts: Opts,
    operands: usize,
    /// Options after which there is no command (`taskset -p`, `chrt -p`, `prlimit -p`).
    no_command: &'static str,
}

const fn l(
    name: &'static str,
    short_arg: &'static str,
    long_arg: &'static [&'static str],
    operands: usize,
    no_command: &'static str,
) -> Launcher {
    Launcher {
        name,
        opts: Opts {
            short_arg,
            long_arg,
        },
        operands,
        no_command,
    }
}

const LAUNCHERS: &[Launcher] = &[
    l(
        "flock",
        "wEc",
        &["timeout", "wait", "conflict-exit-code", "command"],
        1,
        "c",
    ),
    l(
        "strace",
        "eoOpsuESPIbaX",
        &[
            "output",
            "signal",
            "attach",
            "user",
            "env",
            "trace",
            "string-limit",
        ],
        0,
        "p",
    ),
    l("ltrace", "eopsunaAlLxFS", &["output", "library"], 0, "p"),
    l("taskset", "", &[], 1, "p"),
    l(
        "chrt",
        "TPD",
        &["sched-runtime", "sched-period", "sched-deadline"],
        1,
        "pm",
    ),
    l(
        "numactl",
        "CNmPpilw",
        &[
            "physcpubind",
            "cpunodebind",
            "membind",
            "preferred",
            "interleave",
            "localalloc",
        ],
        0,
        "HS",
    ),
    l(
        "unshare",
        "SGRw",
        &["setuid", "setgid", "root", "wd"],
        0,
        "",
    ),
    l("nsenter", "tSGrwT", &["target", "setuid", "setgid"], 0, ""),
    l(
        "setpriv",
        "",
        &["reuid", "regid", "groups", "inh-caps", "bounding-set"],
        0,
        "d",
    ),
    l("prlimit", "p", &["pid"], 0, "p"),
    l("valgrind", "", &[], 0, ""),
    l("firejail", "", &[], 0, ""),
    l("catchsegv", "", &[], 0, ""),
    l(
        "dbus-run-session",
        "",
        &["config-file", "dbus-daemon"],
        0,
        "",
    ),
    l(
        "xvfb-run",
        "nsfepw",
        &["server-num", "server-args", "auth-file", "error-file"],
        0,
        "",
    ),
    l(
        "torsocks",
        "uapP",
        &["user", "pass", "address", "port"],
        0,
        "",
    ),
    l("proxychains", "f", &[], 0, ""),
    l("proxychains4", "f", &[], 0, ""),
    l("faketime", "f", &[], 1, ""),
    l("unbuffer", "", &[], 0, ""),
    l("rlwrap", "aAbcCDefHiIlmMnNoOpPqrRsStTvwWz", &[], 0, ""),
    l("caffeinate", "tw", &[], 0, ""),
    l("fakeroot", "ils", &["lib", "faked"], 0, ""),
    l("entr", "", &[], 0, ""),
    l("cgexec", "g", &[], 0, ""),
    l("chroot", "", &["userspec", "groups"], 1, ""),
    l("runcon", "turl", &["type", "user", "role", "range"], 0, ""),
    l(
        "systemd-run",
        "pEuMH",
        &[
            "property",
            "setenv",
            "unit",
            "machine",
            "host",
            "description",
            "slice",
            "uid",
            "gid",
            "working-directory",
        ],
        0,
        "",
    ),
    l("ssh-agent", "aEtP", &[], 0, "kD"),
    l("sem", "j", &["jobs", "id"], 0, ""),
    l("busybox", "", &[], 0, ""),
    l("toybox", "", &[], 0, ""),
    l("perf", "", &[], 1, ""),
    l("gdb", "", &[], 0, ""),
];

/// The command words a launcher starts; `None` when `words` does not start a launcher or it runs
/// no command this way.
pub(super) fn unwrap_launcher(program: &str, words: &[String]) -> Option<Unwrapped> {
    let launcher = LAUNCHERS.iter().find(|x| x.name == program)?;
    if !command_strings(program, words).is_empty() {
        return None;
    }
    if program == "gdb" {
        let at = words.iter().position(|w| w == "--args")?;
        return split_command(words, at + 1, false);
    }
    let end = skip_options(words, 1, &launcher.opts);
    let options = words.get(1..end).unwrap_or_default();
    let stops = |w: &String| {
        w.starts_with('-')
            && !w.starts_with("--")
            && w.chars().skip(1).any(|c| launcher.no_command.contains(c))
    };
    if options.iter().any(stops) || options.iter().any(|w| w == "--command") {
        return None;
    }
    split_command(words, end + launcher.operands, false)
}

/// Command strings a launcher runs through a shell: `script -c STR`, `flock … -c STR`,
/// `sg GROUP [-c] STR`, `hyperfine STR…`.
pub(super) fn command_strings(program: &str, words: &[String]) -> Vec<String> {
    let after_flag = |flags: &[&str]| -> Vec<String> {
        let mut found = Vec::new();
        let mut iter = words.iter().skip(1);
        while let Some(w) = iter.next() {
            let cluster = w.starts_with('-') && !w.starts_with("--") && w.ends_with('c');
            if flags.contains(&w.as_str()) || cluster {
                found.extend(iter.next().cloned());
            } else if let Some(s) = w.strip_prefix("--command=") {
                found.push(s.to_string());
            }
        }
        found
    };
    match program {
        "script" => after_flag(&["-c", "--command"]),
        "flock" => after_flag(&["-c", "--command"]),
        "sg" => {
            let rest: Vec<&String> = words.iter().skip(2).filter(|w| *w != "-c").collect();
            rest.first().map(|s| s.to_string()).into_iter().collect()
        }
        "hyperfine" => {
            let mut found = Vec::new();
            let mut iter = words.iter().skip(1);
            while let Some(w) = iter.next() {
                if w.starts_with('-') {
                    // Options that take a value carry commands too (`--prepare`, `--setup`).
                    if matches!(
                        w.as_str(),
                        "-p" | "--prepare" | "-s" | "--setup" | "-c" | "--cleanup"
                    ) {
                        found.extend(iter.next().cloned());
                    } else if !w.contains('=') && HYPERFINE_VALUE_OPTS.contains(&w.as_str()) {
                        iter.next();
                    }
                } else {
                    found.push(w.clone());
                }
            }
            found
        }
        _ => Vec::new(),
    }
}

const HYPERFINE_VALUE_OPTS: &[&str] = &[
    "-w",
    "--warmup",
    "-m",
    "--min-runs",
    "-M",
    "--max-runs",
    "-r",
    "--runs",
    "-S",
    "--shell",
    "-u",
    "--time-unit",
    "-n",
    "--command-name",
    "--export-json",
    "--export-markdown",
    "--export-csv",
    "--output",
    "--style",
    "-L",
    "--parameter-list",
    "-P",
    "--parameter-scan",
    "-D",
    "--parameter-step-size",
    "--sort",
];

/// Launchers whose command cannot be picked out of their arguments: the reason, or `None`.
pub(super) fn unreadable(program: &str, words: &[String]) -> Option<String> {
    let text = super::join_words(words);
    match program {
        "bwrap" | "parallel" | "xe" | "rush" => Some(format!(
            "`{text}` starts commands this check cannot pick out of its arguments"
        )),
        "script" if command_strings(program, words).is_empty() => Some(format!(
            "`{text}` starts an interactive shell whose commands this check cannot see"
        )),
        _ => None,
    }
}
