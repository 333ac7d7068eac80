//! The keeper: `synapsed __sandbox --keep …`, a small process that stays between the daemon and
//! a program (a session's bash, a background job, an MCP server) for the program's whole life,
//! so that nothing the program starts outlives it.
//!
//! ```text
//! daemon ── keeper (session + group leader, child subreaper, in the session's cgroup)
//!             └── synapsed __sandbox --kept-child … (own process group, confines itself, execs)
//!                   = the program ── its children, `setsid` daemons, double forks …
//! ```
//!
//! Flow: the keeper leads a session of its own (as the plain launcher does), joins the cgroup it
//! was given (before anything is forked, so every descendant is counted there) or lowers
//! `RLIMIT_NPROC`, marks itself a child subreaper (`PR_SET_CHILD_SUBREAPER`: an orphaned
//! descendant — a double fork, a `setsid` daemon, a process that dropped every tag — is
//! re-parented to the keeper, not to init), asks for a signal when its parent dies
//! (`PR_SET_PDEATHSIG`: a SIGKILLed daemon still ends everything), blocks the signals it
//! handles and reads them from a `signalfd`, then starts its one child: `synapsed` again in
//! `--kept-child` mode, in a process group of its own, which applies the sandbox to itself and
//! `exec`s the program. The keeper itself stays outside the sandbox: with Landlock's signal
//! scope (ABI 6+) nothing inside can signal it.
//!
//! It then waits. When the program exits, or the keeper gets SIGTERM/SIGHUP/SIGINT, or its
//! parent is gone, it ends everything: SIGTERM to each child and its process group and up to
//! the grace period for them to go (when asked to stop; not when the program exited or the
//! daemon died), then SIGKILL to every child (and its group), reaping, again and again — each
//! killed child's own children are re-parented to the keeper and killed in the next round —
//! until `waitpid` answers `ECHILD`. Then it exits with the program's status (128 + signal when
//! it was killed). Pids never race: a child of the keeper cannot be reaped by anyone else, so
//! its pid names it until the keeper reaps it.
//!
//! The program's child dies with the keeper too (`PR_SET_PDEATHSIG` SIGKILL, set in
//! `--kept-child` mode before `exec`), so a keeper killed from outside takes the program along.
//!
//! Limits: a descendant stuck in an uninterruptible sleep holds the keeper until it wakes (the
//! daemon gives up waiting and kills the keeper; a cgroup, where there is one, still lets the
//! daemon find what is left). Processes that escape through another service (`systemd-run`,
//! `at`, a container engine) are not descendants and are not the keeper's to end.

use std::ffi::OsString;
use std::process::ExitCode;

#[cfg(not(target_os = "linux"))]
use super::SandboxSpec;
use super::launcher::{EXIT_REFUSED, SUBCOMMAND};

/// Exit status of a process killed by signal `signal`, as a shell reports it.
pub(super) fn status_of_signal(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

/// The pids listed in a `/proc/<pid>/task/<tid>/children` file.
pub(super) fn parse_children(text: &str) -> Vec<i32> {
    text.split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn refuse(what: &str) -> ExitCode {
    eprintln!("synapsed {SUBCOMMAND}: {what}");
    ExitCode::from(EXIT_REFUSED)
}

fn program_argv() -> Result<Vec<OsString>, String> {
    super::launcher::argv_from_env(|name| std::env::var_os(name))
}

#[cfg(target_os = "linux")]
pub(super) use linux::{child_main, keep_main};

#[cfg(not(target_os = "linux"))]
pub(super) fn keep_main(_keeper: &super::KeeperSpec, _spec: Option<SandboxSpec>) -> ExitCode {
    refuse("there is no keeper on this system")
}

#[cfg(not(target_os = "linux"))]
pub(super) fn child_main(_spec: Option<&SandboxSpec>) -> ExitCode {
    refuse("there is no keeper on this system")
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, ExitCode};
    use std::time::{Duration, Instant};

    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::prctl;
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    use nix::sys::signal::{SigSet, Signal, kill, killpg};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::{Pid, getpgid, getpgrp, getpid, getppid};

    use super::super::launcher::{
        ARG0_VAR, EXIT_REFUSED, LAUNCHER_NAME, SUBCOMMAND, argv_vars, exec_failed, own_session,
        push_sandbox_args,
    };
    use super::super::{KeeperSpec, SandboxSpec, apply};
    use super::{parse_children, program_argv, refuse, status_of_signal};

    /// The signal the kernel sends the keeper when its parent thread ends. The keeper then
    /// checks whether its parent process is really gone (a thread of the daemon that started it
    /// may end while the daemon lives on), so any sender of it only makes the keeper look.
    const PARENT_GONE_SIGNAL: Signal = Signal::SIGUSR2;
    /// Signals that tell the keeper to end everything and exit.
    const STOP_SIGNALS: [Signal; 3] = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT];
    /// Between SIGKILL rounds when children are still there (a SIGCHLD ends the wait early).
    const KILL_ROUND: Duration = Duration::from_millis(20);
    /// This process as an executable file, valid even when the file was replaced on disk.
    const SELF_EXE: &str = "/proc/self/exe";

    /// Why the keeper ends everything.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum End {
        ProgramExited,
        Asked,
        ParentGone,
    }

    /// Whether the keeper still has children after reaping what had exited.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Children {
        Some,
        None,
    }

    pub(in super::super) fn keep_main(keeper: &KeeperSpec, spec: Option<SandboxSpec>) -> ExitCode {
        let argv = match program_argv() {
            Ok(argv) => argv,
            Err(e) => return refuse(&format!("not keeping a program: {e}")),
        };
        let shown = argv[0].to_string_lossy().into_owned();
        if let Err(e) = prepare(keeper) {
            return refuse(&format!("not running {shown}: {e}"));
        }
        let parent = getppid();
        let mut signals = SigSet::empty();
        for signal in STOP_SIGNALS
            .into_iter()
            .chain([Signal::SIGCHLD, PARENT_GONE_SIGNAL])
        {
            signals.add(signal);
        }
        let setup = prctl::set_child_subreaper(true)
            .and_then(|()| prctl::set_pdeathsig(PARENT_GONE_SIGNAL))
            .and_then(|()| signals.thread_block())
            .and_then(|()| {
                SignalFd::with_flags(&signals, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
            });
        let signalfd = match setup {
            Ok(fd) => fd,
            Err(e) => return refuse(&format!("not running {shown}: cannot keep it: {e}")),
        };
        if getppid() != parent {
            // The daemon died before the death signal was armed: start nothing.
            return ExitCode::from(EXIT_REFUSED);
        }
        let mut child_args: Vec<std::ffi::OsString> =
            vec![SUBCOMMAND.into(), "--kept-child".into()];
        push_sandbox_args(&mut child_args, spec.as_ref());
        let child = Command::new(SELF_EXE)
            .arg0(LAUNCHER_NAME)
            .args(child_args)
            .process_group(0)
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(e) => {
                eprintln!("synapsed {SUBCOMMAND}: cannot start {shown}: {e}");
                return exec_failed(&e);
            }
        };
        release_stdio();
        let mut keeper_state = Keeper {
            signalfd,
            program: Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX)),
            parent,
            own_group: getpgrp(),
            status: None,
        };
        let end = keeper_state.wait_for_end();
        let grace = if end == End::Asked {
            keeper.grace
        } else {
            Duration::ZERO
        };
        keeper_state.end_all(grace);
        ExitCode::from(keeper_state.status.unwrap_or(EXIT_REFUSED))
    }

    /// The keeper's own set-up before it starts anything: its own session, its cgroup or its
    /// process limit.
    fn prepare(keeper: &KeeperSpec) -> Result<(), String> {
        own_session()?;
        if let Some(dir) = &keeper.cgroup {
            // "0" is the writing process itself, on cgroup v1 and v2 alike.
            std::fs::write(dir.join("cgroup.procs"), b"0")
                .map_err(|e| format!("cannot join the cgroup {}: {e}", dir.display()))?;
        }
        if let Some(max) = keeper.max_processes {
            limit_processes(max)?;
        }
        Ok(())
    }

    /// `RLIMIT_NPROC` = the processes this user has now + `headroom` (never above the current
    /// hard limit), soft and hard alike so nothing inside can raise it again.
    fn limit_processes(headroom: u64) -> Result<(), String> {
        let (_, hard) = getrlimit(Resource::RLIMIT_NPROC)
            .map_err(|e| format!("cannot read the process limit: {e}"))?;
        let limit = processes_of_uid(nix::unistd::getuid().as_raw())
            .saturating_add(headroom)
            .min(hard);
        setrlimit(Resource::RLIMIT_NPROC, limit, limit)
            .map_err(|e| format!("cannot set the process limit to {limit}: {e}"))
    }

    /// Processes whose real uid is `uid` (what `RLIMIT_NPROC` counts).
    fn processes_of_uid(uid: u32) -> u64 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return 0;
        };
        let count = dir
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .filter(|e| {
                std::fs::read_to_string(e.path().join("status")).is_ok_and(|status| {
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix("Uid:"))
                        .and_then(|ids| ids.split_whitespace().next())
                        .and_then(|real| real.parse::<u32>().ok())
                        == Some(uid)
                })
            })
            .count();
        u64::try_from(count).unwrap_or(u64::MAX)
    }

    /// The keeper does not talk to the daemon: its copies of the daemon's pipes go, so the
    /// daemon sees end-of-file as soon as the program and its children close theirs.
    fn release_stdio() {
        if let Ok(null) = std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/null")
        {
            let _ = nix::unistd::dup2_stdin(null.as_fd());
            let _ = nix::unistd::dup2_stdout(null.as_fd());
        }
    }

    struct Keeper {
        signalfd: SignalFd,
        program: Pid,
        parent: Pid,
        own_group: Pid,
        /// The program's exit status, once reaped.
        status: Option<u8>,
    }

    impl Keeper {
        /// Waits until the program exits, the keeper is told to stop or its parent is gone,
        /// reaping re-parented orphans as they exit.
        fn wait_for_end(&mut self) -> End {
            loop {
                self.wait_signal(None);
                let mut end = None;
                while let Ok(Some(info)) = self.signalfd.read_signal() {
                    let signal = i32::try_from(info.ssi_signo)
                        .ok()
                        .and_then(|s| Signal::try_from(s).ok());
                    match signal {
                        Some(Signal::SIGCHLD) | None => {}
                        Some(PARENT_GONE_SIGNAL) => {
                            if getppid() != self.parent {
                                end = Some(End::ParentGone);
                            }
                        }
                        Some(_) => end = Some(End::Asked),
                    }
                }
                self.reap();
                if let Some(end) = end {
                    return end;
                }
                if self.status.is_some() {
                    return End::ProgramExited;
                }
            }
        }

        /// Ends every child: SIGTERM and up to `grace` for them to go, then SIGKILL rounds
        /// until there is no child left.
        fn end_all(&mut self, grace: Duration) {
            if !grace.is_zero() {
                let deadline = Instant::now() + grace;
                self.signal_children(Signal::SIGTERM);
                while self.reap() == Children::Some {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    self.wait_signal(Some(left));
                }
            }
            loop {
                self.signal_children(Signal::SIGKILL);
                if self.reap() == Children::None {
                    return;
                }
                self.wait_signal(Some(KILL_ROUND));
            }
        }

        /// Sends `signal` to each child and to its process group (never the keeper's own).
        fn signal_children(&self, signal: Signal) {
            for pid in children() {
                let pid = Pid::from_raw(pid);
                let _ = kill(pid, signal);
                if let Ok(group) = getpgid(Some(pid))
                    && group != self.own_group
                    && group.as_raw() > 1
                {
                    let _ = killpg(group, signal);
                }
            }
        }

        /// Reaps every child that has exited, noting the program's status.
        fn reap(&mut self) -> Children {
            loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) => return Children::Some,
                    Ok(WaitStatus::Exited(pid, code)) if pid == self.program => {
                        self.status = Some(u8::try_from(code).unwrap_or(u8::MAX));
                    }
                    Ok(WaitStatus::Signaled(pid, signal, _)) if pid == self.program => {
                        self.status = Some(status_of_signal(signal as i32));
                    }
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(_) => return Children::None,
                }
            }
        }

        /// Waits until a signal is pending (at most `timeout`), without consuming it.
        fn wait_signal(&self, timeout: Option<Duration>) {
            let timeout = match timeout {
                None => PollTimeout::NONE,
                Some(t) => PollTimeout::try_from(t).unwrap_or(PollTimeout::MAX),
            };
            let mut fds = [PollFd::new(self.signalfd.as_fd(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, timeout);
            if timeout != PollTimeout::NONE {
                // Drain: during the ending the signals only say "look again".
                while let Ok(Some(_)) = self.signalfd.read_signal() {}
            }
        }
    }

    /// The keeper's children, from `/proc/self/task/<pid>/children` (a single-threaded
    /// process has all of them there), else by the parent pid of every process.
    fn children() -> Vec<i32> {
        let me = getpid().as_raw();
        if let Ok(text) = std::fs::read_to_string(format!("/proc/self/task/{me}/children")) {
            return parse_children(&text);
        }
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| parent_of(*pid) == Some(me))
            .collect()
    }

    fn parent_of(pid: i32) -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }

    /// `--kept-child`: dies with the keeper, confines itself to `spec` (if any) and becomes the
    /// program named in the environment.
    pub(in super::super) fn child_main(spec: Option<&SandboxSpec>) -> ExitCode {
        let argv = match program_argv() {
            Ok(argv) => argv,
            Err(e) => return refuse(&format!("not running a kept program: {e}")),
        };
        let shown = argv[0].to_string_lossy().into_owned();
        // The keeper's blocked signals are inherited through fork and exec: the program starts
        // with none blocked, as it would from a shell.
        if let Err(e) =
            prctl::set_pdeathsig(Signal::SIGKILL).and_then(|()| SigSet::empty().thread_set_mask())
        {
            return refuse(&format!("not running {shown}: {e}"));
        }
        if let Some(spec) = spec
            && let Err(e) = apply(spec)
        {
            return refuse(&format!("not running {shown}: {e}"));
        }
        let program = &argv[0];
        let name = std::env::var_os(ARG0_VAR).unwrap_or_else(|| program.clone());
        let mut command = Command::new(program);
        command.arg0(name).args(&argv[1..]);
        for var in argv_vars(argv.len()) {
            command.env_remove(var);
        }
        let error = command.exec();
        eprintln!("synapsed {SUBCOMMAND}: cannot run {shown}: {error}");
        exec_failed(&error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::launcher::{
        Invocation, KeeperSpec, argv_env, argv_from_env, argv_vars, keeper_args, parse,
    };
    use super::*;
    use crate::SandboxSpec;
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::time::Duration;

    #[test]
    fn the_program_travels_in_the_environment_and_reads_back_whole() {
        let args = [OsStr::new("-c"), OsStr::new("echo 'a b' \"$x\"\n")];
        let env: HashMap<OsString, OsString> =
            argv_env(OsStr::new("/bin/bash"), Some(OsStr::new("bash")), &args)
                .into_iter()
                .collect();
        let argv = argv_from_env(|k| env.get(OsStr::new(k)).cloned()).unwrap();
        assert_eq!(argv, ["/bin/bash", "-c", "echo 'a b' \"$x\"\n"]);
        assert_eq!(env[OsStr::new("SYNAPSE_KEEP_ARG0")], "bash");
        let names: Vec<String> = argv_vars(argv.len()).collect();
        assert_eq!(names.len(), env.len(), "every variable is dropped again");
        assert!(names.iter().all(|n| env.contains_key(OsStr::new(n))));
    }

    #[test]
    fn a_missing_or_partial_program_is_refused() {
        assert!(argv_from_env(|_| None).is_err());
        let partial = |k: &str| (k == "SYNAPSE_KEEP_ARGC").then(|| OsString::from("2"));
        assert!(
            argv_from_env(partial)
                .unwrap_err()
                .contains("SYNAPSE_KEEP_ARGV_0")
        );
    }

    #[test]
    fn keeper_arguments_parse_back() {
        let keeper = KeeperSpec {
            cgroup: Some("/sys/fs/cgroup/pids/s 1".into()),
            max_processes: Some(50),
            grace: Duration::from_millis(400),
        };
        let spec = SandboxSpec {
            writable: vec!["/w".into()],
            protected: vec!["/w/.ssh".into()],
            read_only: false,
        };
        let args = keeper_args(&keeper, Some(&spec));
        assert_eq!(
            parse(args.into_iter().skip(1)),
            Ok(Invocation::Keep {
                keeper: keeper.clone(),
                spec: Some(spec)
            })
        );
        let unconfined = keeper_args(&KeeperSpec::default(), None);
        assert_eq!(
            parse(unconfined.into_iter().skip(1)),
            Ok(Invocation::Keep {
                keeper: KeeperSpec::default(),
                spec: None
            })
        );
        let child = ["--kept-child", "--read-only"].map(OsString::from);
        assert_eq!(
            parse(child),
            Ok(Invocation::KeptChild {
                spec: Some(SandboxSpec {
                    writable: Vec::new(),
                    read_only: true,
                    ..Default::default()
                })
            })
        );
    }

    #[test]
    fn keeper_arguments_that_contradict_are_refused() {
        let cases: [(&[&str], &str); 6] = [
            (&["--max-processes", "9"], "needs --keep"),
            (&["--unconfined"], "needs --keep"),
            (
                &["--keep", "--unconfined", "--write", "/w"],
                "excludes --write",
            ),
            (&["--keep", "--max-processes", "many"], "whole number"),
            (&["--keep", "--", "bash"], "named in the environment"),
            (&["--kept-child", "--cgroup", "/c"], "belongs to the keeper"),
        ];
        for (args, wanted) in cases {
            let error = parse(args.iter().map(OsString::from)).expect_err("must be refused");
            assert!(error.contains(wanted), "{args:?}: {error}");
        }
    }

    #[test]
    fn children_files_and_signal_statuses_read_as_the_kernel_writes_them() {
        assert_eq!(parse_children("12 345 6789 \n"), [12, 345, 6789]);
        assert_eq!(parse_children(""), Vec::<i32>::new());
        assert_eq!(status_of_signal(9), 137);
        assert_eq!(status_of_signal(15), 143);
    }
}
