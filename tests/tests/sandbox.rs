#![allow(clippy::unwrap_used, clippy::expect_used)]
//! End to end: the real `synapsed __sandbox` launcher confines what a program (and everything
//! it starts) may write. On a machine without Landlock the launcher must refuse with its reason
//! (exit 126, the program not run); the Landlock assertions are then skipped with a note.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use synapse_tests::{Run, bin, run};

/// Exit status of a launcher that refused to run its program.
const EXIT_REFUSED: i32 = 126;

fn launcher(args: &[&str]) -> Run {
    let mut cmd = Command::new(bin("synapsed"));
    cmd.arg("__sandbox").args(args);
    run(&mut cmd)
}

/// The Landlock ABI, or `None` after printing why the Landlock assertions are skipped.
fn landlock_abi() -> Option<i32> {
    let probe = launcher(&["--probe"]);
    if let Some(abi) = probe.stdout.trim().strip_prefix("landlock ") {
        assert_eq!(probe.code, Some(0));
        return Some(abi.parse().unwrap());
    }
    assert!(probe.stdout.starts_with("unavailable: "), "{probe:?}");
    eprintln!("skipping the Landlock assertions: {}", probe.stdout.trim());
    None
}

/// A launch on a machine without Landlock: refused with the reason, nothing run.
fn assert_refused(r: &Run) {
    assert_eq!(r.code, Some(EXIT_REFUSED), "{r:?}");
    assert!(
        r.stderr.contains("synapsed __sandbox: not running") && r.stderr.contains("Landlock"),
        "{r:?}"
    );
}

/// `<tmp>/work` and `<tmp>/other`, both existing folders.
fn folders() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    (tmp, work, other)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn writes_succeed_in_the_writable_folder_and_fail_elsewhere() {
    let (_tmp, work, other) = folders();
    let script = format!("echo a > {}/f && echo b > {}/f", s(&work), s(&other));
    let r = launcher(&["--write", s(&work), "--", "bash", "-c", &script]);
    if landlock_abi().is_none() {
        assert_refused(&r);
        assert!(!work.join("f").exists(), "the program must not have run");
        return;
    }
    assert_eq!(std::fs::read_to_string(work.join("f")).unwrap(), "a\n");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("{}/f: Permission denied", s(&other))),
        "{r:?}"
    );
    assert!(!other.join("f").exists());
}

#[test]
fn read_only_allows_reading_listing_and_dev_null_but_no_write() {
    let (_tmp, work, _other) = folders();
    std::fs::write(work.join("existing"), "content\n").unwrap();
    let touch = launcher(&[
        "--read-only",
        "--",
        "bash",
        "-c",
        &format!("touch {}/x", s(&work)),
    ]);
    let reads = launcher(&[
        "--read-only",
        "--",
        "bash",
        "-c",
        &format!(
            "cat {}/existing && ls / > /dev/null && echo discarded > /dev/null && echo ok",
            s(&work)
        ),
    ]);
    if landlock_abi().is_none() {
        assert_refused(&touch);
        assert_refused(&reads);
        return;
    }
    assert_eq!(touch.code, Some(1), "{touch:?}");
    assert!(touch.stderr.contains("Permission denied"), "{touch:?}");
    assert!(!work.join("x").exists());
    assert_eq!(reads.code, Some(0), "{reads:?}");
    assert_eq!(reads.stdout, "content\nok\n");
}

#[test]
fn programs_started_by_the_sandboxed_one_are_sandboxed_too() {
    let (_tmp, work, other) = folders();
    let script = format!("sh -c 'echo x > {}/g'; echo \"child exit $?\"", s(&other));
    let r = launcher(&["--write", s(&work), "--", "bash", "-c", &script]);
    if landlock_abi().is_none() {
        assert_refused(&r);
        return;
    }
    assert_eq!(r.stdout, "child exit 2\n", "{r:?}");
    assert!(r.stderr.contains("Permission denied"), "{r:?}");
    assert!(!other.join("g").exists());
}

#[test]
fn a_missing_writable_folder_is_skipped_and_the_program_runs() {
    let (tmp, work, _other) = folders();
    let missing = tmp.path().join("not-there");
    let r = launcher(&[
        "--write",
        s(&missing),
        "--write",
        s(&work),
        "--",
        "bash",
        "-c",
        &format!("echo y > {}/f", s(&work)),
    ]);
    if landlock_abi().is_none() {
        assert_refused(&r);
        return;
    }
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(std::fs::read_to_string(work.join("f")).unwrap(), "y\n");
    assert!(!missing.exists());
}

#[test]
fn bad_arguments_and_missing_programs_are_refused_without_running_anything() {
    let r = launcher(&["--write", "/tmp"]);
    assert_eq!(r.code, Some(EXIT_REFUSED), "{r:?}");
    assert!(r.stderr.contains("usage: synapsed __sandbox"), "{r:?}");

    let r = launcher(&["--read-only", "--", "synapse-no-such-program"]);
    if landlock_abi().is_none() {
        assert_refused(&r);
        return;
    }
    assert_eq!(r.code, Some(127), "{r:?}");
    assert!(
        r.stderr.contains("cannot run synapse-no-such-program"),
        "{r:?}"
    );
}

#[test]
fn help_does_not_mention_the_launcher() {
    let r = run(Command::new(bin("synapsed")).arg("--help"));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("Usage: synapsed"), "{}", r.stdout);
    assert!(!r.stdout.contains("sandbox"), "{}", r.stdout);
}
