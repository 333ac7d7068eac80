//! Property: no rewriting of a denied command through the forms the resolver knows — stdin-fed
//! shells, brace and glob names, launchers, unknown wrappers, aliases, hashed paths, functions
//! and a changed `PATH` in the session shell — yields "allow", in any mode.

use proptest::prelude::*;
use serde_json::json;

use super::policy::{Action, Decision, Mode, decide_in_shell};
use super::resolve::ShellState;
use super::rules::RuleSet;
use super::test_support::ctx;

fn rules() -> RuleSet {
    let (rules, problems) = RuleSet::from_json(
        &json!({"bash": {"deny": ["rm:*"], "allow": ["ls:*", "cat:*", "echo:*", "wrap:*"]}}),
        "props",
    );
    assert!(problems.is_empty(), "{problems:?}");
    rules
}

/// `(lines run before, the command)` for a denied `rm ARGS`.
fn rewrite(args: String, form: usize, name: String) -> (Vec<String>, String) {
    let quoted = shlex::try_quote(&args).map_or_else(|_| "x".to_string(), |q| q.into_owned());
    let rm = format!("rm {args}");
    let q_rm = shlex::try_quote(&rm).map_or_else(|_| "rm".to_string(), |q| q.into_owned());
    let none = Vec::new;
    match form {
        0 => (none(), format!("bash <<< {q_rm}")),
        1 => (none(), format!("echo {q_rm} | bash")),
        2 => (none(), format!("printf '%s' {q_rm} | sh -s")),
        3 => (none(), format!("bash /dev/stdin <<< {q_rm}")),
        4 => (none(), format!("{{rm,{}}}", args.replace(' ', ","))),
        5 => (none(), format!("/bin/r? {args}")),
        6 => (none(), format!("/usr/bin/r* {args}")),
        7 => (none(), format!("flock /tmp/lock {rm}")),
        8 => (none(), format!("strace -f {rm}")),
        9 => (none(), format!("taskset 0x1 {rm}")),
        10 => (none(), format!("script -qc {q_rm} /dev/null")),
        11 => (none(), format!("timeout 5 nice -n 1 {rm}")),
        12 => (none(), format!("wrap --flag {rm}")),
        13 => (none(), format!("env -S {q_rm}")),
        14 => (none(), format!("xargs -0 {rm} < list")),
        15 => (vec![format!("alias {name}='rm'")], format!("{name} {args}")),
        16 => (
            vec![format!("hash -p /bin/rm {name}")],
            format!("{name} {args}"),
        ),
        17 => (
            vec![format!("{name}() {{ \"$@\"; }}")],
            format!("{name} rm {quoted}"),
        ),
        // Builtins and the agent's functions are not looked up on PATH.
        18 => (
            vec!["PATH=/tmp/evil:$PATH".to_string()],
            match name.as_str() {
                "read" | "write" | "echo" => format!("mytool {args}"),
                _ => format!("{name} {args}"),
            },
        ),
        19 => (
            vec!["trap \"$HOOK\" DEBUG".to_string()],
            format!("{name} {args}"),
        ),
        _ => (
            vec![format!("alias {name}='sudo rm -f'")],
            format!("{name} {args}"),
        ),
    }
}

fn modes() -> impl Strategy<Value = Mode> {
    prop::sample::select(vec![Mode::Auto, Mode::Ask, Mode::ReadOnly, Mode::Yolo])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_denied_command_rewritten_is_never_allowed(
        args in "[a-z./-]{1,8}( [a-z./]{1,6}){0,2}",
        form in 0usize..21,
        name in prop::sample::select(vec!["ls", "read", "write", "cat", "echo", "mytool"]),
        mode in modes(),
        sandboxed in any::<bool>(),
    ) {
        let (before, command) = rewrite(args, form, name.to_string());
        let mut state = ShellState::default();
        for line in &before {
            state.record(line);
        }
        let d = decide_in_shell(
            &Action::Native { command: &command },
            mode,
            &rules(),
            &ctx(sandboxed),
            &state,
        );
        prop_assert!(
            !matches!(d, Decision::Allow { .. }),
            "{before:?} then `{command}` in {mode:?}: {d:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any lines recorded and any command judged after them: an answer, never a panic.
    #[test]
    fn any_recorded_state_and_command_get_an_answer(
        before in prop::collection::vec("[a-z =\"'$(){};|&<>*?\\[\\]-]{0,30}", 0..4),
        command in "[a-z =\"'$(){};|&<>*?\\[\\]/-]{0,40}",
        mode in modes(),
    ) {
        let mut state = ShellState::default();
        for line in &before {
            state.record(&format!("alias {line}"));
            state.record(line);
        }
        let _ = decide_in_shell(
            &Action::Native { command: &command },
            mode,
            &rules(),
            &ctx(true),
            &state,
        );
    }
}
