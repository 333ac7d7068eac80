//! Commands known not to change files, for read-only mode where no OS sandbox backs it up:
//! anything not on this list counts as a possible writer. A known reader still loses its place
//! when it writes through a redirect or an option that writes or runs a program
//! (`sort -o`, `find -delete`, `rg --pre`, `git -c core.pager=…`).

use super::argv::{ArgOpts, git_subcommand, has_long, has_short, operands};
use super::parse::{SimpleCommand, unwrap_wrapper};

/// Programs that only read, whatever their arguments.
const READERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "ag",
    "stat",
    "file",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "which",
    "type",
    "uname",
    "whoami",
    "id",
    "ps",
    "uptime",
    "free",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "jq",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "cd",
    "nl",
    "tac",
    "rev",
    "od",
    "hexdump",
    "strings",
    "sleep",
    "seq",
    "expr",
    "nproc",
    "arch",
    "tty",
    "groups",
    "printenv",
    "locale",
    ":",
    "column",
    "paste",
    "join",
    "fold",
    "getconf",
    "lsblk",
    "lscpu",
    "whereis",
    "pgrep",
    "pidof",
];

/// `find` actions that delete, run programs or write files.
const FIND_WRITERS: &[&str] = &[
    "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Whether `cmd` is known not to write files (and has no write redirect).
pub fn is_read_only(cmd: &SimpleCommand) -> bool {
    if !cmd.writes().is_empty() {
        return false;
    }
    let Some(program) = cmd.program() else {
        return true;
    };
    let words = &cmd.words;
    let none_of = |flags: &[&str]| !words.iter().any(|w| flags.contains(&w.as_str()));
    match program {
        p if READERS.contains(&p) => true,
        "rg" => !has_long(words, "pre"),
        "find" => none_of(FIND_WRITERS),
        "fd" | "fdfind" => none_of(&["-x", "--exec", "-X", "--exec-batch"]),
        "tree" => !has_short(words, 'o'),
        "sort" => {
            !has_short(words, 'o')
                && !has_long(words, "output")
                && !has_long(words, "compress-program")
        }
        "uniq" => operands(words, ArgOpts::new("fsw", &[])).len() <= 1,
        "xxd" => operands(words, ArgOpts::new("cglos", &[])).len() <= 1,
        "date" => !has_short(words, 's') && !has_long(words, "set"),
        "hostname" => operands(words, ArgOpts::NONE).is_empty(),
        "yq" => !has_short(words, 'i') && !has_long(words, "inplace"),
        "git" => git_reads_only(words),
        "command" if has_short(words, 'v') || has_short(words, 'V') => true,
        "env" | "command" | "nice" | "nohup" | "timeout" | "stdbuf" | "time" => {
            match unwrap_wrapper(words) {
                Some(inner) => {
                    is_read_only(&SimpleCommand::derived(inner.words, inner.assignments))
                }
                None => program == "env",
            }
        }
        _ => false,
    }
}

/// Git subcommands that only read the repository.
fn git_reads_only(words: &[String]) -> bool {
    let Some((at, sub)) = git_subcommand(words) else {
        return false;
    };
    // `-c core.pager=…`, `--exec-path` and `--config-env` can make git run any program.
    let globals = &words[1..at];
    if globals
        .iter()
        .any(|w| w == "-c" || w.starts_with("--exec-path") || w.starts_with("--config-env"))
    {
        return false;
    }
    let rest = &words[at..];
    if rest
        .iter()
        .any(|w| w.starts_with("--output") || w == "-O" || w.starts_with("--open-files-in-pager"))
    {
        return false;
    }
    let only_flags = |allowed: &[&str]| rest.iter().skip(1).all(|w| allowed.contains(&w.as_str()));
    match sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "grep" | "describe" | "shortlog" | "cat-file" | "rev-list" | "merge-base"
        | "show-ref" | "whatchanged" => true,
        "branch" => only_flags(&[
            "-a",
            "-r",
            "--list",
            "-l",
            "-v",
            "-vv",
            "--all",
            "--remotes",
            "--verbose",
            "--show-current",
            "--no-color",
        ]),
        "remote" => only_flags(&["-v", "--verbose"]),
        "tag" => only_flags(&["-l", "--list"]),
        "stash" => matches!(rest.get(1).map(String::as_str), Some("list" | "show")),
        "config" => ["--get", "--get-all", "--get-regexp", "--list", "-l"]
            .iter()
            .any(|f| rest.iter().any(|w| w == f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn read_only(command: &str) -> bool {
        parse(command).all_commands().all(is_read_only)
    }

    #[test]
    fn readers_are_read_only() {
        for cmd in [
            "ls -la",
            "cat a b | grep -n x | wc -l",
            "find . -name '*.rs' -type f",
            "rg -n foo src",
            "git status -s",
            "git log --oneline -5",
            "git -C repo diff HEAD~1",
            "git branch -a",
            "git remote -v",
            "git config --get user.name",
            "sort -u names",
            "uniq lines",
            "echo hi > /dev/null 2>&1",
            "env",
            "command -v cargo",
            "env LC_ALL=C sort f",
            "timeout 5 cat f",
            "X=1",
            "cd src && ls",
            "[ -f x ] && echo yes",
        ] {
            assert!(read_only(cmd), "{cmd} should be read-only");
        }
    }

    #[test]
    fn writers_and_unknown_programs_are_not() {
        for cmd in [
            "echo hi > out",
            "cat a >> b",
            "find . -delete",
            "find . -exec rm {} ;",
            "fd -x rm",
            "sort -o out in",
            "sort --compress-program=sh f",
            "uniq in out",
            "rg --pre ./script x",
            "git push",
            "git commit -m x",
            "git branch -D x",
            "git branch new",
            "git -c core.pager=sh log",
            "git diff --output=patch",
            "git config user.name x",
            "date -s 2020-01-01",
            "hostname newname",
            "touch x",
            "npm test",
            "less file",
            "awk '{print}' f",
            "sed s/a/b/ f",
            "env rm x",
            "python3 script.py",
        ] {
            assert!(!read_only(cmd), "{cmd} should not be read-only");
        }
    }
}
