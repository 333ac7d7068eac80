//! Where a connection's `notifications/progress` go: to the sink of the call whose progress
//! token they carry. rmcp picks a request's token inside its send, so a fast server's first
//! notification can arrive before the call has registered its sink; such early lines are kept
//! (the last [`EARLY_KEPT`] of them) and handed over, in order, when the call registers.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};

use synapse_command::progress::ProgressSink;

/// Lines kept for tokens no call has registered (yet); older ones are dropped.
const EARLY_KEPT: usize = 32;

/// The progress routes of one connection.
#[derive(Default)]
pub(super) struct ProgressRoutes {
    inner: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    sinks: HashMap<String, ProgressSink>,
    early: VecDeque<(String, String)>,
}

impl ProgressRoutes {
    /// A progress line for `token`: to its call's sink, or kept until the call registers.
    pub(super) fn deliver(&self, token: String, line: String) {
        let mut routes = self.inner.lock();
        if let Some(sink) = routes.sinks.get(&token) {
            sink.report(line, 0);
            return;
        }
        if routes.early.len() == EARLY_KEPT {
            routes.early.pop_front();
        }
        routes.early.push_back((token, line));
    }

    /// Registers the call that got `token`: the lines that came before it first.
    pub(super) fn watch(&self, token: String, sink: ProgressSink) {
        let mut routes = self.inner.lock();
        let early = std::mem::take(&mut routes.early);
        for (t, line) in early {
            if t == token {
                sink.report(line, 0);
            } else {
                routes.early.push_back((t, line));
            }
        }
        routes.sinks.insert(token, sink);
    }

    /// The call that had `token` ended.
    pub(super) fn unwatch(&self, token: &str) {
        self.inner.lock().sinks.remove(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn sink() -> (ProgressSink, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        (ProgressSink::new(move |line, _| s.lock().push(line)), seen)
    }

    #[test]
    fn lines_that_overtake_the_registration_reach_the_call_in_order() {
        let routes = ProgressRoutes::default();
        routes.deliver("7".into(), "first".into());
        routes.deliver("8".into(), "another call's".into());
        routes.deliver("7".into(), "second".into());
        let (s, seen) = sink();
        routes.watch("7".into(), s);
        routes.deliver("7".into(), "third".into());
        assert_eq!(*seen.lock(), ["first", "second", "third"]);
        routes.unwatch("7");
        routes.deliver("7".into(), "after the end".into());
        assert_eq!(seen.lock().len(), 3);
        let (s8, seen8) = sink();
        routes.watch("8".into(), s8);
        assert_eq!(*seen8.lock(), ["another call's"]);
    }

    #[test]
    fn only_the_latest_early_lines_are_kept() {
        let routes = ProgressRoutes::default();
        for i in 0..(EARLY_KEPT + 5) {
            routes.deliver("1".into(), format!("line {i}"));
        }
        let (s, seen) = sink();
        routes.watch("1".into(), s);
        let seen = seen.lock();
        assert_eq!(seen.len(), EARLY_KEPT);
        assert_eq!(seen[0], "line 5");
    }
}
