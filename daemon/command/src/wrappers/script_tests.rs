use super::*;
use pretty_assertions::assert_eq;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Writes `s` to `dir/name` and runs it with `args`: (stdout, exit code).
fn run(dir: &Path, s: &WrapperScript, args: &[&str]) -> (String, i32) {
    let path = dir.join("wrapper");
    fs::write(&path, s.render().unwrap()).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&path)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// A script whose target prints each argument in brackets and the exported variable.
fn echo_script(dir: &Path, command: &str, short: &str, long: Help) -> WrapperScript {
    let target = dir.join("it's $(x) target");
    fs::write(
        &target,
        "#!/bin/bash\nprintf '<%s>\\n' \"$@\"; printf 'id=%s\\n' \"$SYNAPSE_SKILL_ID\"\n",
    )
    .unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o755)).unwrap();
    WrapperScript {
        command: command.into(),
        origin: "a test",
        about: vec![("Target", format!("{}\nrm -rf /", target.display()))],
        short_help: short.into(),
        long_help: long,
        exports: vec![("SYNAPSE_SKILL_ID", "user:it's".into())],
        exec: vec![target.to_string_lossy().into_owned()],
    }
}

#[test]
fn hostile_text_is_printed_verbatim_and_never_run() {
    let t = tempfile::tempdir().unwrap();
    let m = t.path().join("pwned");
    let evil = format!(
        "q ' \" `touch {m}` $(touch {m}) ${{HOME}} \\\nEOF\nSYNAPSE_HELP_END\n'; touch {m}; '\n\u{7}bell\u{0}",
        m = m.display()
    );
    let s = echo_script(
        t.path(),
        "skill:x:$(touch y)\nz",
        &evil,
        Help::Text(evil.clone()),
    );
    let (short, code) = run(t.path(), &s, &["-h"]);
    assert_eq!((short, code), (format!("{}\n", clean_text(&evil)), 0));
    let (long, code) = run(t.path(), &s, &["--help", "more"]);
    assert_eq!((long, code), (format!("{}\n", clean_text(&evil)), 0));
    assert!(!m.exists(), "help text was executed");
    assert!(!t.path().join("y").exists(), "a comment was executed");
}

#[test]
fn arguments_and_exports_reach_the_target_verbatim() {
    let t = tempfile::tempdir().unwrap();
    let s = echo_script(t.path(), "skill:a:b", "s", Help::Text("l".into()));
    let (out, code) = run(t.path(), &s, &["$HOME; rm -rf x", "", "a b", "-h"]);
    assert_eq!(code, 0);
    assert_eq!(out, "<$HOME; rm -rf x>\n<>\n<a b>\n<-h>\nid=user:it's\n");
}

#[test]
fn help_then_target_prints_the_header_then_runs_with_help() {
    let t = tempfile::tempdir().unwrap();
    let s = echo_script(t.path(), "skill:a:b", "s", Help::ThenTarget("about".into()));
    let (out, code) = run(t.path(), &s, &["--help"]);
    assert_eq!(
        (out, code),
        ("about\n\n<--help>\nid=user:it's\n".to_string(), 0)
    );
}

#[test]
fn an_exec_word_with_a_control_character_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let mut s = echo_script(t.path(), "mcp:a:b", "s", Help::Text("l".into()));
    s.exec.push("tool\u{1b}[2J".into());
    let err = s.render().unwrap_err();
    assert!(err.to_string().contains("control character"), "{err}");
    s.exec.pop();
    s.exec.push("multi\nline\ttool".into());
    let (out, _) = run(t.path(), &s, &[]);
    assert!(out.starts_with("<multi\nline\ttool>\n"), "{out}");
}
