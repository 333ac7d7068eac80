//! What one session may use: how many processes its shells, jobs and everything they start may
//! have at once (`shell.maxProcesses`, default 2,048 — room for a parallel build), and how many
//! bytes of long output its commands may save to spill files over its whole life
//! (`shell.maxSpillMiB`, default 1,024; each command's own file stays capped at
//! [`super::capture::SPILL_MAX_BYTES`]), and how much its private temporary folder may hold
//! (`shell.maxTmpMiB`, default 1,024, [`super::tmp_bound`]). Read from settings.json before each call, like the
//! timeouts; a new process limit applies to the session's cgroup at once, else to its next
//! shell. How the process limit is enforced is [`super::cgroup`]'s business.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use synapse_shared::settings::Settings;

/// Default of `shell.maxProcesses`.
pub const MAX_PROCESSES_DEFAULT: u64 = 2048;
/// The fewest processes a setting may allow: the shell, a pipeline and the agent's helpers.
const MAX_PROCESSES_FLOOR: u64 = 8;
/// Default of `shell.maxSpillMiB`.
pub const SPILL_BUDGET_DEFAULT_MIB: u64 = 1024;
/// Default of `shell.maxTmpMiB`.
pub const TMP_BUDGET_DEFAULT_MIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// The limits of one session, as settings.json has them now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub max_processes: u64,
    pub spill_budget_bytes: u64,
    /// What the session's private temporary folder may hold at the end of a call.
    pub tmp_budget_bytes: u64,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_processes: MAX_PROCESSES_DEFAULT,
            spill_budget_bytes: SPILL_BUDGET_DEFAULT_MIB * MIB,
            tmp_budget_bytes: TMP_BUDGET_DEFAULT_MIB * MIB,
        }
    }
}

impl SessionLimits {
    /// The limits `settings` configure under `shell`; a key that is missing keeps its default,
    /// one that is not a whole number in range keeps it too and is logged.
    pub fn from_settings(settings: &Settings) -> Self {
        let shell = settings.other.get("shell");
        let read = |key: &str, floor: u64, fallback: u64| -> u64 {
            match shell.and_then(|s| s.get(key)) {
                None | Some(Value::Null) => fallback,
                Some(v) => match v.as_u64() {
                    Some(n) if n >= floor => n,
                    _ => {
                        tracing::warn!(
                            "settings.json: shell.{key} must be a whole number of at least \
                             {floor} (got {v}); using {fallback}"
                        );
                        fallback
                    }
                },
            }
        };
        let defaults = Self::default();
        Self {
            max_processes: read("maxProcesses", MAX_PROCESSES_FLOOR, defaults.max_processes),
            spill_budget_bytes: read("maxSpillMiB", 0, SPILL_BUDGET_DEFAULT_MIB)
                .saturating_mul(MIB),
            tmp_budget_bytes: read("maxTmpMiB", 1, TMP_BUDGET_DEFAULT_MIB).saturating_mul(MIB),
        }
    }
}

/// The bytes a session may still write to spill files, shared by its shells (a restarted shell,
/// the one-off unsandboxed one) for the session's whole life.
#[derive(Debug)]
pub struct SpillBudget {
    used: AtomicU64,
    limit: AtomicU64,
}

impl SpillBudget {
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            used: AtomicU64::new(0),
            limit: AtomicU64::new(limit_bytes),
        }
    }

    /// A changed setting applies to what is written from now on.
    pub fn set_limit(&self, limit_bytes: u64) {
        self.limit.store(limit_bytes, Ordering::Relaxed);
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes up to `wanted` bytes from the budget; returns how many were granted.
    pub fn take(&self, wanted: u64) -> u64 {
        let limit = self.limit();
        let mut granted = 0;
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                granted = wanted.min(limit.saturating_sub(used));
                Some(used + granted)
            });
        granted
    }

    /// The sentence the model reads when the budget cut a spill short.
    pub fn exhausted_note(&self) -> String {
        format!(
            "this session has used its spill budget of {} MiB (settings.json shell.maxSpillMiB): \
             later output is not saved; send long output to a file in your folder and `read` \
             or `search` it there",
            self.limit() / MIB
        )
    }
}

impl Default for SpillBudget {
    fn default() -> Self {
        Self::new(SPILL_BUDGET_DEFAULT_MIB * MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(shell: Value) -> Settings {
        let mut s = Settings::default();
        s.other.insert("shell".into(), shell);
        s
    }

    #[test]
    fn limits_come_from_settings_with_defaults_for_what_is_missing_or_wrong() {
        assert_eq!(
            SessionLimits::from_settings(&Settings::default()),
            SessionLimits::default()
        );
        let set = SessionLimits::from_settings(&settings(
            serde_json::json!({"maxProcesses": 50, "maxSpillMiB": 2}),
        ));
        assert_eq!(set.max_processes, 50);
        assert_eq!(set.spill_budget_bytes, 2 * MIB);
        let wrong = SessionLimits::from_settings(&settings(
            serde_json::json!({"maxProcesses": 3, "maxSpillMiB": "lots"}),
        ));
        assert_eq!(wrong, SessionLimits::default());
    }

    #[test]
    fn the_budget_grants_what_is_left_and_then_nothing() {
        let budget = SpillBudget::new(100);
        assert_eq!(budget.take(60), 60);
        assert_eq!(budget.take(60), 40);
        assert_eq!(budget.take(1), 0);
        assert_eq!(budget.used(), 100);
        budget.set_limit(150);
        assert_eq!(budget.take(80), 50);
        assert!(budget.exhausted_note().contains("shell.maxSpillMiB"));
    }
}
