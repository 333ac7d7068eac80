use super::*;
use crate::skills::docstring::ScriptDoc;
use crate::skills::script::Runner;
use pretty_assertions::assert_eq;
use std::fs;
use std::path::Path;
use std::process::Command;

fn script(dir: &Path, summary: &str, full: &str) -> SkillScript {
    let path = dir.join("it's $(x).sh");
    fs::write(&path, "printf '%s\\n' \"$@\"\n").unwrap();
    SkillScript {
        file_name: "x.sh".into(),
        rel_path: "x.sh".into(),
        path,
        command: "skill:evil:x".into(),
        runner: Runner::Interpreter("bash"),
        doc: ScriptDoc {
            summary: Some(summary.into()),
            usage_args: Some("'$(touch pwned)' \"`touch pwned`\"".into()),
            full: full.into(),
            own_help: false,
        },
    }
}

fn run(wrapper: &Path, args: &[&str], cwd: &Path) -> String {
    let out = Command::new("bash")
        .arg(wrapper)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hostile_help_text_is_printed_verbatim_and_never_run() {
    let t = tempfile::tempdir().unwrap();
    let summary = "Quote ' and \"double\" $(touch pwned) `touch pwned` ${HOME} \\ done";
    let full = "line1\nEOF\n'EOF'\n$(touch pwned)\n\u{0}nul and \u{1b}[31mescape\n!! history";
    let s = script(t.path(), summary, full);
    let wrapper = t.path().join("w");
    fs::write(&wrapper, render("user:evil", &s).unwrap()).unwrap();

    let short = run(&wrapper, &["-h"], t.path());
    assert_eq!(
        short,
        format!("Usage: skill:evil:x '$(touch pwned)' \"`touch pwned`\"\n{summary}\n")
    );
    let long = run(&wrapper, &["--help"], t.path());
    assert!(long.starts_with(&format!("skill:evil:x - {summary}\n\nline1\nEOF\n'EOF'\n$(touch pwned)\nnul and [31mescape\n!! history\n")), "{long}");
    assert!(!t.path().join("pwned").exists(), "help text was executed");
}

#[test]
fn arguments_reach_the_script_verbatim() {
    let t = tempfile::tempdir().unwrap();
    let s = script(t.path(), "s", "");
    let wrapper = t.path().join("w");
    fs::write(&wrapper, render("user:evil", &s).unwrap()).unwrap();
    let out = run(&wrapper, &["$HOME; rm -rf x", "", "a b", "-h"], t.path());
    assert_eq!(out, "$HOME; rm -rf x\n\na b\n-h\n");
}

#[test]
fn own_help_scripts_get_the_command_named_then_their_own_help() {
    let t = tempfile::tempdir().unwrap();
    let mut s = script(t.path(), "Greets", "");
    s.doc.own_help = true;
    let wrapper = t.path().join("w");
    fs::write(&wrapper, render("user:evil", &s).unwrap()).unwrap();
    let out = run(&wrapper, &["--help"], t.path());
    assert!(
        out.starts_with("skill:evil:x - Greets (the script's own help follows)\n"),
        "{out}"
    );
    assert!(
        out.ends_with("\n\n--help\n"),
        "the script ran with --help: {out}"
    );
}
