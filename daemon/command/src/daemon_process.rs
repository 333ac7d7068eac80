//! Facts of the daemon process every part that starts processes or frees large state shares.
//!
//! **The owner mark.** Every process the daemon starts — session shells and what they run, MCP
//! servers — carries `SYNAPSE_DAEMON_OWNER=<socket path>` in its environment ([`owner_env`]). A
//! graceful stop kills them all; after a SIGKILL or a crash a new daemon of the same socket finds
//! and kills what carries the mark (the daemon's `lifecycle/orphans.rs`).
//!
//! **Giving memory back** ([`give_back`]) after something large goes away — a removed MCP server
//! with tens of thousands of tools, a deleted skill's cached body. The allocator keeps freed
//! pages for reuse, so a daemon that runs for months would otherwise stay at its high-water mark.

use std::sync::OnceLock;

/// The variable naming the daemon that started a process.
pub const OWNER_VAR: &str = "SYNAPSE_DAEMON_OWNER";

static OWNER: OnceLock<String> = OnceLock::new();

/// Records this daemon's owner value (its socket path); set once at start.
pub fn set_owner(socket: &std::path::Path) {
    let _ = OWNER.set(socket.display().to_string());
}

/// `(OWNER_VAR, value)` for a child's environment, once the daemon has set its owner.
pub fn owner_env() -> Option<(&'static str, &'static str)> {
    OWNER.get().map(|v| (OWNER_VAR, v.as_str()))
}

/// Returns the allocator's free memory to the system (glibc's `malloc_trim`); elsewhere it does
/// nothing.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes a plain integer and only touches the allocator's own state.
        #[allow(unsafe_code)]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
