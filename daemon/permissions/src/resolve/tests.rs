//! The bypass corpus: under the deny rule `rm:*`, every way of reaching `rm` through shell
//! syntax or the shell's own state is refused or asked about, never allowed — in every mode.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::super::policy::{Action, Decision, Mode, decide_in_shell};
use super::super::rules::RuleSet;
use super::super::test_support::ctx;
use super::*;

fn deny_rm() -> RuleSet {
    let (rules, problems) = RuleSet::from_json(
        &json!({"bash": {"deny": ["rm:*"], "allow": ["ls:*", "mywrap:*"]}}),
        "settings.json",
    );
    assert!(problems.is_empty(), "{problems:?}");
    rules
}

fn state_after(lines: &[&str]) -> ShellState {
    let mut state = ShellState::default();
    for line in lines {
        state.record(line);
    }
    state
}

fn code(d: &Decision) -> &'static str {
    match d {
        Decision::Allow { .. } => "A",
        Decision::Ask { .. } => "Q",
        Decision::Deny { .. } => "D",
    }
}

/// Columns: auto, ask, read-only (sandboxed), yolo.
fn codes(command: &str, state: &ShellState) -> [&'static str; 4] {
    let rules = deny_rm();
    let run = |mode, sandboxed| {
        let d = decide_in_shell(
            &Action::Native { command },
            mode,
            &rules,
            &ctx(sandboxed),
            state,
        );
        code(&d)
    };
    [
        run(Mode::Auto, true),
        run(Mode::Ask, true),
        run(Mode::ReadOnly, true),
        run(Mode::Yolo, false),
    ]
}

#[test]
fn syntax_that_hides_rm_never_passes() {
    let plain = ShellState::default();
    let table: &[(&str, [&str; 4])] = &[
        ("bash <<< 'rm -rf x'", ["D", "D", "D", "D"]),
        ("bash -s <<< \"rm x\"", ["D", "D", "D", "D"]),
        ("echo 'rm -rf x' | bash", ["Q", "Q", "D", "Q"]),
        ("cat cmds | sh -s", ["Q", "Q", "D", "Q"]),
        ("bash /dev/stdin < cmds", ["Q", "Q", "D", "Q"]),
        ("bash <(echo rm x)", ["Q", "Q", "D", "Q"]),
        ("{rm,-rf,x}", ["Q", "Q", "D", "Q"]),
        ("/bin/r? -rf x", ["Q", "Q", "D", "Q"]),
        ("/usr/bin/r[m] x", ["Q", "Q", "D", "Q"]),
        ("flock /tmp/l rm x", ["D", "D", "D", "D"]),
        ("flock /tmp/l -c 'rm x'", ["D", "D", "D", "D"]),
        ("strace -f -o /dev/null rm x", ["D", "D", "D", "D"]),
        ("taskset -c 0 rm x", ["D", "D", "D", "D"]),
        ("script -qc 'rm x' /dev/null", ["D", "D", "D", "D"]),
        ("busybox rm x", ["D", "D", "D", "D"]),
        ("chrt -f 1 rm x", ["D", "D", "D", "D"]),
        ("env -S 'rm x'", ["D", "D", "D", "D"]),
        ("nice -n 5 timeout 3 rm x", ["D", "D", "D", "D"]),
        ("mywrap --quiet rm x", ["Q", "Q", "D", "Q"]),
        ("find . -exec {} \\;", ["Q", "Q", "D", "Q"]),
        ("trap 'rm -rf x' EXIT", ["D", "D", "D", "D"]),
        ("__synapse_agent() { ls; }", ["D", "D", "D", "D"]),
        ("alias __synapse_read_is_agent=true", ["D", "D", "D", "D"]),
        ("BASH_ENV=./x bash run.sh", ["Q", "Q", "D", "Q"]),
        ("trap \"$(printf x)\" DEBUG", ["Q", "Q", "D", "Q"]),
        ("trap 'echo hi' RETURN", ["Q", "Q", "D", "Q"]),
        ("trap 'echo bye' EXIT", ["A", "Q", "A", "A"]),
        ("enable -f ./evil.so ls", ["Q", "Q", "D", "Q"]),
        (
            "env 'BASH_FUNC_x%%=() { rm victim; }' bash -c x",
            ["D", "D", "D", "D"],
        ),
        (
            r#"env "BASH_FUNC_x%%=$(cat f)" bash -c x"#,
            ["Q", "Q", "D", "Q"],
        ),
        (
            r#"env BASH_FUNC_x%%="$body" bash -c x"#,
            ["Q", "Q", "D", "Q"],
        ),
        (
            "env 'BASH_FUNC_x()=() { :; }' bash -c x",
            ["Q", "Q", "D", "Q"],
        ),
        ("x() { ls; }; export -f x; bash -c x", ["Q", "Q", "D", "Q"]),
        (
            "x() { ls; }; declare -fx x; bash run.sh",
            ["Q", "Q", "D", "Q"],
        ),
    ];
    for (command, want) in table {
        assert_eq!(codes(command, &plain), *want, "{command}");
    }
}

#[test]
fn state_kept_in_the_shell_is_resolved() {
    let cases: &[(&[&str], &str, [&str; 4])] = &[
        (
            &["alias read='rm -f'"],
            "read notes.txt",
            ["D", "D", "D", "D"],
        ),
        (&["alias ll='ls -la'"], "ll", ["A", "Q", "A", "A"]),
        (
            &["alias a=b", "alias b='rm -f'"],
            "a x",
            ["D", "D", "D", "D"],
        ),
        (
            &["alias x='rm -f'", "unalias x"],
            "x y",
            ["A", "Q", "A", "A"],
        ),
        (&["hash -p /bin/rm ls"], "ls x", ["D", "D", "D", "D"]),
        (&["read() { \"$@\"; }"], "read rm x", ["Q", "Q", "D", "Q"]),
        (&["f() { :; }", "unset -f f"], "f", ["A", "Q", "A", "A"]),
        (&["PATH=/tmp/evil:$PATH"], "ls x", ["Q", "Q", "D", "Q"]),
        (
            &["export PATH=./bin:$PATH"],
            "cd x && echo ok",
            ["A", "Q", "A", "A"],
        ),
        (&["trap \"$HOOK\" DEBUG"], "ls", ["Q", "Q", "D", "Q"]),
        (
            &["trap 'echo hi' DEBUG", "trap - DEBUG"],
            "ls",
            ["A", "A", "A", "A"],
        ),
        (&["export BASH_ENV=/tmp/x"], "ls", ["Q", "Q", "D", "Q"]),
        (
            &[r#"export "BASH_FUNC_ls%%=() { rm -rf x; }""#],
            "bash -c ls",
            ["Q", "Q", "D", "Q"],
        ),
        (
            &[r#"env BASH_FUNC_f%%="$b" true"#],
            "ls",
            ["Q", "Q", "D", "Q"],
        ),
        (&["enable -f ./evil.so ls"], "ls", ["Q", "Q", "D", "Q"]),
        (&["source ./env.sh"], "ls", ["Q", "Q", "D", "Q"]),
        (
            &["cmd=alias", "$cmd ls='rm -f'"],
            "ls",
            ["Q", "Q", "D", "Q"],
        ),
        (
            &["command_not_found_handle() { :; }"],
            "nosuch",
            ["Q", "Q", "D", "Q"],
        ),
    ];
    for (before, command, want) in cases {
        let state = state_after(before);
        assert_eq!(codes(command, &state), *want, "{before:?} then {command}");
    }
}

#[test]
fn the_reason_names_what_was_resolved() {
    let state = state_after(&["alias read='rm -f'"]);
    let d = decide_in_shell(
        &Action::Native { command: "read a" },
        Mode::Auto,
        &deny_rm(),
        &ctx(true),
        &state,
    );
    let Decision::Deny { reason } = d else {
        panic!("{d:?}");
    };
    assert!(
        reason.contains("rm -f a") && reason.contains("rm:*"),
        "{reason}"
    );
    let state = state_after(&["PATH=/tmp/evil:$PATH"]);
    let d = decide_in_shell(
        &Action::Native { command: "ls" },
        Mode::Auto,
        &deny_rm(),
        &ctx(true),
        &state,
    );
    let Decision::Ask { reason, .. } = d else {
        panic!("{d:?}");
    };
    assert!(
        reason.contains("PATH was changed") && reason.contains("`ls`"),
        "{reason}"
    );
}

#[test]
fn a_fresh_shell_has_a_plain_state() {
    assert!(ShellState::default().is_plain());
    assert!(!state_after(&["alias x=y"]).is_plain());
    assert!(state_after(&["ls -la", "echo $PATH", "cd /tmp"]).is_plain());
}
