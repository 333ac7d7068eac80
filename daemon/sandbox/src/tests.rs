//! Unit tests of the sandbox: the launcher's command line and its parsing, finding the
//! `synapsed` executable, and [`apply`] on a dedicated thread (Landlock confines only the
//! calling thread, so the test process itself stays free).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::launcher::{Invocation, launcher_args, launcher_for, parse};
use super::*;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn writable(folders: &[&str]) -> SandboxSpec {
    SandboxSpec {
        writable: folders.iter().map(PathBuf::from).collect(),
        read_only: false,
    }
}

#[test]
fn launcher_args_list_each_writable_folder_then_the_program() {
    let spec = writable(&["/w/one", "/w/two"]);
    assert_eq!(
        launcher_args(&spec, "bash", &["--noprofile", "--norc"]),
        os(&[
            "__sandbox",
            "--write",
            "/w/one",
            "--write",
            "/w/two",
            "--",
            "bash",
            "--noprofile",
            "--norc"
        ])
    );
}

#[test]
fn read_only_launcher_args_carry_no_writable_folder() {
    let spec = SandboxSpec {
        writable: vec!["/ignored".into()],
        read_only: true,
    };
    assert_eq!(
        launcher_args(&spec, "sh", &["-c", "true"]),
        os(&["__sandbox", "--read-only", "--", "sh", "-c", "true"])
    );
}

#[test]
fn parse_reads_back_what_launcher_args_wrote() {
    let spec = writable(&["/w/one", "/w/with space"]);
    let args = launcher_args(&spec, "bash", &["-c", "echo --write -- x"]);
    assert_eq!(
        parse(args.into_iter().skip(1)),
        Ok(Invocation::Run {
            spec,
            program: "bash".into(),
            args: os(&["-c", "echo --write -- x"]),
        })
    );
    assert_eq!(parse(os(&["--probe"])), Ok(Invocation::Probe));
}

#[test]
fn parse_refuses_incomplete_or_contradictory_arguments() {
    let cases: [(&[&str], &str); 6] = [
        (&["--write", "/w"], "no program"),
        (&["--write", "/w", "--"], "no program after --"),
        (&["--write"], "--write needs a folder"),
        (
            &["--verbose", "--", "true"],
            "unexpected argument --verbose",
        ),
        (
            &["--read-only", "--write", "/w", "--", "true"],
            "exclude each other",
        ),
        (&["--probe", "x"], "no further arguments"),
    ];
    for (args, wanted) in cases {
        let error = parse(os(args)).expect_err("must be refused");
        assert!(error.contains(wanted), "{args:?}: {error}");
    }
}

/// `root/target/debug/{synapsed, deps/<test binary>}`, like cargo's layout.
fn cargo_layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let deps = root.path().join("target/debug/deps");
    std::fs::create_dir_all(&deps).unwrap();
    let test_exe = deps.join("synapse_daemon-0123456789abcdef");
    std::fs::write(&test_exe, "").unwrap();
    let synapsed = root.path().join("target/debug/synapsed");
    (root, test_exe, synapsed)
}

#[test]
fn launcher_is_the_executable_itself_when_it_is_synapsed() {
    let exe = Path::new("/opt/synapse/bin/synapsed");
    assert_eq!(launcher_for(exe), Some(exe.to_path_buf()));
}

#[test]
fn launcher_of_a_test_binary_is_the_synapsed_one_folder_up() {
    let (_root, test_exe, synapsed) = cargo_layout();
    assert_eq!(launcher_for(&test_exe), None, "nothing built yet");
    std::fs::write(&synapsed, "").unwrap();
    assert_eq!(launcher_for(&test_exe), Some(synapsed));
}

#[test]
fn launcher_beside_the_executable_wins_over_the_parent_folder() {
    let (_root, test_exe, synapsed) = cargo_layout();
    std::fs::write(&synapsed, "").unwrap();
    let beside = test_exe.with_file_name("synapsed");
    std::fs::write(&beside, "").unwrap();
    assert_eq!(launcher_for(&test_exe), Some(beside));
}

#[test]
fn launcher_is_not_a_folder_named_synapsed() {
    let (_root, test_exe, synapsed) = cargo_layout();
    std::fs::create_dir_all(&synapsed).unwrap();
    assert_eq!(launcher_for(&test_exe), None);
}

#[test]
fn wrap_matches_support_and_launcher() {
    let spec = writable(&["/w"]);
    let wrapped = wrap(&spec, "bash", &["--norc"]);
    match (support(), launcher()) {
        (Support::Landlock { abi }, Some(exe)) => {
            assert!(abi >= 1, "ABI {abi}");
            let (program, args) = wrapped.expect("supported and found: wrapped");
            assert_eq!(program, exe);
            assert_eq!(args, launcher_args(&spec, "bash", &["--norc"]));
        }
        _ => assert_eq!(wrapped, None),
    }
}

/// What a confined thread saw.
struct Confined {
    status: Result<Status, String>,
    wrote_inside: std::io::Result<()>,
    wrote_outside: std::io::Result<()>,
}

/// Applies `spec` on a fresh thread, then tries one write inside and one outside.
fn apply_on_a_thread(spec: SandboxSpec, inside: PathBuf, outside: PathBuf) -> Confined {
    std::thread::spawn(move || {
        let status = apply(&spec).map_err(|e| e.to_string());
        Confined {
            status,
            wrote_inside: std::fs::write(inside, "in"),
            wrote_outside: std::fs::write(outside, "out"),
        }
    })
    .join()
    .unwrap()
}

#[test]
fn apply_skips_and_reports_a_missing_folder_and_confines_writes() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let other = dir.path().join("other");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let missing = dir.path().join("not-there");
    let spec = SandboxSpec {
        writable: vec![missing.clone(), work.clone()],
        read_only: false,
    };
    let seen = apply_on_a_thread(spec, work.join("f"), other.join("f"));
    let Support::Landlock { abi } = support() else {
        eprintln!("skipping the Landlock assertions: {:?}", support());
        assert!(seen.status.is_err(), "no sandbox must be an error");
        return;
    };
    let status = seen.status.unwrap();
    assert_eq!(status.missing, vec![missing]);
    assert_eq!(status.abi, abi);
    if abi >= 5 {
        assert_eq!(status.enforcement, Enforcement::Full);
    }
    seen.wrote_inside.unwrap();
    let denied = seen.wrote_outside.expect_err("a write outside must fail");
    assert_eq!(denied.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(!other.join("f").exists());
    // Only that thread was confined: this one still writes anywhere.
    std::fs::write(other.join("g"), "free").unwrap();
}

#[test]
fn apply_read_only_leaves_only_the_devices_writable() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SandboxSpec {
        writable: vec![dir.path().to_path_buf()],
        read_only: true,
    };
    let seen = apply_on_a_thread(spec, "/dev/null".into(), dir.path().join("f"));
    if !matches!(support(), Support::Landlock { .. }) {
        eprintln!("skipping the Landlock assertions: {:?}", support());
        return;
    }
    assert_eq!(seen.status.unwrap().missing, Vec::<PathBuf>::new());
    seen.wrote_inside.unwrap();
    assert_eq!(
        seen.wrote_outside.unwrap_err().kind(),
        std::io::ErrorKind::PermissionDenied
    );
}
