//! Debounce bookkeeping for the skill watcher: changed paths wait here until they have been quiet
//! for [`WATCH_DEBOUNCE`], then leave together as one batch. Pure over [`Instant`]s; the watcher
//! thread supplies the clock and sleeps until [`Pending::next_due`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Quiet time after the last event on a path before it is handled.
pub const WATCH_DEBOUNCE: Duration = Duration::from_millis(40);
/// Longest a path waits after its first pending event, so a file written without pause (a log,
/// a slow download) is still picked up about once a second instead of never.
pub const WATCH_MAX_DELAY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy)]
struct Seen {
    first: Instant,
    last: Instant,
}

impl Seen {
    fn due(self) -> Instant {
        (self.last + WATCH_DEBOUNCE).min(self.first + WATCH_MAX_DELAY)
    }
}

/// Paths with an event not handled yet.
#[derive(Debug, Default)]
pub struct Pending(HashMap<PathBuf, Seen>);

impl Pending {
    /// Records an event on `path` at `now`.
    pub fn touch(&mut self, path: PathBuf, now: Instant) {
        self.0
            .entry(path)
            .and_modify(|s| s.last = now)
            .or_insert(Seen {
                first: now,
                last: now,
            });
    }

    /// When the earliest path is due; `None` with nothing pending.
    pub fn next_due(&self) -> Option<Instant> {
        self.0.values().map(|s| s.due()).min()
    }

    /// Removes and returns (sorted) every path due at `now`; the rest stay pending.
    pub fn take_due(&mut self, now: Instant) -> Vec<PathBuf> {
        let mut due: Vec<PathBuf> = self
            .0
            .iter()
            .filter(|(_, s)| s.due() <= now)
            .map(|(p, _)| p.clone())
            .collect();
        for p in &due {
            self.0.remove(p);
        }
        due.sort();
        due
    }

    /// Removes and returns (sorted) every pending path, due or not (a flush).
    pub fn take_all(&mut self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = self.0.drain().map(|(p, _)| p).collect();
        all.sort();
        all
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets everything pending (a full rescan covers it).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn nothing_pending_means_no_wake_up() {
        let mut p = Pending::default();
        assert_eq!(p.next_due(), None);
        assert!(p.take_due(Instant::now()).is_empty());
    }

    #[test]
    fn a_path_is_due_after_its_quiet_time_and_leaves_once() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("a".into(), t0);
        assert_eq!(p.next_due(), Some(t0 + WATCH_DEBOUNCE));
        assert!(p.take_due(t0 + WATCH_DEBOUNCE - ms(1)).is_empty());
        assert_eq!(p.take_due(t0 + WATCH_DEBOUNCE), vec![PathBuf::from("a")]);
        assert_eq!(p.next_due(), None);
    }

    #[test]
    fn a_new_event_pushes_the_quiet_time_back() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("a".into(), t0);
        p.touch("a".into(), t0 + ms(30));
        assert_eq!(p.next_due(), Some(t0 + ms(30) + WATCH_DEBOUNCE));
        assert!(p.take_due(t0 + WATCH_DEBOUNCE).is_empty());
    }

    #[test]
    fn due_paths_leave_together_and_the_rest_stay_pending() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("b".into(), t0);
        p.touch("a".into(), t0 + ms(10));
        p.touch("c".into(), t0 + ms(100));
        assert_eq!(p.next_due(), Some(t0 + WATCH_DEBOUNCE));
        let at = t0 + ms(10) + WATCH_DEBOUNCE;
        assert_eq!(p.take_due(at), vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(p.next_due(), Some(t0 + ms(100) + WATCH_DEBOUNCE));
    }

    #[test]
    fn a_path_that_never_goes_quiet_is_due_after_the_cap() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        let mut t = t0;
        while t < t0 + WATCH_MAX_DELAY {
            p.touch("log".into(), t);
            t += ms(10);
        }
        assert_eq!(p.next_due(), Some(t0 + WATCH_MAX_DELAY));
        assert_eq!(p.take_due(t0 + WATCH_MAX_DELAY), vec![PathBuf::from("log")]);
        p.touch("log".into(), t);
        assert_eq!(p.next_due(), Some(t + WATCH_DEBOUNCE));
    }

    #[test]
    fn clear_forgets_everything() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("a".into(), t0);
        p.clear();
        assert_eq!(p.next_due(), None);
    }
}
