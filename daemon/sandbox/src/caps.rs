//! Capabilities a sandboxed process never keeps, for the case where the daemon runs as root (a
//! container, a root login): root's `CAP_SYS_PTRACE` reads any process's `/proc/<pid>/environ`
//! and memory — the daemon's API keys included — past both `PR_SET_DUMPABLE 0` and Landlock's
//! ptrace scoping, and `CAP_SYS_ADMIN`, `CAP_SYS_MODULE`, `CAP_SYS_RAWIO`, `CAP_BPF` and
//! `CAP_PERFMON` reach the kernel or other processes around every other wall.
//!
//! [`drop_dangerous`] removes them from the bounding set (so no `exec` of a file with
//! capabilities regains them) and from the effective, permitted and inheritable sets, and clears
//! the ambient set. For an ordinary user these sets are already empty and the call changes
//! nothing. Other root powers (reading and writing what root owns) stay, bounded by Landlock.

/// `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`, `CAP_SYS_MODULE`, `CAP_SYS_RAWIO`, `CAP_BPF`,
/// `CAP_PERFMON` (linux/capability.h).
const DROPPED: [u32; 6] = [19, 21, 16, 17, 39, 38];
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drops the capabilities listed above from this thread (and so from what it `exec`s).
#[allow(unsafe_code)]
pub(super) fn drop_dangerous() -> Result<(), String> {
    for cap in DROPPED {
        // EINVAL: a kernel that does not know this capability; EPERM: no CAP_SETPCAP, so the
        // process is not privileged and its bounding set cannot matter for the sets below.
        // SAFETY: PR_CAPBSET_DROP takes an integer capability number and no pointers.
        let _ = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) };
    }
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointers.
    let _ = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    let mut header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget writes two `Data` records (version 3) through valid, owned pointers.
    let got = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            data.as_mut_ptr(),
        )
    };
    if got != 0 {
        return Err(format!(
            "cannot read the process's capabilities: {}",
            std::io::Error::last_os_error()
        ));
    }
    let mut changed = false;
    for cap in DROPPED {
        let (word, bit) = ((cap / 32) as usize, 1u32 << (cap % 32));
        let d = &mut data[word];
        if (d.effective | d.permitted | d.inheritable) & bit != 0 {
            d.effective &= !bit;
            d.permitted &= !bit;
            d.inheritable &= !bit;
            changed = true;
        }
    }
    if !changed {
        return Ok(());
    }
    header.version = CAPABILITY_VERSION_3;
    header.pid = 0;
    // SAFETY: capset reads the header and two `Data` records through valid pointers.
    let set = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    if set != 0 {
        return Err(format!(
            "cannot drop the process's capabilities: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
