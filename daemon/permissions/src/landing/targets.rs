//! Per program: the words that name where it writes and how far each reaches, the folder a
//! `cd`-like command moves to, and whether this check sees all of a command's writes at all.

use super::super::agent_commands::AgentCommands;
use super::super::argv::{ArgOpts, git_subcommand, has_long, has_short, operands, option_value};
use super::super::parse::{SimpleCommand, unwrap_wrapper};
use super::super::readonly::is_read_only;
use super::super::writes::write_targets;
use super::Reach;

/// Shells whose `-c` string the parser reads as commands of its own.
const SHELLS: [&str; 6] = ["bash", "sh", "zsh", "dash", "ksh", "mksh"];

/// Programs whose file writes [`write_targets`] names completely.
const MODELED: &[&str] = &[
    "tee", "touch", "mkdir", "truncate", "rm", "rmdir", "unlink", "shred", "chmod", "chown",
    "chgrp", "cp", "mv", "install", "ln", "dd", "sort", "rsync", "scp", "tar", "unzip",
];

/// Builtins that write no file (their redirects aside) or whose effect is followed elsewhere
/// (`cd`, variables, `trap` actions are parsed now).
const QUIET_BUILTINS: &[&str] = &[
    ":",
    "[",
    "[[",
    "alias",
    "bg",
    "break",
    "cd",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "exit",
    "export",
    "false",
    "fg",
    "getopts",
    "hash",
    "jobs",
    "kill",
    "let",
    "local",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "{",
    "}",
    "!",
];

/// `curl` options that write a file [`write_targets`] does not name.
const CURL_WRITERS_SHORT: &str = "ODcJ";
const CURL_WRITERS_LONG: &[&str] = &[
    "remote-name",
    "remote-name-all",
    "remote-header-name",
    "output-dir",
    "dump-header",
    "cookie-jar",
    "trace",
    "trace-ascii",
    "libcurl",
    "stderr",
    "etag-save",
    "hsts",
    "alt-svc",
    "create-dirs",
];

/// The word a `cd`-like command moves to: `None` if `cmd` does not change folder,
/// `Some(None)` if where it goes is only known at run time (`cd -`, `popd`).
pub(super) fn cd_target(cmd: &SimpleCommand) -> Option<Option<String>> {
    let words = &cmd.words;
    match cmd.program()? {
        "cd" => {
            let ops = operands(words, ArgOpts::NONE);
            match ops.first().copied() {
                None => Some(Some("~".to_string())),
                Some("-") => Some(None),
                Some(t) => Some(Some(t.to_string())),
            }
        }
        "pushd" => match operands(words, ArgOpts::NONE).first() {
            Some(t) if !t.starts_with('+') && !t.starts_with('-') => Some(Some(t.to_string())),
            _ => Some(None),
        },
        "popd" => Some(None),
        "env" => option_value(words, 'C', "chdir").map(|d| Some(d.to_string())),
        "sudo" => option_value(words, 'D', "chdir").map(|d| Some(d.to_string())),
        _ => None,
    }
}

/// Every word `cmd` writes to, with how far it reaches.
pub(super) fn program_targets(cmd: &SimpleCommand) -> Vec<(String, Reach)> {
    let redirects = cmd.writes().len();
    let all = write_targets(cmd);
    let mut out: Vec<(String, Reach)> = all
        .iter()
        .take(redirects)
        .map(|t| (t.clone(), Reach::File))
        .collect();
    let named: Vec<String> = all.into_iter().skip(redirects).collect();
    let words = &cmd.words;
    let program = cmd.program().unwrap_or_default();
    let tree = |targets: Vec<String>| targets.into_iter().map(|t| (t, Reach::Tree));
    match program {
        "rm" | "rmdir" | "unlink" | "shred" | "chmod" | "chown" | "chgrp" | "rsync" | "scp"
        | "git" => out.extend(tree(named)),
        "cp" => {
            let recursive = ['r', 'R', 'a'].into_iter().any(|f| has_short(words, f))
                || has_long(words, "recursive")
                || has_long(words, "archive");
            let reach = if recursive {
                Reach::Tree
            } else {
                Reach::FileOrChild
            };
            out.extend(named.into_iter().map(|t| (t, reach)));
        }
        "mv" => {
            // The folder `-t` names comes first, else the destination is last.
            let dest = if option_value(words, 't', "target-directory").is_some() {
                0
            } else {
                named.len().saturating_sub(1)
            };
            for (i, t) in named.into_iter().enumerate() {
                let reach = if i == dest {
                    Reach::FileOrChild
                } else {
                    Reach::Tree
                };
                out.push((t, reach));
            }
        }
        "ln" => {
            out.extend(named.into_iter().map(|t| (t, Reach::FileOrChild)));
            out.extend(tree(link_sources(words)));
        }
        "install" => out.extend(named.into_iter().map(|t| (t, Reach::FileOrChild))),
        "tar" | "unzip" => {
            let extracts = named.is_empty() && extracts_here(program, words);
            out.extend(tree(named));
            if extracts {
                out.push((".".to_string(), Reach::Tree));
            }
        }
        _ => out.extend(named.into_iter().map(|t| (t, Reach::File))),
    }
    out
}

/// The files `ln` makes reachable under another name.
fn link_sources(words: &[String]) -> Vec<String> {
    let ops = operands(
        words,
        ArgOpts::new("tS", &["target-directory", "suffix", "backup"]),
    );
    let sources = if option_value(words, 't', "target-directory").is_some() || ops.len() == 1 {
        &ops[..]
    } else {
        &ops[..ops.len().saturating_sub(1)]
    };
    sources.iter().map(|s| s.to_string()).collect()
}

/// `tar -x` without `-C`, `unzip` without `-d`: they write into the current folder.
fn extracts_here(program: &str, words: &[String]) -> bool {
    if program == "unzip" {
        return !['l', 'p', 't', 'v', 'Z']
            .into_iter()
            .any(|f| has_short(words, f));
    }
    let first = words.get(1).map(String::as_str).unwrap_or_default();
    let old_style = !first.starts_with('-') && first.contains('x');
    old_style || has_short(words, 'x') || has_long(words, "extract") || has_long(words, "get")
}

/// Whether every file `cmd` may write is among its [`program_targets`] (or, for commands the
/// parser unwraps, among those of the command it starts).
pub(super) fn sees_all_writes(cmd: &SimpleCommand, agent: &AgentCommands) -> bool {
    let Some(first) = cmd.words.first() else {
        return true;
    };
    if first.contains(['$', '`']) {
        return false;
    }
    let program = cmd.program().unwrap_or_default();
    let args = cmd.words.get(1..).unwrap_or_default();
    let bare = !first.contains('/');
    if bare && agent.contains(program) {
        // Agent commands are judged again, with their real paths, when the shell runs them.
        return true;
    }
    if bare && QUIET_BUILTINS.contains(&program) {
        return true;
    }
    match program {
        "eval" => return !args.iter().any(|a| a.contains(['$', '`'])),
        "source" | "." | "fc" | "enable" | "history" | "xargs" | "parallel" => return false,
        _ => {}
    }
    let reader = if cmd.redirects.is_empty() {
        is_read_only(cmd)
    } else {
        is_read_only(&SimpleCommand {
            redirects: Vec::new(),
            ..cmd.clone()
        })
    };
    if reader || MODELED.contains(&program) {
        return true;
    }
    match program {
        "sed" => !sed_script_writes(&cmd.words),
        "curl" => {
            !CURL_WRITERS_SHORT.chars().any(|f| has_short(&cmd.words, f))
                && !CURL_WRITERS_LONG.iter().any(|l| has_long(&cmd.words, l))
        }
        "git" => matches!(git_subcommand(&cmd.words), Some((_, "clone"))),
        "find" | "fd" | "fdfind" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
            )
        }),
        shell if SHELLS.contains(&shell) => args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c')),
        _ => unwrap_wrapper(&cmd.words).is_some(),
    }
}

/// Whether a `sed` script may write a file (`w file`, `s/a/b/w file`) or run a command (`e`),
/// or comes from a file this check does not read.
fn sed_script_writes(words: &[String]) -> bool {
    if has_short(words, 'f') || has_long(words, "file") {
        return true;
    }
    let mut scripts: Vec<&str> = Vec::new();
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        if w == "-e" || w == "--expression" {
            scripts.extend(iter.next().map(String::as_str));
        } else if let Some(s) = w.strip_prefix("--expression=") {
            scripts.push(s);
        }
    }
    if scripts.is_empty() {
        scripts.extend(operands(words, ArgOpts::new("l", &["line-length"])).first());
    }
    scripts.iter().any(|s| writes_in_script(s))
}

/// A `w`, `W` or `e` where a sed command or an `s` flag can stand.
fn writes_in_script(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    chars.iter().enumerate().any(|(i, c)| {
        if !matches!(c, 'w' | 'W' | 'e') {
            return false;
        }
        let mut j = i;
        while j > 0 && "gpiImM0123456789".contains(chars[j - 1]) {
            j -= 1;
        }
        j == 0 || "/;{}!$,|#: \t\n".contains(chars[j - 1])
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::parse::parse;
    use super::*;

    fn first(line: &str) -> SimpleCommand {
        parse(line)
            .all_commands()
            .next()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn writers_reach_as_far_as_they_write() {
        let cases: &[(&str, &[(&str, Reach)])] = &[
            ("echo x > f", &[("f", Reach::File)]),
            ("rm -rf d", &[("d", Reach::Tree)]),
            ("cp a d", &[("d", Reach::FileOrChild)]),
            ("cp -r a d", &[("d", Reach::Tree)]),
            (
                "mv a b d",
                &[
                    ("a", Reach::Tree),
                    ("b", Reach::Tree),
                    ("d", Reach::FileOrChild),
                ],
            ),
            (
                "ln -s ~/.synapse l",
                &[("l", Reach::FileOrChild), ("~/.synapse", Reach::Tree)],
            ),
            ("tar xf a.tar", &[(".", Reach::Tree)]),
            ("tar -xf a.tar -C d", &[("d", Reach::Tree)]),
            ("unzip a.zip", &[(".", Reach::Tree)]),
            ("unzip -l a.zip", &[]),
        ];
        for (line, want) in cases {
            let got = program_targets(&first(line));
            let want: Vec<(String, Reach)> =
                want.iter().map(|(t, r)| (t.to_string(), *r)).collect();
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn writes_it_cannot_see_are_told() {
        for line in [
            "python3 -c 'open(\"x\", \"w\")'",
            "make install",
            "xargs rm",
            "sed 's/a/b/w out' f",
            "sed -n '1,3w out' f",
            "curl -O https://x/f",
            "git checkout f",
            "bash script.sh",
            "$cmd x",
            "source env.sh",
            "eval \"$x\"",
            "find . -delete",
        ] {
            assert!(
                !sees_all_writes(&first(line), &crate::test_support::AGENT_COMMANDS),
                "{line}"
            );
        }
        for line in [
            "cat f",
            "echo x",
            "sed -n '/deny/p' f",
            "sed -i s/a/b/ f",
            "curl -sSfLo out https://x",
            "git status",
            "bash -c 'echo hi'",
            "sudo tee f",
            "cp a b",
            "write f x",
            "cd /tmp",
            "x=1",
        ] {
            assert!(
                sees_all_writes(&first(line), &crate::test_support::AGENT_COMMANDS),
                "{line}"
            );
        }
    }
}
