//! The filesystem sandbox for the session shells: a [`SandboxSpec`] (which folders may be
//! written) becomes a kernel-enforced confinement of a process and everything it starts.
//!
//! Flow: the shell asks [`wrap`] for a command line; when this machine can sandbox
//! ([`support`]) and the `synapsed` executable is found ([`launcher`]), the command line is
//! `synapsed __sandbox [--write DIR]... [--protect PATH]... [--read-only] -- bash …`. That hidden launcher
//! ([`launcher_main`]) runs in the new process before bash exists: it [`apply`]s the spec to
//! itself and then replaces itself with the program (`exec`, same pid, same process group, same
//! environment and descriptors). When applying fails it exits 126 without running the program.
//! When [`wrap`] returns `None` the caller runs its program unsandboxed; [`support`] has logged
//! why once.
//!
//! # What is guaranteed (Linux, Landlock)
//! For the sandboxed process and every descendant — a Landlock domain survives `fork` and
//! `exec` and can never be dropped — the kernel refuses, anywhere except beneath the writable
//! folders: writing, truncating (ABI 3+), creating, deleting, renaming and linking files;
//! making directories, fifos, sockets, device nodes and symlinks. Device ioctls (ABI 5+) are
//! allowed only on the devices listed next. Refused calls fail with `EACCES` ("Permission
//! denied"); a rename or link out of a writable folder may get `EXDEV` first, which `mv` turns
//! into copy-and-delete, refused in turn. The character devices `/dev/null`, `/dev/zero`,
//! `/dev/full`, `/dev/tty` (the process's own controlling terminal, if it has one), `/dev/random`
//! and `/dev/urandom` stay writable; no other path is added implicitly — not `/tmp`, not
//! `/dev/shm`, not `/dev/pts/*` or `/dev/ptmx`: session shells run on pipes, and the user's
//! other terminals can be neither written nor (ABI 5+) driven by `ioctl` even when opened
//! read-only; a program that needs a new pseudo-terminal (`script`, `expect`) fails to open
//! one. `no_new_privs` is set too, so set-uid programs (`sudo`, `su`) gain no privileges inside.
//! The writable folders are the ones that existed when the sandbox was applied (rules bind to
//! the folders, not to their names): one created or re-created later is not writable.
//!
//! Protected paths ([`SandboxSpec::protected`]: the user's configuration) stay read-only even
//! beneath a writable folder. A writable folder with protected paths strictly beneath it is
//! granted entry by entry instead of whole: each folder in it with every right, each regular
//! file with the file rights, except the protected paths, going down into the entries that lead
//! to one. Left read-only too, failing closed: symlinks (opening one would grant its target), a
//! regular file with a second hard link (a rule binds to the inode, so its other name would be
//! writable), and other kinds of file. In the folders carved this way (the home folder itself,
//! when it is the session's folder), nothing can be created, removed or renamed: a protected
//! path that does not exist yet cannot be made (`mkdir ~/.claude` fails), and a file directly
//! in the home can be edited in place but not replaced by a rename. Landlock's rule on links and
//! renames (the destination may not carry more rights than the source) refuses to link or move
//! a protected file into a writable folder (`EXDEV`). A writable folder that lies inside a
//! protected path, or is one, stays writable (a session started in `~/.config/nvim`). A hard
//! link to a protected file made before the sandbox, outside it, inside a writable folder is
//! the one route left: it is the same file under a writable name.
//!
//! Signals (ABI 6+): the sandboxed processes can signal only processes of their own Landlock
//! domain — what they started themselves, and anything sandboxed further below them — never the
//! daemon, the user's `synapse` client, another session's shell or any other process of the
//! user (`kill` fails with `EPERM`, "Operation not permitted"; `SIGIO` ownership likewise).
//! Abstract Unix sockets created outside the domain (an X server, a D-Bus bus listening on one)
//! cannot be connected to. `ptrace` of a process outside the domain is refused on every ABI.
//!
//! File metadata: Landlock has no right for it, and a seccomp filter cannot see paths, so the
//! filter installed right after Landlock (`seccomp.rs`) refuses anywhere, with `EPERM`, the
//! changes that weaken a file's protection: a `chmod` whose mode makes it group- or
//! world-writable, set-uid or set-gid (`chmod 0666 settings.json` fails; `chmod +x`, `644` and
//! `755` work), any change of owner (`chown`; `cp -p` and `tar x` as root say they could not
//! keep owners) and any change of extended attributes (`setfattr`, `setfacl`, file
//! capabilities). It also refuses the `TIOCSTI` and `TIOCLINUX` ioctls on every descriptor,
//! inherited ones too, so nothing types into a terminal; and `io_uring_setup`, whose ring has
//! attribute operations of its own. The umask loses its group and world write bits, so what the
//! sandbox creates is never writable by others (and a later `chmod +x` of it asks for no
//! group write). Changing times (`touch -d`, `utimes`) stays allowed anywhere: it grants
//! nobody anything, and `make`, `tar` and `rsync` rely on it. A mode that only narrows access
//! (`chmod 000`) is allowed too: it can lock the user out of a file until they `chmod` it back,
//! but grants nothing. A file created inside a writable folder may still get any mode at
//! creation (`umask 0`, then `touch`): those files are the agent's own work.
//!
//! In practice, what a caller should know when choosing the writable list: without a writable
//! temp folder (`TMPDIR`), `mktemp` fails and so do bash here-documents larger than a pipe
//! buffer ("cannot create temp file for here-document"); without `/dev/shm`, Python's
//! `multiprocessing` locks fail. Reopening an inherited descriptor by name (`> /dev/stdout`)
//! is a new open of whatever it points to: fine for the daemon's pipes, refused for a file
//! outside the writable folders.
//!
//! # What is not confined
//! - Reads and execution: everything the user can read stays readable (secrets included).
//! - The network, including pathname Unix sockets (the right of ABI 9 is left unhandled on
//!   purpose; abstract ones are scoped, see above). A program that can reach a more
//!   privileged service through a socket (a container engine, `systemd --user`, this daemon's
//!   own socket) can still have it write on its behalf.
//! - Descriptors opened before the sandbox (the daemon's pipes to the shell).
//! - The daemon itself: its in-process commands (`read`, `write`, `edit`, …) and the MCP
//!   servers it starts are not sandboxed; they are governed by the permission rules.
//! - On kernels older than ABI 6 the status is [`Enforcement::Partial`]: without ABI 3,
//!   truncating an existing file is not checked; without ABI 5, device ioctls are not (the
//!   filter still refuses `TIOCSTI` and `TIOCLINUX`); without ABI 6, signals and abstract Unix
//!   sockets are not scoped, so a sandboxed process can signal any process of the user,
//!   the daemon included.
//! - On architectures other than x86-64 and AArch64 the seccomp filter is not installed:
//!   metadata and terminal ioctls are unconfined, the status is partial and [`support`] says
//!   so once. A kernel that refuses the filter where it exists fails [`apply`] (the launcher
//!   then runs nothing).
//!
//! # Other systems
//! Landlock is Linux-only; elsewhere [`support`] reports [`Support::Unavailable`]. The macOS
//! plan is the same launcher applying a `sandbox-exec` (Seatbelt) profile generated from the
//! same [`SandboxSpec`] (deny `file-write*` except the writable subpaths and the devices); it is
//! not implemented yet.

#![deny(missing_docs)]

#[cfg(target_os = "linux")]
mod caps;
#[cfg(target_os = "linux")]
mod carve;
mod keeper;
mod launcher;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(test)]
mod carve_tests;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(not(target_os = "linux"))]
use other as platform;

pub use launcher::{EXIT_REFUSED, KeeperSpec, Kept, SUBCOMMAND, kept, launcher, launcher_main};

/// What a sandboxed process may write. Reads and execution are allowed everywhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Folders (absolute paths) the process gets full access beneath. Ignored when
    /// `read_only` is set; folders that do not exist are skipped and reported in [`Status`].
    pub writable: Vec<PathBuf>,
    /// No writable folder at all: only the device files listed in the module header.
    pub read_only: bool,
    /// Paths (absolute; files or folders, existing or not) that stay read-only even beneath a
    /// writable folder: the user's own configuration when the session's folder is their home.
    /// A writable folder with protected paths strictly beneath it is granted entry by entry
    /// instead of whole (see the module header); one that lies inside a protected path, or is
    /// one, stays writable.
    pub protected: Vec<PathBuf>,
}

/// Whether this machine can sandbox the session shells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock works.
    Landlock {
        /// The kernel's Landlock ABI version (1 on Linux 5.13; 6 or more scopes signals).
        abi: i32,
    },
    /// No sandbox here; commands are checked by permission rules only.
    Unavailable {
        /// Why, for the log and the user: Landlock missing or disabled, or another system.
        reason: String,
    },
}

/// How completely [`apply`] could enforce the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Every handled access right is enforced.
    Full,
    /// An older kernel or an unsupported architecture: writes are confined but some rights,
    /// scopes or the metadata filter are not in force (see the header).
    Partial,
}

/// The result of a successful [`apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Whether every right and scope the sandbox handles is in force, or only some.
    pub enforcement: Enforcement,
    /// The kernel's Landlock ABI version.
    pub abi: i32,
    /// Writable folders of the spec that did not exist and so were not granted.
    pub missing: Vec<PathBuf>,
    /// Whether the seccomp filter on metadata changes and terminal ioctls is in force.
    pub metadata_filter: bool,
    /// Writable folders that were granted entry by entry, because protected paths lie beneath
    /// them.
    pub carved: Vec<PathBuf>,
}

/// Why [`apply`] could not put the whole sandbox in force (it may be partly applied); the
/// launcher then exits with [`EXIT_REFUSED`] without running the program.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// This kernel or system has no usable Landlock, or enforced none of the rights.
    #[error("Landlock unavailable: {reason}")]
    Unavailable {
        /// What is missing, as in [`Support::Unavailable`].
        reason: String,
    },
    /// A folder of the spec (or `/`, or a device) exists but cannot be opened for its rule.
    #[error("cannot open {} for a sandbox rule: {source}", path.display())]
    Path {
        /// The path that could not be opened.
        path: PathBuf,
        /// The error from opening or inspecting it (permission denied, …).
        source: std::io::Error,
    },
    /// Landlock or the capability drop failed at one step of building or enforcing the sandbox.
    #[error("Landlock refused the ruleset while {step}: {detail}")]
    Ruleset {
        /// The step that failed, as a phrase for the message (`"adding a rule"`).
        step: &'static str,
        /// The error the step returned.
        detail: String,
    },
    /// The kernel refused the seccomp filter (metadata changes, terminal ioctls).
    #[error("the kernel refused the seccomp filter on metadata changes: {detail}")]
    Filter {
        /// The OS error, or why the filter program could not be built.
        detail: String,
    },
}

/// Whether the session shells can be sandboxed here. Detected once; the first call logs the
/// answer.
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            let support = platform::probe();
            match &support {
                Support::Landlock { abi } => {
                    tracing::info!("Landlock ABI {abi}: session shells are sandboxed");
                    if *abi < 6 {
                        tracing::warn!(
                            "Landlock ABI {abi} cannot scope signals (ABI 6, Linux 6.12): \
                             sandboxed commands can signal the daemon and other sessions"
                        );
                    }
                    if !platform::METADATA_FILTER {
                        tracing::warn!(
                            "no seccomp filter for this architecture: sandboxed commands can \
                             change file modes, owners and attributes and type into terminals"
                        );
                    }
                }
                Support::Unavailable { reason } => tracing::warn!(
                    "Landlock unavailable ({reason}): commands are checked by permission rules only"
                ),
            }
            support
        })
        .clone()
}

/// Confines the calling thread — and everything it later starts — to `spec`. Meant for a
/// single-threaded process about to `exec` (the launcher); other threads of the process are
/// not confined. Never returns `Ok` without a sandbox in force.
pub fn apply(spec: &SandboxSpec) -> Result<Status, SandboxError> {
    platform::apply(spec)
}

/// The command line that runs `program args…` under `spec`: the launcher and its arguments.
/// `None` when this machine cannot sandbox or the `synapsed` executable is not found; the
/// caller then decides whether to run the program unsandboxed.
pub fn wrap(spec: &SandboxSpec, program: &str, args: &[&str]) -> Option<(PathBuf, Vec<OsString>)> {
    if !matches!(support(), Support::Landlock { .. }) {
        return None;
    }
    let exe = launcher()?;
    Some((exe, launcher::launcher_args(spec, program, args)))
}
