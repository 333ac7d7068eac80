//! The hidden `synapsed __sandbox` launcher: its command lines ([`launcher_args`], [`kept`]),
//! finding the `synapsed` executable ([`launcher`]), and the launcher itself ([`launcher_main`]),
//! which applies the spec to its own process and then `exec`s the program — or, with `--keep`,
//! becomes the program's keeper ([`super::keeper`]).
//!
//! ```text
//! synapsed __sandbox [--write DIR]... [--protect PATH]... [--read-only] -- PROGRAM ARGS...
//! synapsed __sandbox --keep [--cgroup DIR] [--max-processes N] [--grace-ms N]
//!                    [--write DIR]... [--protect PATH]... [--read-only] [--unconfined]
//!                    # PROGRAM ARGS... in SYNAPSE_KEEP_ARGC / SYNAPSE_KEEP_ARGV_<i>
//! synapsed __sandbox --probe      # prints `landlock <abi>` or `unavailable: <reason>`
//! ```
//!
//! A kept program's command line travels in the environment rather than on the keeper's own:
//! `ps` and `pgrep -f` then show it once, as the program, not a second time as its keeper.
//!
//! `main.rs` dispatches here before parsing its own arguments, so the launcher stays out of
//! `synapsed --help` and starts without a runtime or logging: it sits on the path of every shell
//! start.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{SandboxSpec, Support, apply, support};

/// The variable holding a kept program's argument count (program included).
pub(super) const ARGC_VAR: &str = "SYNAPSE_KEEP_ARGC";
/// The prefix of the variables holding a kept program's arguments, `…_0` being the program.
pub(super) const ARGV_VAR_PREFIX: &str = "SYNAPSE_KEEP_ARGV_";
/// What a kept program sees as its own name (`argv[0]`) when not the program as given.
pub(super) const ARG0_VAR: &str = "SYNAPSE_KEEP_ARG0";

/// The first argument of `synapsed` that selects the launcher.
pub const SUBCOMMAND: &str = "__sandbox";
/// Exit status when the sandbox cannot be applied or the arguments are wrong: the program was
/// not run (the shell's code for "found but cannot run").
pub const EXIT_REFUSED: u8 = 126;
/// Exit status when the program does not exist (the shell's code for "not found").
const EXIT_NOT_FOUND: u8 = 127;
pub(super) const LAUNCHER_NAME: &str = "synapsed";
const USAGE: &str = "usage: synapsed __sandbox [--write DIR]... [--protect PATH]... [--read-only] \
                     -- PROGRAM ARGS... \
                     | synapsed __sandbox --keep [--cgroup DIR] [--max-processes N] \
                     [--grace-ms N] [--write DIR]... [--protect PATH]... [--read-only] \
                     [--unconfined] \
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
    push_sandbox_args(&mut out, Some(spec));
    out.push("--".into());
    out.push(program.into());
    out.extend(args.iter().map(OsString::from));
    out
}

/// The options that say how the program is confined: `--read-only`, `--write DIR`… with
/// `--protect PATH`…, or `--unconfined` (`None`: no sandbox, only meaningful for a kept
/// program).
pub(super) fn push_sandbox_args(out: &mut Vec<OsString>, spec: Option<&SandboxSpec>) {
    match spec {
        None => out.push("--unconfined".into()),
        Some(spec) if spec.read_only => out.push("--read-only".into()),
        Some(spec) => {
            for folder in &spec.writable {
                out.push("--write".into());
                out.push(folder.into());
            }
            for path in &spec.protected {
                out.push("--protect".into());
                out.push(path.into());
            }
        }
    }
}

/// What the keeper of a program enforces ([`kept`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeeperSpec {
    /// A cgroup folder the keeper moves itself into before it starts the program, so that
    /// everything the program starts is counted (and limited) there.
    pub cgroup: Option<PathBuf>,
    /// `RLIMIT_NPROC` for the program and what it starts, as headroom: the processes the user
    /// already has plus this many (the kernel counts every process of the real uid; it does
    /// not apply to root).
    pub max_processes: Option<u64>,
    /// How long the program and its children get between SIGTERM and SIGKILL when the keeper
    /// is told to stop.
    pub grace: std::time::Duration,
}

/// The command that runs a program under a keeper ([`kept`]): the launcher, its arguments, and
/// the variables carrying the program's own command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The `synapsed` executable to start ([`launcher`]).
    pub launcher: PathBuf,
    /// Its arguments: `__sandbox --keep`, the keeper's limits and how the program is confined;
    /// the program's own command line is not among them.
    pub args: Vec<OsString>,
    /// Variables to add to the launcher's environment: the program, its arguments and its
    /// `arg0` (`SYNAPSE_KEEP_…`); the keeper removes them before starting the program.
    pub env: Vec<(OsString, OsString)>,
    /// The program runs inside the sandbox asked for (false: no sandbox was asked for, or this
    /// machine cannot enforce one).
    pub sandboxed: bool,
}

/// The command line that runs `program args…` (the program seeing itself as `arg0`, else as
/// `program`, as `execvp` does) under a keeper: a `synapsed` process that stays
/// the parent of the program and of everything it starts or orphans, and ends all of it when
/// the program exits, when it is told to stop (SIGTERM, SIGHUP, SIGINT) or when its own parent
/// (the daemon) dies. The program is confined to `sandbox` when this machine can enforce it,
/// else it runs unconfined ([`Kept::sandboxed`] says which). `None` where there is no keeper
/// (not Linux, or no `synapsed` executable found): the caller starts the program itself.
pub fn kept(
    sandbox: Option<&SandboxSpec>,
    keeper: &KeeperSpec,
    program: &std::ffi::OsStr,
    arg0: Option<&std::ffi::OsStr>,
    args: &[&std::ffi::OsStr],
) -> Option<Kept> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let launcher = launcher()?;
    let confined = sandbox.filter(|_| matches!(support(), Support::Landlock { .. }));
    Some(Kept {
        launcher,
        args: keeper_args(keeper, confined),
        env: argv_env(program, arg0, args),
        sandboxed: confined.is_some(),
    })
}

/// The launcher's arguments that make it the keeper of a program confined to `spec`.
pub(super) fn keeper_args(keeper: &KeeperSpec, spec: Option<&SandboxSpec>) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![SUBCOMMAND.into(), "--keep".into()];
    if let Some(dir) = &keeper.cgroup {
        out.push("--cgroup".into());
        out.push(dir.into());
    }
    if let Some(n) = keeper.max_processes {
        out.push("--max-processes".into());
        out.push(n.to_string().into());
    }
    if !keeper.grace.is_zero() {
        out.push("--grace-ms".into());
        out.push(keeper.grace.as_millis().to_string().into());
    }
    push_sandbox_args(&mut out, spec);
    out
}

/// The variables carrying `program args…` (and its `arg0`, if any) to a keeper.
pub(super) fn argv_env(
    program: &std::ffi::OsStr,
    arg0: Option<&std::ffi::OsStr>,
    args: &[&std::ffi::OsStr],
) -> Vec<(OsString, OsString)> {
    let mut env = vec![(ARGC_VAR.into(), (args.len() + 1).to_string().into())];
    for (i, arg) in std::iter::once(program)
        .chain(args.iter().copied())
        .enumerate()
    {
        env.push((format!("{ARGV_VAR_PREFIX}{i}").into(), arg.to_os_string()));
    }
    env.extend(arg0.map(|name| (ARG0_VAR.into(), name.to_os_string())));
    env
}

/// Reads back what [`argv_env`] wrote, from `lookup` (the process environment).
pub(super) fn argv_from_env(
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<OsString>, String> {
    let count: usize = lookup(ARGC_VAR)
        .and_then(|v| v.to_str()?.parse().ok())
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("{ARGC_VAR} must name how many arguments follow (at least 1)"))?;
    (0..count)
        .map(|i| {
            let name = format!("{ARGV_VAR_PREFIX}{i}");
            lookup(&name).ok_or_else(|| format!("{name} is missing"))
        })
        .collect()
}

/// The names of the variables [`argv_env`] sets for `count` arguments, to drop them again.
pub(super) fn argv_vars(count: usize) -> impl Iterator<Item = String> {
    [ARGC_VAR.to_owned(), ARG0_VAR.to_owned()]
        .into_iter()
        .chain((0..count).map(|i| format!("{ARGV_VAR_PREFIX}{i}")))
}

/// Makes the launched program lead a session of its own (or, when its parent already made it a
/// process group leader, keeps that group). The daemon tells which session shell a sandboxed
/// client runs under by its session id, which no process can move into another existing session;
/// and the program's process group is never the daemon's, whose kill of the group would then hit
/// the daemon itself.
pub(super) fn own_session() -> Result<(), String> {
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
    /// Become the keeper of the program named in the environment (`spec` `None`: unconfined).
    Keep {
        keeper: KeeperSpec,
        spec: Option<SandboxSpec>,
    },
    /// The keeper's child: confine yourself to `spec` (if any) and become the program named in
    /// the environment, dying with the keeper.
    KeptChild {
        spec: Option<SandboxSpec>,
    },
}

/// Parses the arguments after `__sandbox`.
pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, String> {
    let mut args = args.into_iter();
    let mut spec = SandboxSpec::default();
    let mut wrote = false;
    let mut unconfined = false;
    let mut keep = false;
    let mut kept_child = false;
    let mut keeper = KeeperSpec::default();
    let mut keeper_option: Option<&'static str> = None;
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
            Some("--protect") => match args.next() {
                Some(path) => {
                    spec.protected.push(path.into());
                    wrote = true;
                }
                None => return Err("--protect needs a path".into()),
            },
            Some("--unconfined") => unconfined = true,
            Some("--keep") => keep = true,
            Some("--kept-child") => kept_child = true,
            Some("--cgroup") => {
                keeper_option = Some("--cgroup");
                let dir = args.next().ok_or("--cgroup needs a folder")?;
                keeper.cgroup = Some(dir.into());
            }
            Some("--max-processes") => {
                keeper_option = Some("--max-processes");
                keeper.max_processes = Some(number("--max-processes", args.next())?);
            }
            Some("--grace-ms") => {
                keeper_option = Some("--grace-ms");
                keeper.grace = std::time::Duration::from_millis(number("--grace-ms", args.next())?);
            }
            Some("--") => {
                if spec.read_only && wrote {
                    return Err("--read-only excludes --write and --protect".into());
                }
                if keep || kept_child || unconfined || keeper_option.is_some() {
                    return Err("a kept program is named in the environment, not after --".into());
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
    if !keep && !kept_child {
        if let Some(option) = keeper_option.or(unconfined.then_some("--unconfined")) {
            return Err(format!("{option} needs --keep"));
        }
        return Err("no program (a `--` followed by the program is required)".into());
    }
    if keep && kept_child {
        return Err("--keep and --kept-child exclude each other".into());
    }
    if unconfined && (wrote || spec.read_only) {
        return Err("--unconfined excludes --write, --protect and --read-only".into());
    }
    if spec.read_only && wrote {
        return Err("--read-only excludes --write and --protect".into());
    }
    let spec = (!unconfined).then_some(spec);
    if kept_child {
        if let Some(option) = keeper_option {
            return Err(format!(
                "{option} belongs to the keeper, not to --kept-child"
            ));
        }
        return Ok(Invocation::KeptChild { spec });
    }
    Ok(Invocation::Keep { keeper, spec })
}

fn number(option: &str, value: Option<OsString>) -> Result<u64, String> {
    value
        .as_deref()
        .and_then(std::ffi::OsStr::to_str)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{option} needs a whole number"))
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
        Invocation::Keep { keeper, spec } => return super::keeper::keep_main(&keeper, spec),
        Invocation::KeptChild { spec } => return super::keeper::child_main(spec.as_ref()),
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
    exec_failed(&error)
}

/// The exit status for a program that could not be run: 127 when it does not exist, else 126.
pub(super) fn exec_failed(error: &std::io::Error) -> ExitCode {
    if error.kind() == std::io::ErrorKind::NotFound {
        ExitCode::from(EXIT_NOT_FOUND)
    } else {
        ExitCode::from(EXIT_REFUSED)
    }
}
