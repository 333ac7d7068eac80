//! Landlock through the `landlock` crate: detecting the kernel's ABI and building, then
//! enforcing, the ruleset for a [`SandboxSpec`].
//!
//! The ruleset handles every filesystem right up to [`HANDLED_ABI`] and the scopes of
//! [`SCOPED_ABI`] (best effort: rights and scopes the kernel lacks are dropped and the status
//! says "partial"), allows read, read-dir and execute beneath `/`, everything beneath each
//! writable folder (entry by entry, [`carve`], when protected paths lie beneath it), and the file rights (read, write, truncate, ioctl) on the device files.
//! Then the umask loses its group and world write bits and the [`seccomp`] filter is installed
//! (Landlock's `restrict_self` has set `no_new_privs`, which the filter needs).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, BitFlags, LandlockStatus, PathBeneath, PathFd, RestrictionStatus,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};

use super::carve::{self, Protected};
use super::{Enforcement, SandboxError, SandboxSpec, Status, Support, seccomp};

/// The newest ABI whose filesystem rights we handle. ABI 9 adds only the right to connect to
/// pathname Unix sockets, which is network to us and stays unrestricted; ABI 5 to 8 share the
/// same filesystem rights, so with the scopes of ABI 6 a kernel of ABI 6 or later enforces the
/// ruleset fully.
const HANDLED_ABI: ABI = ABI::V8;

/// Whether [`apply`] installs the seccomp filter on this architecture.
pub(super) const METADATA_FILTER: bool = seccomp::AVAILABLE;

/// The ABI whose scopes we handle: signals and abstract Unix sockets (ABI 6) may only reach
/// processes and sockets of the same Landlock domain or one nested in it.
const SCOPED_ABI: ABI = ABI::V6;

/// Devices a shell needs to write (discarding output, random numbers, its own terminal through
/// `/dev/tty`). Not `/dev/pts` or `/dev/ptmx`: session shells run on pipes, and the user's other
/// terminals must not be written or, without the ioctl right on them, driven by `ioctl`.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

/// Reads the kernel's Landlock status by enforcing a throwaway ruleset on a throwaway thread:
/// without the all-threads flag Landlock (and `no_new_privs`) confine only the calling thread,
/// and the crate reports the kernel's ABI only as part of an enforcement.
pub(super) fn probe() -> Support {
    let thread = std::thread::Builder::new()
        .name("landlock-probe".into())
        .spawn(|| {
            Ruleset::default()
                .handle_access(AccessFs::Execute)?
                .create()?
                .restrict_self()
        });
    let status = match thread.map(|t| t.join()) {
        Ok(Ok(Ok(status))) => status,
        Ok(Ok(Err(e))) => {
            return Support::Unavailable {
                reason: format!("the probe ruleset failed: {e}"),
            };
        }
        Ok(Err(_)) => {
            return Support::Unavailable {
                reason: "the probe thread panicked".into(),
            };
        }
        Err(e) => {
            return Support::Unavailable {
                reason: format!("cannot start the probe thread: {e}"),
            };
        }
    };
    match abi_of(status.landlock) {
        Some(abi) if status.ruleset != RulesetStatus::NotEnforced => Support::Landlock { abi },
        _ => Support::Unavailable {
            reason: unavailable_reason(status.landlock),
        },
    }
}

pub(super) fn apply(spec: &SandboxSpec) -> Result<Status, SandboxError> {
    let handled = AccessFs::from_all(HANDLED_ABI);
    let everywhere = AccessFs::from_read(HANDLED_ABI);
    let file_rights = AccessFs::from_file(HANDLED_ABI);

    let mut ruleset = Ruleset::default()
        .handle_access(handled)
        .and_then(|r| r.scope(Scope::from_all(SCOPED_ABI)))
        .and_then(Ruleset::create)
        .map_err(ruleset_error("creating the ruleset"))?;
    let root = open(Path::new("/"))?.ok_or_else(|| SandboxError::Path {
        path: "/".into(),
        source: ErrorKind::NotFound.into(),
    })?;
    ruleset = add(ruleset, root, everywhere)?;

    let mut missing = Vec::new();
    let mut carved = Vec::new();
    if !spec.read_only {
        let protected = Protected::new(&spec.protected);
        for folder in &spec.writable {
            // A writable plain file gets the rights a file can carry; asking for directory
            // rights on it would downgrade the whole status to "partial".
            let rights = match std::fs::metadata(folder) {
                Ok(m) if m.is_dir() => handled,
                Ok(_) => file_rights,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    missing.push(folder.clone());
                    continue;
                }
                Err(source) => {
                    return Err(SandboxError::Path {
                        path: folder.clone(),
                        source,
                    });
                }
            };
            if rights == handled && protected.beneath(folder) {
                for grant in carve::grants(folder, &protected) {
                    let rights = if grant.folder { handled } else { file_rights };
                    ruleset = add(ruleset, grant.fd, rights)?;
                }
                carved.push(folder.clone());
                continue;
            }
            match open(folder)? {
                Some(fd) => ruleset = add(ruleset, fd, rights)?,
                None => missing.push(folder.clone()),
            }
        }
    }
    for device in DEVICES {
        // A device this system lacks (a minimal container's /dev) is simply not granted.
        if let Some(fd) = open(Path::new(device))? {
            ruleset = add(ruleset, fd, file_rights)?;
        }
    }

    let status = ruleset
        .restrict_self()
        .map_err(ruleset_error("enforcing the ruleset"))?;
    let mut status = status_of(status, missing)?;
    status.carved = carved;
    tighten_umask();
    super::caps::drop_dangerous().map_err(|detail| SandboxError::Ruleset {
        step: "dropping capabilities",
        detail,
    })?;
    status.metadata_filter = seccomp::install()?;
    if !status.metadata_filter {
        status.enforcement = Enforcement::Partial;
    }
    Ok(status)
}

/// Files the sandbox creates are never group or world writable: the filter would refuse to
/// `chmod` them otherwise (a `chmod +x` of a 0664 file asks for 0775). The umask belongs to
/// the whole process; between the two calls it is 022, a common default.
fn tighten_umask() {
    use nix::sys::stat::{Mode, umask};
    let old = umask(Mode::S_IWGRP | Mode::S_IWOTH);
    umask(old | Mode::S_IWGRP | Mode::S_IWOTH);
}

/// Opens `path` for a rule (an `O_PATH` descriptor); `Ok(None)` when it does not exist.
fn open(path: &Path) -> Result<Option<PathFd>, SandboxError> {
    let source = match PathFd::new(path) {
        Ok(fd) => return Ok(Some(fd)),
        Err(landlock::PathFdError::OpenCall { source, .. }) => source,
        Err(e) => std::io::Error::other(e.to_string()),
    };
    if source.kind() == ErrorKind::NotFound {
        return Ok(None);
    }
    Err(SandboxError::Path {
        path: path.to_path_buf(),
        source,
    })
}

fn add(
    ruleset: RulesetCreated,
    fd: impl std::os::fd::AsFd,
    rights: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    ruleset
        .add_rule(PathBeneath::new(fd, rights))
        .map_err(ruleset_error("adding a rule"))
}

fn status_of(status: RestrictionStatus, missing: Vec<PathBuf>) -> Result<Status, SandboxError> {
    let enforcement = match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        RulesetStatus::NotEnforced => {
            return Err(SandboxError::Unavailable {
                reason: unavailable_reason(status.landlock),
            });
        }
    };
    Ok(Status {
        enforcement,
        abi: abi_of(status.landlock).unwrap_or(0),
        missing,
        metadata_filter: false,
        carved: Vec::new(),
    })
}

/// The kernel's ABI (even when newer than the crate knows).
fn abi_of(status: LandlockStatus) -> Option<i32> {
    match status {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
    }
}

fn unavailable_reason(status: LandlockStatus) -> String {
    match status {
        LandlockStatus::NotEnabled => {
            "the kernel has Landlock but it is disabled (it is missing from the lsm= boot \
             parameter)"
                .into()
        }
        LandlockStatus::NotImplemented => {
            "the kernel has no Landlock (it needs Linux 5.13 or later built with \
             CONFIG_SECURITY_LANDLOCK), or a seccomp filter hides it"
                .into()
        }
        LandlockStatus::Available { .. } => {
            "Landlock is present but enforced none of the requested rights".into()
        }
    }
}

fn ruleset_error(step: &'static str) -> impl Fn(RulesetError) -> SandboxError {
    move |e| SandboxError::Ruleset {
        step,
        detail: e.to_string(),
    }
}
