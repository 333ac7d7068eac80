//! The gate's picture of the session shell's state (aliases, functions, hashed paths, `PATH`,
//! hook traps), kept by recording every line the gate let run: command names are resolved
//! against it before the rules apply ([`synapse_permissions::ShellState`]).
//!
//! The picture belongs to one shell process. When the session's shell pid changes (a restart, a
//! shell that died and was replaced) the new shell starts clean, and so does the picture; a
//! line judged before the shell started (no pid yet) belongs to the shell that then starts.

use synapse_permissions::ShellState;

#[derive(Debug, Default)]
pub struct TrackedShell {
    pid: Option<i32>,
    state: ShellState,
}

impl TrackedShell {
    /// The state of the shell with pid `pid` (`None`: not running, the next line starts one).
    pub(super) fn current(&mut self, pid: Option<i32>) -> ShellState {
        match (self.pid, pid) {
            (Some(old), Some(new)) if old != new => self.reset(pid),
            (Some(_), None) => self.reset(None),
            (None, Some(_)) => self.pid = pid,
            _ => {}
        }
        self.state.clone()
    }

    /// Takes in a line that is about to run in the shell with pid `pid`.
    pub(super) fn record(&mut self, pid: Option<i32>, line: &str) {
        self.current(pid);
        self.state.record(line);
    }

    fn reset(&mut self, pid: Option<i32>) {
        self.pid = pid;
        self.state = ShellState::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_shell_forgets_and_a_starting_one_keeps() {
        let mut t = TrackedShell::default();
        t.record(None, "alias ls='rm -f'");
        assert!(
            !t.current(Some(10)).is_plain(),
            "the line ran in the shell that started"
        );
        assert!(!t.current(Some(10)).is_plain());
        assert!(
            t.current(Some(11)).is_plain(),
            "a restarted shell has no aliases"
        );
        t.record(Some(11), "alias x=y");
        assert!(
            t.current(None).is_plain(),
            "a shell that is gone takes its aliases along"
        );
    }
}
