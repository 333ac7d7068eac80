//! Issue 17, end to end through `synapse exec` and a real `synapsed`: agent commands are real
//! commands of the session shell. Each agent command works inside pipelines, lists, `$(…)`,
//! redirects and loops; bash does the word expansion (compared with what bash itself prints for
//! the same words); in the session shell the agent meaning wins over `/usr/bin/write`, procps
//! `skill` and bash's `read` with agent-style arguments, while scripts keep the system meaning.

use pretty_assertions::assert_eq;
use synapse_tests::{Run, TestEnv, run};

fn exec(env: &TestEnv, command: &str) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").arg(command);
    run(&mut cmd)
}

fn ok(env: &TestEnv, command: &str) -> String {
    let r = exec(env, command);
    assert_eq!(r.code, Some(0), "{command:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

fn started() -> TestEnv {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    env.start_daemon();
    env
}

#[test]
fn write_read_and_edit_compose_with_lists_pipes_and_redirects() {
    let env = started();
    let work = env.workdir();
    assert_eq!(
        ok(&env, "write notes.txt 'hello' && echo saved"),
        "Created notes.txt (1 line, 5 bytes)\nsaved\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "hello"
    );
    assert_eq!(ok(&env, "read a.txt | wc -l").trim(), "3");
    assert_eq!(
        ok(&env, "read a.txt > copy.txt; grep -c . copy.txt"),
        "3\n",
        "a redirect catches the agent command's output"
    );
    assert_eq!(
        ok(
            &env,
            "edit a.txt two TWO && read a.txt --offset 1 --limit 1 | head -1 | cut -f2"
        ),
        "Replaced 1 occurrence in a.txt (line 2)\nTWO\n"
    );
    assert_eq!(
        ok(
            &env,
            "echo piped | write from-pipe.txt >/dev/null; cat from-pipe.txt"
        ),
        "piped\n"
    );
    let r = exec(&env, "read missing.txt || echo fallback");
    assert!(r.stdout.contains("fallback"), "{}", r.stdout);
}

#[test]
fn words_are_expanded_by_bash_exactly_as_for_printf() {
    let env = started();
    let work = env.workdir();
    // What bash prints for the same words is what the agent command received.
    for words in [
        r#"'x = "p\nq"'"#,
        r#""$PWD/a b""#,
        r#"~/h.txt"#,
        r#"'single $HOME'"#,
        r#""tab\there""#,
        r#"$'real\nnewline'"#,
    ] {
        // `synapse exec` ends its output with a newline: mark where printf's ends.
        let printed = ok(&env, &format!("printf '%s|' {words}"));
        let expected = printed.strip_suffix("|\n").unwrap_or(&printed).to_string();
        ok(&env, &format!("write out.txt {words}"));
        assert_eq!(
            std::fs::read_to_string(work.join("out.txt")).unwrap(),
            expected,
            "write out.txt {words}"
        );
    }
    assert_eq!(
        ok(&env, r#"read "$PWD/a.txt" --limit 1"#).lines().next(),
        ok(&env, "read a.txt --limit 1").lines().next()
    );
    ok(&env, "write ~/home-file.txt 'at home'");
    assert_eq!(
        std::fs::read_to_string(env.user_home().join("home-file.txt")).unwrap(),
        "at home"
    );
    std::fs::create_dir_all(work.join("x")).unwrap();
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("x/m.rs"), "fn main() {}\n").unwrap();
    let out = ok(&env, r#"cd sub && glob "../x/*.rs""#);
    assert!(out.contains("x/m.rs"), "{out}");
    ok(&env, "cd ..");
}

#[test]
fn agent_commands_work_in_loops_and_command_substitution() {
    let env = started();
    let work = env.workdir();
    std::fs::write(work.join("b.txt"), "bee\n").unwrap();
    let out = ok(
        &env,
        r#"for f in a.txt b.txt; do read "$f" --limit 1 | head -1 | cut -f2; done"#,
    );
    assert_eq!(out, "one\nbee\n");
    assert_eq!(
        ok(
            &env,
            r#"first=$(read a.txt --limit 1 | head -1 | cut -f2); echo "[$first]""#
        ),
        "[one]\n"
    );
    let out = ok(&env, "search three | wc -l && glob '*.txt' | sort");
    assert_eq!(out, "1\na.txt\nb.txt\n");
}

#[test]
fn the_agent_meaning_wins_over_write_skill_and_read_in_the_session_shell() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    // Written before the daemon starts, so the first scan has it (no watcher race).
    env.write_skill("pdf-tools", "Work with PDF files", "Use pdftotext.");
    env.start_daemon();
    // procps `skill` would send signals; the agent's `skill` searches skills.
    let out = ok(&env, "skill search pdf && echo found");
    assert!(
        out.contains("pdf-tools") && out.ends_with("found\n"),
        "{out}"
    );
    let out = ok(&env, "skill:load pdf-tools | head -50 | grep -c pdftotext");
    assert_eq!(out, "1\n");
    assert!(ok(&env, "tools search read; echo rc=$?").contains("rc=0"));
    assert_eq!(
        ok(
            &env,
            "todo add 'ship it' >/dev/null && todo list | grep -c 'ship it'"
        ),
        "1\n"
    );
    // bash's own `read` keeps working where its arguments say so.
    assert_eq!(
        ok(&env, r#"while read -r l; do echo "got $l"; done < a.txt"#),
        "got one\ngot two\ngot three\n"
    );
    assert_eq!(ok(&env, r#"echo hi | { read v; echo "[$v]"; }"#), "[hi]\n");
    // Scripts the shell runs keep the system meaning: the functions are not exported.
    assert_eq!(
        ok(&env, "bash -c 'type -t write read skill'")
            .lines()
            .nth(1),
        Some("builtin")
    );
    assert!(!ok(&env, "bash -c 'type -t write || true'").contains("function"));
}
