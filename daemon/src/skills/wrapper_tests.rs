use super::*;
use crate::skills::docstring::ScriptDoc;
use crate::skills::script::Runner;
use pretty_assertions::assert_eq;
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
    fs::write(&wrapper, render("user:evil", &s)).unwrap();

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
    fs::write(&wrapper, render("user:evil", &s)).unwrap();
    let out = run(&wrapper, &["$HOME; rm -rf x", "", "a b", "-h"], t.path());
    assert_eq!(out, "$HOME; rm -rf x\n\na b\n-h\n");
}

#[test]
fn writer_rewrites_only_changes_and_removes_stale() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("mcp:a:b"), "keep").unwrap();
    fs::write(bin.join("skill:old:x"), "stale").unwrap();
    let mut w = WrapperWriter::open(bin.clone());
    let wanted: BTreeMap<String, String> = [("skill:a:b".to_string(), "one".to_string())].into();
    let c = w.sync_all(wanted.clone());
    assert_eq!(
        (c.written, c.removed),
        (
            vec!["skill:a:b".to_string()],
            vec!["skill:old:x".to_string()]
        )
    );
    let mode = fs::metadata(bin.join("skill:a:b")).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o755
    );
    let again = WrapperWriter::open(bin.clone()).sync_all(wanted);
    assert_eq!(again, WrapperChanges::default());
    assert!(bin.join("mcp:a:b").exists());
}

#[test]
fn new_wrappers_become_executable_only_when_complete_and_never_clobber() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skill:a:b");
    write_new(&path, b"#!/bin/sh\necho hi\n", WRAPPER_MODE).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, WRAPPER_MODE);
    let err = write_new(&path, b"other", WRAPPER_MODE).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(fs::read_to_string(&path).unwrap(), "#!/bin/sh\necho hi\n");

    // A sync over thousands of new wrappers (the parallel path) writes each one whole.
    let mut writer = WrapperWriter::open(dir.path().join("bin"));
    let wanted: BTreeMap<String, String> = (0..600)
        .map(|i| (format!("skill:s{i}:run"), format!("#!/bin/sh\necho {i}\n")))
        .collect();
    let changes = writer.sync_all(wanted.clone());
    assert_eq!(changes.written.len(), 600, "{:?}", changes.errors);
    for (command, content) in &wanted {
        let p = dir.path().join("bin").join(command);
        assert_eq!(&fs::read_to_string(&p).unwrap(), content);
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            WRAPPER_MODE
        );
    }
}
