//! The hidden `synapsed __sandbox` launcher: its command line ([`launcher_args`]), finding the
//! `synapsed` executable ([`launcher`]), and the launcher itself ([`launcher_main`]), which
//! applies the spec to its own process and then `exec`s the program.
//!
//! ```text
//! synapsed __sandbox [--write DIR]... [--read-only] -- PROGRAM ARGS...
//! synapsed __sandbox --probe      # prints `landlock <abi>` or `unavailable: <reason>`
//! ```
//!
//! `main.rs` dispatches here before parsing its own arguments, so the launcher stays out of
//! `synapsed --help` and starts without a runtime or logging: it sits on the path of every shell
//! start.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{SandboxSpec, Support, apply, support};

/// The first argument of `synapsed` that selects the launcher.
pub const SUBCOMMAND: &str = "__sandbox";
/// Exit status when the sandbox cannot be applied or the arguments are wrong: the program was
/// not run (the shell's code for "found but cannot run").
pub const EXIT_REFUSED: u8 = 126;
/// Exit status when the program does not exist (the shell's code for "not found").
const EXIT_NOT_FOUND: u8 = 127;
const LAUNCHER_NAME: &str = "synapsed";
const USAGE: &str = "usage: synapsed __sandbox [--write DIR]... [--read-only] -- PROGRAM ARGS... \
                     | synapsed __sandbox --probe";

/// The `synapsed` executable that can launch sandboxed programs: this process's own when it is
/// `synapsed`, else a `synapsed` beside it or in its parent folder (test executables live in
/// `target/<profile>/deps/`, the binaries one level up).
pub fn launcher() -> Option<PathBuf> {
    launcher_for(&std::env::current_exe().ok()?)
}

pub(super) fn launcher_for(exe: &Path) -> Option<PathBuf> {
    if exe.file_name() == Some(OsStr::new(LAUNCHER_NAME)) {
        return Some(exe.to_path_buf());
    }
    let beside = exe.parent()?;
    std::iter::successors(Some(beside), |d| d.parent())
        .take(2)
        .map(|d| d.join(LAUNCHER_NAME))
        .find(|candidate| candidate.is_file())
}

/// The launcher's arguments (after the executable) that run `program args…` under `spec`.
pub(super) fn launcher_args(spec: &SandboxSpec, program: &str, args: &[&str]) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![SUBCOMMAND.into()];
    if spec.read_only {
        out.push("--read-only".into());
    } else {
        for folder in &spec.writable {
            out.push("--write".into());
            out.push(folder.into());
        }
    }
    out.push("--".into());
    out.push(program.into());
    out.extend(args.iter().map(OsString::from));
    out
}

/// Makes the launched program lead a session of its own (or, when its parent already made it a
/// process group leader, keeps that group). The daemon tells which session shell a sandboxed
/// client runs under by its session id, which no process can move into another existing session;
/// and the program's process group is never the daemon's, whose kill of the group would then hit
/// the daemon itself.
fn own_session() -> Result<(), String> {
    use nix::unistd::{Pid, getpgrp, getpid, setpgid, setsid};
    if setsid().is_ok() || getpgrp() == getpid() {
        return Ok(());
    }
    setpgid(Pid::from_raw(0), Pid::from_raw(0))
        .map_err(|e| format!("cannot leave the launcher's process group: {e}"))
}

/// What the launcher was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Invocation {
    Probe,
    Run {
        spec: SandboxSpec,
        program: OsString,
        args: Vec<OsString>,
    },
}

/// Parses the arguments after `__sandbox`.
pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, String> {
    let mut args = args.into_iter();
    let mut spec = SandboxSpec::default();
    let mut wrote = false;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--probe") => {
                return match args.next() {
                    None => Ok(Invocation::Probe),
                    Some(extra) => Err(format!(
                        "--probe takes no further arguments (got {})",
                        extra.to_string_lossy()
                    )),
                };
            }
            Some("--read-only") => spec.read_only = true,
            Some("--write") => match args.next() {
                Some(folder) => {
                    spec.writable.push(folder.into());
                    wrote = true;
                }
                None => return Err("--write needs a folder".into()),
            },
            Some("--") => {
                if spec.read_only && wrote {
                    return Err("--read-only and --write exclude each other".into());
                }
                let Some(program) = args.next() else {
                    return Err("no program after --".into());
                };
                return Ok(Invocation::Run {
                    spec,
                    program,
                    args: args.collect(),
                });
            }
            _ => {
                return Err(format!("unexpected argument {}", arg.to_string_lossy()));
            }
        }
    }
    Err("no program (a `--` followed by the program is required)".into())
}

/// `synapsed __sandbox …`: applies the sandbox and becomes the program, or explains why not.
/// Never runs the program unsandboxed.
pub fn launcher_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let invocation = match parse(args) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("synapsed {SUBCOMMAND}: {e}\n{USAGE}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let (spec, program, args) = match invocation {
        Invocation::Probe => {
            return match support() {
                Support::Landlock { abi } => {
                    println!("landlock {abi}");
                    ExitCode::SUCCESS
                }
                Support::Unavailable { reason } => {
                    println!("unavailable: {reason}");
                    ExitCode::FAILURE
                }
            };
        }
        Invocation::Run {
            spec,
            program,
            args,
        } => (spec, program, args),
    };
    let shown = program.to_string_lossy().into_owned();
    if let Err(e) = own_session() {
        eprintln!("synapsed {SUBCOMMAND}: not running {shown}: {e}");
        return ExitCode::from(EXIT_REFUSED);
    }
    if let Err(e) = apply(&spec) {
        eprintln!("synapsed {SUBCOMMAND}: not running {shown}: {e}");
        return ExitCode::from(EXIT_REFUSED);
    }
    // `exec` only returns on failure; on success this process is the program, still confined.
    // `$0` is the program's name, as when a shell runs it by name.
    let name = std::path::Path::new(&program)
        .file_name()
        .map_or_else(|| program.clone(), std::ffi::OsStr::to_os_string);
    let error = std::process::Command::new(&program)
        .arg0(name)
        .args(&args)
        .exec();
    eprintln!("synapsed {SUBCOMMAND}: cannot run {shown}: {error}");
    if error.kind() == std::io::ErrorKind::NotFound {
        ExitCode::from(EXIT_NOT_FOUND)
    } else {
        ExitCode::from(EXIT_REFUSED)
    }
}
