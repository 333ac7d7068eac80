//! Spotting writes to a shell variable in a command line: `VAR=…`, `VAR+=…`, `${VAR:=…}`,
//! `for VAR in`, and builtins that set a variable they are given by name (`read VAR`,
//! `export VAR=…`, `printf -v VAR`, `unset VAR`, or a name only known at run time).

use super::super::parse::SimpleCommand;

/// Builtins that set or remove variables named by their arguments.
const VAR_WRITERS: [&str; 12] = [
    "declare",
    "typeset",
    "export",
    "readonly",
    "local",
    "read",
    "printf",
    "mapfile",
    "readarray",
    "getopts",
    "unset",
    "let",
];

/// `word` assigns `var` (`PATH=…`, `PATH+=…`).
pub(super) fn assigns(word: &str, var: &str) -> bool {
    word.strip_prefix(var)
        .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="))
}

/// How many times `line` assigns `var` in its text (`VAR=`, `VAR+=`, `${VAR:=`, `${VAR=`,
/// `for VAR in`).
pub(super) fn mentions(line: &str, var: &str) -> usize {
    let bytes = line.as_bytes();
    let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut count = 0;
    for (at, _) in line.match_indices(var) {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let rest = &line[at + var.len()..];
        if rest.bytes().next().is_some_and(word_char) || before.is_some_and(word_char) {
            continue;
        }
        let assigned = rest.starts_with('=') || rest.starts_with("+=");
        let default_assign =
            before == Some(b'{') && (rest.starts_with(":=") || rest.starts_with('='));
        let loop_var =
            line[..at].trim_end().ends_with("for") && rest.trim_start().starts_with("in");
        if (assigned && before != Some(b'$')) || default_assign || loop_var {
            count += 1;
        }
    }
    count
}

/// `cmd` is a builtin that may set `var` through its arguments (named, or named at run time).
pub(super) fn writes_var(cmd: &SimpleCommand, var: &str) -> bool {
    let Some(program) = cmd.words.first() else {
        return false;
    };
    if !VAR_WRITERS.contains(&program.as_str()) {
        return false;
    }
    cmd.words[1..].iter().any(|a| {
        let name = a.split('=').next().unwrap_or(a);
        a == var || assigns(a, var) || name.contains('$') || name.contains('`')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_count_and_reads_do_not() {
        assert_eq!(mentions("PATH=/x:$PATH ls", "PATH"), 1);
        assert_eq!(mentions("export PATH+=:/x", "PATH"), 1);
        assert_eq!(mentions("echo ${PATH:=/evil}", "PATH"), 1);
        assert_eq!(mentions("for PATH in /a; do :; done", "PATH"), 1);
        assert_eq!(mentions("echo $PATH ${PATH} ${PATH:-x}", "PATH"), 0);
        assert_eq!(mentions("MANPATH=/x PYTHONPATH=y grep PATH f", "PATH"), 0);
    }
}
