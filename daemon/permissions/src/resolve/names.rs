//! Fixed facts about command names: bash's builtins and keywords, programs known not to start
//! other programs, and how a shell is told to read its commands from stdin. The agent's own
//! commands are not among them: the daemon's registry names those ([`AgentCommands`]).

use super::super::agent_commands::AgentCommands;

/// Bash builtins and reserved words: never looked up on `PATH`.
const BUILTINS: &[&str] = &[
    ":",
    ".",
    "[",
    "[[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
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
    "source",
    "suspend",
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
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "function",
    "time",
    "coproc",
    "{",
    "}",
    "!",
];

/// Programs that run no program named in their arguments (commit messages, patterns and file
/// names that happen to read like `rm` are not commands there).
const PLAIN_PROGRAMS: &[&str] = &[
    "git", "grep", "egrep", "fgrep", "rg", "ag", "cat", "ls", "head", "tail", "wc", "sort", "uniq",
    "cut", "tr", "sed", "man", "which", "whereis", "type", "apropos", "whatis", "file", "stat",
    "du", "df", "diff", "cmp", "mkdir", "rmdir", "touch", "cp", "mv", "rm", "ln", "chmod", "chown",
    "tar", "zip", "unzip", "gzip", "gunzip", "curl", "wget", "jq", "yq", "npm", "npx", "pnpm",
    "yarn", "cargo", "rustc", "go", "pip", "pip3", "uv", "apt", "apt-get", "dnf", "yum", "brew",
    "make", "cmake", "docker", "kubectl", "gh", "code", "vim", "nano", "less", "more", "tee",
    "basename", "dirname", "realpath", "readlink", "date", "sleep", "kill", "pkill", "pgrep", "ps",
    "top", "env", "printenv", "id", "whoami", "uname", "hostname", "tree", "awk", "python",
    "python3", "node", "ruby", "perl", "mcp", "skill", "synapse",
];

const SHELLS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "busybox-sh",
];

pub(super) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

pub(super) fn is_plain_program(name: &str, agent: &AgentCommands) -> bool {
    PLAIN_PROGRAMS.contains(&name)
        || name.starts_with("mcp:")
        || name.starts_with("skill:")
        || agent.contains(name)
}

/// The shell's name when `words` start a shell that reads its commands from stdin (`bash`,
/// `bash -s …`, `sh -`, `bash /dev/stdin`, `bash <(…)`); `None` for `bash -c …` and
/// `bash script.sh`.
pub(super) fn stdin_shell(words: &[String]) -> Option<&str> {
    let program = words.first()?.rsplit('/').next()?;
    if !SHELLS.contains(&program) {
        return None;
    }
    let mut i = 1;
    let mut from_stdin = false;
    while let Some(w) = words.get(i) {
        if w == "--" || w == "-" {
            from_stdin |= w == "-";
            i += 1;
            break;
        }
        if w.starts_with("--") {
            i += if matches!(w.as_str(), "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if w.len() > 1 && (w.starts_with('-') || w.starts_with('+')) {
            if w.contains('c') {
                return None;
            }
            from_stdin |= w.contains('s');
            i += if w.contains('o') || w.contains('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let reads_stdin = match words.get(i) {
        None => true,
        Some(script) => {
            script == "/dev/stdin"
                || script.starts_with("/dev/fd/")
                || (script.starts_with("/proc/") && script.contains("/fd/"))
                || script.starts_with("<(")
                || script.contains("$(")
        }
    };
    (from_stdin || reads_stdin).then_some(program)
}
