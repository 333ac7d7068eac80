//! The gate for `synapse exec --permission-mode M`: the same [`SessionGate`] a chat session
//! has, in mode M, non-interactive (what would ask is refused, saying why and how to allow it),
//! with that mode's OS sandbox for the shell — so a user can try rules exactly as the agent meets
//! them. Notices (a broken rules file) are collected for the command's output. Gated calls run
//! in their own shell session ([`gated_session`]): a plain `exec` runs lines no gate saw, so its
//! shell's aliases and functions could not be trusted.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;

use synapse_permissions::Mode;
use synapse_sandbox::SandboxSpec;
use tokio::sync::broadcast;

use super::audit::Audit;
use super::shell_state::TrackedShell;
use super::{GateEnv, GateOptions, SessionGate};
use crate::agent::approvals::SessionApprover;

/// A gate for one `exec` call, the sandbox its shell must run in, and the notices it raised.
pub struct ExecGate {
    pub gate: Arc<SessionGate>,
    pub sandbox: Option<SandboxSpec>,
    pub notices: Arc<Mutex<Vec<String>>>,
}

/// The gate for one call in exec session `session`, whose shell `shell` pictures (kept by the
/// caller across calls, so definitions from an earlier call are resolved too). `mode` `None`:
/// the mode the folder's settings choose (`permissions.defaultMode`, else auto).
pub fn exec_gate(
    env: GateEnv,
    cwd: PathBuf,
    mode: Option<Mode>,
    session: &str,
    shell: Arc<Mutex<TrackedShell>>,
) -> ExecGate {
    let (events, _) = broadcast::channel(4);
    let approver = Arc::new(SessionApprover::new(format!("exec:{session}"), events));
    let audit = Arc::new(Audit::new(format!("exec:{session}"), None));
    let notices: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = notices.clone();
    let notify: Arc<dyn Fn(String) + Send + Sync> = Arc::new(move |text| {
        let mut n = sink.lock();
        n.push(text);
    });
    let options = GateOptions {
        mode,
        allow: Vec::new(),
        tool_rules: Default::default(),
        non_interactive: true,
        approve_all: false,
        refusal_hint: super::RefusalHint::SettingsRule,
    };
    let (gate, _) = SessionGate::new(env, cwd, options, approver, audit, notify);
    let gate = gate.with_tracked_shell(shell);
    let sandbox = gate.sandbox_spec();
    ExecGate {
        gate: Arc::new(gate),
        sandbox,
        notices,
    }
}

/// The shell session gated `exec` calls of session `name` run in.
pub fn gated_session(name: &str) -> String {
    format!("{name}@gated")
}
