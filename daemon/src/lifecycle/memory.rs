//! Giving memory back to the system after something large goes away — a removed MCP server with
//! tens of thousands of tools, a deleted skill's cached body. The allocator keeps freed pages for
//! reuse, so a daemon that runs for months would otherwise stay at its high-water mark;
//! [`give_back`] asks glibc to return what it holds free. Elsewhere it does nothing.

/// Returns the allocator's free memory to the system (glibc's `malloc_trim`).
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
