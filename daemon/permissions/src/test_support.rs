//! A fixed [`Context`] for the engine's tests: working folder `/home/u/proj`, home `/home/u`,
//! Synapse home `/home/u/.synapse`, temp folder `/tmp`, extra writable `/data/x`, and session
//! processes 100 and 101.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use super::context::Context;

static EXTRA: LazyLock<Vec<PathBuf>> = LazyLock::new(|| vec![PathBuf::from("/data/x")]);

fn session_pid(pid: i32) -> bool {
    pid == 100 || pid == 101
}

pub(crate) fn ctx(sandboxed: bool) -> Context<'static> {
    Context {
        cwd: Path::new("/home/u/proj"),
        home: Path::new("/home/u"),
        synapse_home: Path::new("/home/u/.synapse"),
        temp_dir: Path::new("/tmp"),
        extra_writable: EXTRA.as_slice(),
        sandboxed,
        is_session_pid: &session_pid,
    }
}
