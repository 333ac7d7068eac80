//! The seccomp filter [`apply`](super::apply) installs right after Landlock: the metadata
//! changes Landlock has no right for, and typing into a terminal.
//!
//! A classic-BPF program, written out by hand below, sees each system call's number,
//! architecture and raw arguments — never a path — and answers `EPERM` to:
//! - `chmod`, `fchmod`, `fchmodat`, `fchmodat2` whose mode sets any of [`WEAKENING_MODE_BITS`]
//!   (group or world write, set-uid, set-gid): `chmod +x`, `644`, `755` still work;
//! - `chown`, `fchown`, `lchown`, `fchownat`, and every `*setxattr`/`*removexattr` (ACLs and
//!   capabilities are extended attributes), whatever their arguments;
//! - `ioctl` with the request `TIOCSTI` or `TIOCLINUX` (compared on its low 32 bits, as the
//!   kernel does), on any descriptor, inherited ones included;
//! - any call of another ABI (32-bit x86 or Arm, x32), whose numbers the program would not
//!   recognise: such a program cannot run in the sandbox at all.
//!
//! `io_uring_setup` answers `ENOSYS` ("no io_uring here"), as the ring has its own
//! `setxattr` operations the filter would not see; programs fall back to ordinary calls.
//! Everything else is allowed. Without the all-threads flag the filter confines the calling
//! thread and what it starts, like Landlock; it is inherited across `fork` and `exec` and can
//! never be removed. Other architectures get no filter ([`AVAILABLE`] is false), which
//! [`apply`](super::apply) reports as partial enforcement.

use std::mem::offset_of;

use libc::{sock_filter, sock_fprog};

use super::SandboxError;

/// Mode bits that make a file writable by others or run with its owner's or group's identity.
pub(super) const WEAKENING_MODE_BITS: u32 =
    libc::S_IWGRP | libc::S_IWOTH | libc::S_ISUID | libc::S_ISGID;

/// Whether this build has a filter for its architecture.
pub(super) const AVAILABLE: bool = arch::FILTER.is_some();

/// One architecture's system call numbers (as the kernel reports them to seccomp).
struct ArchCalls {
    /// `AUDIT_ARCH_*`: the architecture field every call is checked against first.
    audit_arch: u32,
    /// Numbers from here up belong to another ABI under the same architecture field (x32).
    foreign_from: Option<u32>,
    /// Calls refused whatever their arguments.
    refused: &'static [libc::c_long],
    /// Calls whose argument at the given index is a file mode.
    mode_at: &'static [(libc::c_long, usize)],
}

/// Newer calls than the `libc` crate lists everywhere; the numbers are shared by every
/// architecture since Linux 5.1 (`fchmodat2` 6.6, `setxattrat`/`removexattrat` 6.13).
#[cfg(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
))]
mod newer_calls {
    pub(super) const SYS_FCHMODAT2: libc::c_long = 452;
    pub(super) const SYS_SETXATTRAT: libc::c_long = 463;
    pub(super) const SYS_REMOVEXATTRAT: libc::c_long = 466;
}

#[cfg(all(target_arch = "x86_64", target_endian = "little"))]
mod arch {
    use super::ArchCalls;
    use super::newer_calls::{SYS_FCHMODAT2, SYS_REMOVEXATTRAT, SYS_SETXATTRAT};

    pub(super) const FILTER: Option<ArchCalls> = Some(ArchCalls {
        // EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
        audit_arch: 0xC000_003E,
        // __X32_SYSCALL_BIT
        foreign_from: Some(0x4000_0000),
        refused: &[
            libc::SYS_chown,
            libc::SYS_fchown,
            libc::SYS_lchown,
            libc::SYS_fchownat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            SYS_SETXATTRAT,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            SYS_REMOVEXATTRAT,
        ],
        mode_at: &[
            (libc::SYS_chmod, 1),
            (libc::SYS_fchmod, 1),
            (libc::SYS_fchmodat, 2),
            (SYS_FCHMODAT2, 2),
        ],
    });
}

// aarch64 has no `chmod`, `chown` or `lchown`: its C library calls the `*at` forms.
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod arch {
    use super::ArchCalls;
    use super::newer_calls::{SYS_FCHMODAT2, SYS_REMOVEXATTRAT, SYS_SETXATTRAT};

    pub(super) const FILTER: Option<ArchCalls> = Some(ArchCalls {
        // EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
        audit_arch: 0xC000_00B7,
        foreign_from: None,
        refused: &[
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            SYS_SETXATTRAT,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            SYS_REMOVEXATTRAT,
        ],
        mode_at: &[
            (libc::SYS_fchmod, 1),
            (libc::SYS_fchmodat, 2),
            (SYS_FCHMODAT2, 2),
        ],
    });
}

#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
mod arch {
    pub(super) const FILTER: Option<super::ArchCalls> = None;
}

/// Installs the filter on the calling thread. `Ok(false)` when this architecture has none.
/// Needs `no_new_privs` (set by Landlock's `restrict_self` just before).
pub(super) fn install() -> Result<bool, SandboxError> {
    let Some(calls) = &arch::FILTER else {
        return Ok(false);
    };
    let mut program = program(calls);
    let len = u16::try_from(program.len()).map_err(|_| SandboxError::Filter {
        detail: format!("the program has {} instructions", program.len()),
    })?;
    let fprog = sock_fprog {
        len,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: `fprog` points to `len` initialised instructions in `program`, which outlives
    // the call; the kernel copies the program and keeps no pointer to it.
    #[allow(unsafe_code)]
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0 as libc::c_uint,
            &raw const fprog,
        )
    };
    if rc != 0 {
        return Err(SandboxError::Filter {
            detail: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(true)
}

const ERRNO_EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ERRNO_ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// The program: check the architecture, then one self-contained block per rule, each of which
/// either returns or falls through to the next with the call number still loaded.
fn program(calls: &ArchCalls) -> Vec<sock_filter> {
    let mut p = vec![
        load(offset_of!(libc::seccomp_data, arch)),
        jump(libc::BPF_JEQ, calls.audit_arch, 1, 0),
        ret(ERRNO_EPERM),
        load(offset_of!(libc::seccomp_data, nr)),
    ];
    if let Some(first) = calls.foreign_from {
        p.extend([jump(libc::BPF_JGE, first, 0, 1), ret(ERRNO_EPERM)]);
    }
    for &nr in calls.refused {
        p.extend([jump(libc::BPF_JEQ, number(nr), 0, 1), ret(ERRNO_EPERM)]);
    }
    for &(nr, arg) in calls.mode_at {
        p.extend([
            jump(libc::BPF_JEQ, number(nr), 0, 4),
            load(arg_low_word(arg)),
            jump(libc::BPF_JSET, WEAKENING_MODE_BITS, 0, 1),
            ret(ERRNO_EPERM),
            ret(libc::SECCOMP_RET_ALLOW),
        ]);
    }
    p.extend([
        jump(libc::BPF_JEQ, number(libc::SYS_ioctl), 0, 5),
        load(arg_low_word(1)),
        jump(libc::BPF_JEQ, ioctl_request(libc::TIOCSTI), 2, 0),
        jump(libc::BPF_JEQ, ioctl_request(libc::TIOCLINUX), 1, 0),
        ret(libc::SECCOMP_RET_ALLOW),
        ret(ERRNO_EPERM),
    ]);
    p.extend([
        jump(libc::BPF_JEQ, number(libc::SYS_io_uring_setup), 0, 1),
        ret(ERRNO_ENOSYS),
        ret(libc::SECCOMP_RET_ALLOW),
    ]);
    p
}

/// The offset of the low 32 bits of argument `index` (both architectures are little-endian).
fn arg_low_word(index: usize) -> usize {
    offset_of!(libc::seccomp_data, args) + index * size_of::<u64>()
}

// System call numbers are small and positive; the kernel's `nr` field is 32 bits wide.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
const fn number(nr: libc::c_long) -> u32 {
    nr as u32
}

// The kernel takes an ioctl request as a 32-bit `unsigned int`.
#[allow(clippy::cast_possible_truncation, clippy::unnecessary_cast)]
const fn ioctl_request(request: libc::Ioctl) -> u32 {
    request as u32
}

// The seccomp_data offsets are below 64.
#[allow(clippy::cast_possible_truncation)]
fn load(offset: usize) -> sock_filter {
    statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset as u32)
}

fn ret(action: u32) -> sock_filter {
    statement(libc::BPF_RET | libc::BPF_K, action)
}

// Opcodes fit in 16 bits; `libc` types them as the kernel's `__u32` constants.
#[allow(clippy::cast_possible_truncation)]
fn statement(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

#[allow(clippy::cast_possible_truncation)]
fn jump(condition: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | condition | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}
