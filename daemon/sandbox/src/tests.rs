//! Unit tests of the sandbox: the launcher's command line and its parsing, finding the
//! `synapsed` executable, and [`apply`] on a dedicated thread (Landlock and the seccomp filter
//! confine only the calling thread, so the test process itself stays free). The side doors are
//! tried by child processes that thread starts: they inherit its confinement, as the shell's
//! children inherit the launcher's.

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
        ..Default::default()
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
        ..Default::default()
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
fn protected_paths_travel_after_the_writable_folders_and_parse_back() {
    let spec = SandboxSpec {
        writable: vec!["/h".into()],
        protected: vec!["/h/.claude".into(), "/h/.bashrc".into()],
        ..Default::default()
    };
    let args = launcher_args(&spec, "bash", &[]);
    assert_eq!(
        args,
        os(&[
            "__sandbox",
            "--write",
            "/h",
            "--protect",
            "/h/.claude",
            "--protect",
            "/h/.bashrc",
            "--",
            "bash"
        ])
    );
    assert_eq!(
        parse(args.into_iter().skip(1)),
        Ok(Invocation::Run {
            spec,
            program: "bash".into(),
            args: Vec::new(),
        })
    );
    let read_only = SandboxSpec {
        read_only: true,
        protected: vec!["/h/.claude".into()],
        ..Default::default()
    };
    assert_eq!(
        launcher_args(&read_only, "sh", &[]),
        os(&["__sandbox", "--read-only", "--", "sh"]),
        "nothing is writable, so nothing needs protecting"
    );
}

#[test]
fn parse_refuses_incomplete_or_contradictory_arguments() {
    let cases: [(&[&str], &str); 8] = [
        (&["--write", "/w"], "no program"),
        (&["--protect"], "--protect needs a path"),
        (
            &["--read-only", "--protect", "/h/.ssh", "--", "true"],
            "excludes --write and --protect",
        ),
        (&["--write", "/w", "--"], "no program after --"),
        (&["--write"], "--write needs a folder"),
        (
            &["--verbose", "--", "true"],
            "unexpected argument --verbose",
        ),
        (
            &["--read-only", "--write", "/w", "--", "true"],
            "excludes --write",
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
        ..Default::default()
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
    if abi >= 6 {
        assert_eq!(status.enforcement, Enforcement::Full);
        assert!(status.metadata_filter, "x86-64 and AArch64 have the filter");
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
        ..Default::default()
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

/// What a child of a confined thread did.
struct ConfinedRun {
    status: Status,
    out: std::process::Output,
}

impl ConfinedRun {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
}

/// Runs `cmd` as a child of a thread confined to a sandbox with `writable` as its only writable
/// folder. `None` (after saying why) when this machine cannot sandbox.
fn run_confined(writable: &Path, mut cmd: std::process::Command) -> Option<ConfinedRun> {
    if !matches!(support(), Support::Landlock { .. }) {
        eprintln!("skipping: no sandbox here: {:?}", support());
        return None;
    }
    let spec = SandboxSpec {
        writable: vec![writable.to_path_buf()],
        read_only: false,
        ..Default::default()
    };
    let (status, out) = std::thread::spawn(move || {
        let status = apply(&spec).unwrap();
        (status, cmd.output().unwrap())
    })
    .join()
    .unwrap();
    Some(ConfinedRun { status, out })
}

fn python(code: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", code]);
    cmd
}

/// The outcomes the [`TRY`] lines printed for `names`, as `name=outcome`.
fn outcomes(out: &str, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|name| {
            let prefix = format!("{name}=");
            out.lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or(&prefix)
                .to_string()
        })
        .collect()
}

fn expect(pairs: &[(&str, &str)]) -> Vec<String> {
    pairs.iter().map(|(n, o)| format!("{n}={o}")).collect()
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Every try prints `name=OK` or `name=<errno name>`.
const TRY: &str = r#"
import errno, os, sys
def attempt(name, f):
    try:
        f()
        print(f"{name}=OK")
    except OSError as e:
        print(f"{name}={errno.errorcode[e.errno]}")
"#;

#[test]
fn the_filter_refuses_modes_that_let_others_write_or_run_as_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    let outside = dir.path().join("settings.json");
    std::fs::write(&outside, "{}").unwrap();
    std::fs::set_permissions(
        &outside,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let file = work.join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let script = format!(
        "{TRY}
attempt('outside_666', lambda: os.chmod({outside:?}, 0o666))
attempt('inside_666', lambda: os.chmod({file:?}, 0o666))
attempt('inside_g+w', lambda: os.chmod({file:?}, 0o664))
attempt('inside_setuid', lambda: os.chmod({file:?}, 0o4755))
attempt('inside_setgid_dir', lambda: os.chmod({sub:?}, 0o2755))
attempt('fchmod_666', lambda: os.fchmod(os.open({file:?}, os.O_RDONLY), 0o666))
attempt('inside_755', lambda: os.chmod({file:?}, 0o755))
attempt('dir_755', lambda: os.chmod({sub:?}, 0o755))
attempt('inside_644', lambda: os.chmod({file:?}, 0o644))
",
        outside = outside.display().to_string(),
        file = file.display().to_string(),
        sub = work.join("sub").display().to_string(),
    );
    // `chmod +x` of a file the sandbox itself created (under the tightened umask).
    let mut cmd = std::process::Command::new("bash");
    cmd.args([
        "-c",
        &format!(
            "python3 -c \"$1\" && echo 'echo hi' > {made} && chmod +x {made} && {made}",
            made = work.join("made.sh").display()
        ),
        "bash",
        &script,
    ]);
    let Some(run) = run_confined(&work, cmd) else {
        return;
    };
    let out = run.stdout();
    assert!(run.status.metadata_filter, "{out}");
    let wanted = [
        ("outside_666", "EPERM"),
        ("inside_666", "EPERM"),
        ("inside_g+w", "EPERM"),
        ("inside_setuid", "EPERM"),
        ("inside_setgid_dir", "EPERM"),
        ("fchmod_666", "EPERM"),
        ("inside_755", "OK"),
        ("dir_755", "OK"),
        ("inside_644", "OK"),
    ];
    let names: Vec<&str> = wanted.iter().map(|(n, _)| *n).collect();
    assert_eq!(outcomes(&out, &names), expect(&wanted), "{out}");
    assert!(out.ends_with("hi\n"), "chmod +x of a new script: {out}");
    assert_eq!(mode_of(&outside), 0o600);
    assert_eq!(mode_of(&file), 0o644);
    assert_eq!(mode_of(&work.join("made.sh")), 0o755);
}

#[test]
fn the_filter_refuses_owner_and_attribute_changes_but_not_times() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let script = format!(
        "{TRY}
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def setxattrat():
    # setxattrat(AT_FDCWD, path, 0, name, &args, sizeof args): Linux 6.13's form.
    value = ctypes.create_string_buffer(b'1')
    args = (ctypes.c_uint64 * 2)(ctypes.addressof(value), 1)
    if libc.syscall(463, -100, {f:?}.encode(), 0, b'user.y', args, 16) != 0:
        raise OSError(ctypes.get_errno(), 'setxattrat')
st = os.stat({f:?})
attempt('chown', lambda: os.chown({f:?}, st.st_uid, st.st_gid))
attempt('lchown', lambda: os.lchown({f:?}, st.st_uid, st.st_gid))
attempt('fchown', lambda: os.fchown(os.open({f:?}, os.O_RDONLY), st.st_uid, st.st_gid))
attempt('setxattr', lambda: os.setxattr({f:?}, 'user.x', b'1'))
attempt('setxattrat', setxattrat)
attempt('removexattr', lambda: os.removexattr({f:?}, 'user.x'))
attempt('utime', lambda: os.utime({f:?}, (1000000000, 1000000000)))
",
        f = file.display().to_string()
    );
    let Some(run) = run_confined(dir.path(), python(&script)) else {
        return;
    };
    let out = run.stdout();
    let wanted = [
        ("chown", "EPERM"),
        ("lchown", "EPERM"),
        ("fchown", "EPERM"),
        ("setxattr", "EPERM"),
        ("setxattrat", "EPERM"),
        ("removexattr", "EPERM"),
        ("utime", "OK"),
    ];
    let names: Vec<&str> = wanted.iter().map(|(n, _)| *n).collect();
    assert_eq!(outcomes(&out, &names), expect(&wanted), "{out}");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::mtime(&meta), 1_000_000_000);
}

#[test]
fn the_sandbox_cannot_write_or_type_into_another_terminal() {
    let pty = nix::pty::openpty(None, None).unwrap();
    let pts = nix::unistd::ttyname(&pty.slave).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{TRY}
import fcntl, termios
pts = {pts:?}
attempt('write', lambda: open(pts, 'w').write('PWNED'))
attempt('open_ptmx', lambda: os.openpty())
fd = os.open(pts, os.O_RDONLY | os.O_NOCTTY)
attempt('tiocsti_opened', lambda: fcntl.ioctl(fd, termios.TIOCSTI, b'x'))
attempt('tiocswinsz_opened', lambda: fcntl.ioctl(fd, termios.TIOCSWINSZ, bytes(8)))
attempt('tiocsti_inherited', lambda: fcntl.ioctl(0, termios.TIOCSTI, b'y'))
attempt('tioclinux_inherited', lambda: fcntl.ioctl(0, 0x541C, bytes([3])))
",
        pts = pts.display().to_string()
    );
    let mut cmd = python(&script);
    cmd.stdin(std::process::Stdio::from(pty.slave.try_clone().unwrap()));
    let Some(run) = run_confined(dir.path(), cmd) else {
        return;
    };
    let out = run.stdout();
    // The filter refuses TIOCSTI before Landlock is asked, on every descriptor (one opened
    // before the sandbox carries every Landlock right); Landlock (ABI 5+) refuses any other
    // device ioctl on a terminal opened read-only (resizing it, here).
    let resize = if run.status.abi >= 5 { "EACCES" } else { "OK" };
    let wanted = [
        ("write", "EACCES"),
        ("open_ptmx", "EACCES"),
        ("tiocsti_opened", "EPERM"),
        ("tiocswinsz_opened", resize),
        ("tiocsti_inherited", "EPERM"),
        ("tioclinux_inherited", "EPERM"),
    ];
    let names: Vec<&str> = wanted.iter().map(|(n, _)| *n).collect();
    assert_eq!(outcomes(&out, &names), expect(&wanted), "{out}");
    // Nothing arrived: no input queued on the terminal, no output on its master.
    for fd in [&pty.slave, &pty.master] {
        let mut poll = [nix::poll::PollFd::new(
            std::os::fd::AsFd::as_fd(fd),
            nix::poll::PollFlags::POLLIN,
        )];
        let ready = nix::poll::poll(&mut poll, nix::poll::PollTimeout::ZERO).unwrap();
        assert_eq!(ready, 0, "something reached the terminal: {out}");
    }
}

#[test]
fn the_sandbox_signals_its_own_children_but_nothing_outside() {
    let dir = tempfile::tempdir().unwrap();
    let mut outside = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let script = format!(
        "kill -KILL {pid}; echo outside=$?
python3 -c 'import os; os.kill({pid}, 9)' 2>&1 | tail -n 1
sleep 60 & kill -KILL $!; wait $!; echo own=$?",
        pid = outside.id()
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-c", &script]);
    let run = run_confined(dir.path(), cmd);
    let still_running = outside.try_wait().unwrap().is_none();
    outside.kill().unwrap();
    outside.wait().unwrap();
    let Some(run) = run else {
        return;
    };
    let out = run.stdout();
    let err = String::from_utf8_lossy(&run.out.stderr);
    if run.status.abi < 6 {
        eprintln!(
            "skipping the signal assertions: Landlock ABI {} has no scopes",
            run.status.abi
        );
        return;
    }
    assert_eq!(run.status.enforcement, Enforcement::Full);
    assert!(out.contains("outside=1"), "{out}{err}");
    assert!(err.contains("Operation not permitted"), "{err}");
    assert!(out.contains("PermissionError"), "{out}");
    assert!(
        out.contains("own=137"),
        "its own child is killed: {out}{err}"
    );
    assert!(still_running, "the process outside the sandbox was killed");
}
