//! Issue 17, end to end: one output policy and long work. NUL bytes and invalid UTF-8 are shown
//! escaped and never hide the text around them; escape sequences never reach the user's
//! terminal; `bash --timeout` raises one command's limit up to the maximum and says so when
//! asked for more.

use pretty_assertions::assert_eq;
use synapse_tests::{Run, TestEnv, run};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").args(args);
    run(&mut cmd)
}

#[test]
fn nul_and_invalid_utf8_are_shown_escaped() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(&env, &[r"printf 'before\0after \xff\xfe end\n'"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "before\\0after \\xff\\xfe end\n");
}

#[test]
fn terminal_escape_sequences_are_neutralised() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(
        &env,
        &[r"printf 'a\033]52;c;ZXZpbA==\007b\033[2Jc\rspoofed\n'"],
    );
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{7}'),
        "{:?}",
        r.stdout
    );
    assert_eq!(r.stdout, "abc\nspoofed\n");
}

#[test]
fn bash_timeout_raises_one_commands_limit_up_to_the_maximum() {
    let env = TestEnv::new();
    env.start_daemon();
    // The call's limit is 1 s; the command asks for 300 s and outlives the 1 s.
    let r = exec(
        &env,
        &[
            "--timeout",
            "1",
            "bash --timeout 300 'sleep 1.5; echo finished'",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert_eq!(r.stdout, "finished\n");
    let r = exec(&env, &["bash --timeout 601 'echo never'"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stdout.contains("over the limit of 600 s"), "{}", r.stdout);
    assert!(!r.stdout.contains("never\n"), "{}", r.stdout);
}
