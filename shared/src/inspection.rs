//! Keeping the secrets a process holds (API keys in its environment, tokens in its memory) from
//! other processes of the same user: `synapsed` and `synapse` call [`forbid`] first thing.
//!
//! A process that is not dumpable (`PR_SET_DUMPABLE 0`) has its `/proc/<pid>/environ`, `mem`,
//! `maps` and the like owned by root, and `ptrace` refuses to attach to it without
//! `CAP_SYS_PTRACE`, so a command the agent runs as the same user cannot read the keys out of
//! the daemon or the client even where the sandbox is off (yolo mode). Inside the sandbox,
//! Landlock refuses ptrace-class access to processes outside the sandbox on its own; this is the
//! wall that also holds outside it. Root-owned processes stay readable to root: the threat
//! model in the README says so.

/// Makes this process non-dumpable. Returns why it could not, for the caller to log; never
/// fatal (on other systems it is a no-op).
pub fn forbid() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_dumpable(false)
            .map_err(|e| format!("cannot make the process non-dumpable: {e}"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(())
    }
}

/// Whether this process is dumpable now (`None` where that cannot be asked).
pub fn dumpable() -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::get_dumpable().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
