//! The audit trail of permission decisions: every refused, approved or unsandboxed command is
//! a `permission` record in the session's JSONL file and an info line in the daemon log.

use parking_lot::Mutex;
use std::path::PathBuf;

use serde::Serialize;

use crate::agent::session_log::SessionLog;

/// One decision, as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct AuditEntry<'a> {
    /// "denied", "approved", "approved-for-session", "approved-always", "unsandboxed".
    pub outcome: &'a str,
    pub command: &'a str,
    /// Why it was asked or refused, or which rule allowed it.
    pub reason: &'a str,
    /// Who decided: "rule", "mode", "user", "--yes", "non-interactive".
    pub by: &'a str,
    pub mode: &'a str,
}

/// Appends to a session file through its own handle (the conversation holds another).
pub struct Audit {
    session_id: String,
    file: Option<PathBuf>,
    log: Mutex<Option<SessionLog>>,
}

impl Audit {
    pub fn new(session_id: String, file: Option<PathBuf>) -> Self {
        Self {
            session_id,
            file,
            log: Mutex::new(None),
        }
    }

    pub fn record(&self, entry: &AuditEntry<'_>) {
        tracing::info!(
            session = %self.session_id,
            outcome = entry.outcome,
            by = entry.by,
            mode = entry.mode,
            command = entry.command,
            reason = entry.reason,
            "permission"
        );
        let Some(file) = &self.file else { return };
        let mut log = self.log.lock();
        if log.is_none() {
            match SessionLog::open(file) {
                Ok(l) => *log = Some(l),
                Err(e) => {
                    tracing::warn!("cannot record a permission decision: {e}");
                    return;
                }
            }
        }
        if let Some(l) = log.as_mut()
            && let Err(e) = l.append("permission", entry)
        {
            tracing::warn!("cannot record a permission decision: {e}");
        }
    }
}
