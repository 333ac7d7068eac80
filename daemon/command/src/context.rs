//! What a running command may use ([`CommandContext`]): its host ([`CommandHost`] — the
//! session's shell, or a fake in unit tests), heredoc input, its time budget and cancellation,
//! the call's permission gate and who answers its questions ([`Approver`]), and the editor
//! whose files `read`, `write` and `edit` use when one is attached ([`EditorFilesHandle`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::command::CommandOutput;
use crate::editor_files::{EditorFiles, EditorFilesHandle};
use crate::gate::GateHandle;
use crate::paths::PathResolver;

/// Asks the user to allow something (a skill marked `ask`, later a risky command). The chat
/// session implements it with an approval event its client answers; without one, nothing is
/// allowed.
pub trait Approver: Send + Sync {
    /// True when the user allowed it.
    fn ask<'a>(&'a self, title: String, detail: String) -> BoxFuture<'a, bool>;
}

/// A cloneable, printable handle to an [`Approver`].
#[derive(Clone)]
pub struct ApproverHandle(pub Arc<dyn Approver>);

impl std::fmt::Debug for ApproverHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApproverHandle")
    }
}

/// What an agent command runs against: the session's shell and what is known about it. The
/// real one is the session's persistent shell (`ShellSession`); unit tests give a fake, so a
/// command is tested without bash. Only [`name`](Self::name), [`cwd`](Self::cwd),
/// [`env`](Self::env) and [`run_native`](Self::run_native) have no default.
pub trait CommandHost: Send + Sync {
    /// The shell session's name (for chat sessions, the chat session id).
    fn name(&self) -> &str;

    /// The shell's current directory (what `pwd` printed after the last command).
    fn cwd(&self) -> &Path;

    /// The environment the session was created with.
    fn env(&self) -> &[(OsString, OsString)];

    /// A variable of [`env`](Self::env).
    fn env_var(&self, name: &str) -> Option<&OsString> {
        self.env().iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// How path words resolve here right now (current folder, `HOME`).
    fn paths(&self) -> PathResolver<'_> {
        PathResolver {
            cwd: self.cwd(),
            home: self.env_var("HOME").map(Path::new),
        }
    }

    /// The OS sandbox the shell runs in.
    fn sandbox(&self) -> Option<&synapse_sandbox::SandboxSpec> {
        None
    }

    /// The root of the workspace the session is bound to.
    fn workspace_root(&self) -> Option<&Path> {
        None
    }

    /// The session's timeout limits (`shell.defaultTimeoutSec`, `shell.maxTimeoutSec`).
    fn timeouts(&self) -> crate::timeouts::Timeouts {
        crate::timeouts::Timeouts::default()
    }

    /// The output cap of the session's results, in characters.
    fn output_cap_chars(&self) -> usize {
        crate::output_policy::OUTPUT_CAP_CHARS
    }

    /// Runs a command line in the shell, as if it had been typed; never fails: problems become
    /// the result text.
    fn run_native<'a>(
        &'a mut self,
        command: &'a str,
        timeout: Duration,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, CommandOutput>;

    /// A part of the real shell that only some commands use (its background jobs, the spec its
    /// shells start from, its workspace binding), looked up by type; `None` where the host has
    /// no such part. Read it with [`CommandContext::part`].
    fn part(&self, of: std::any::TypeId) -> Option<&dyn std::any::Any> {
        let _ = of;
        None
    }
}

/// What a running command may use: its host's current directory and environment, heredoc
/// input, its time budget, cancellation, the call's gate and approver, and the host's shell for
/// native execution.
pub struct CommandContext<'s> {
    pub(super) host: &'s mut dyn CommandHost,
    pub(super) stdin: Option<String>,
    pub(super) timeout: Duration,
    pub(super) cancel: CancellationToken,
    pub(super) approver: Option<ApproverHandle>,
    pub(super) gate: Option<GateHandle>,
    pub(super) editor: Option<EditorFilesHandle>,
}

impl<'s> CommandContext<'s> {
    /// A context for one run of a command on `host`: heredoc input, the time budget and
    /// cancellation of the call, and no gate or approver (see [`with_gate`](Self::with_gate)).
    pub fn new(
        host: &'s mut dyn CommandHost,
        stdin: Option<String>,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            host,
            stdin,
            timeout,
            cancel,
            approver: None,
            gate: None,
            editor: None,
        }
    }

    /// The editor whose files this call's file commands use (`None`: the disk only).
    pub fn with_editor(mut self, editor: Option<EditorFilesHandle>) -> Self {
        self.editor = editor;
        self
    }

    /// The editor, for the file at `abs` when it may go there (inside the session's folder,
    /// [`EditorFilesHandle::serves`]); `None`: read or write it on disk.
    pub fn editor_for(&self, abs: &Path) -> Option<&dyn EditorFiles> {
        self.editor.as_ref()?.serves(abs)
    }

    /// The call's permission gate and who answers its questions.
    pub fn with_gate(mut self, gate: Option<GateHandle>, approver: Option<ApproverHandle>) -> Self {
        self.gate = gate;
        self.approver = approver;
        self
    }

    /// The permission gate of the call (sub-agents started from here pass it too).
    pub fn gate(&self) -> Option<&GateHandle> {
        self.gate.as_ref()
    }

    /// The OS sandbox the session's shell runs in.
    pub fn sandbox(&self) -> Option<&synapse_sandbox::SandboxSpec> {
        self.host.sandbox()
    }

    /// Asks the session's user; refused when the session has nobody to ask.
    pub async fn approve(&self, title: String, detail: String) -> bool {
        match &self.approver {
            Some(a) => a.0.ask(title, detail).await,
            None => false,
        }
    }

    /// The root of the workspace the session is bound to.
    pub fn workspace(&self) -> Option<&Path> {
        self.host.workspace_root()
    }

    /// A part of the host only some commands use, by type ([`CommandHost::part`]).
    pub fn part<T: 'static>(&self) -> Option<&T> {
        self.host
            .part(std::any::TypeId::of::<T>())?
            .downcast_ref::<T>()
    }

    /// The session shell's current directory (what `pwd` printed after the last command).
    pub fn cwd(&self) -> &Path {
        self.host.cwd()
    }

    /// The shell session's name (for chat sessions, the chat session id).
    pub fn session_name(&self) -> &str {
        self.host.name()
    }

    /// The environment the session was created with.
    pub fn env(&self) -> &[(OsString, OsString)] {
        self.host.env()
    }

    /// The session's environment as UTF-8 pairs (what a sub-agent started from here inherits;
    /// variables that are not UTF-8 are left out).
    pub fn env_map(&self) -> std::collections::HashMap<String, String> {
        self.env()
            .iter()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
            .collect()
    }

    /// A variable of the environment the session was created with.
    pub fn env_var(&self, name: &str) -> Option<&OsString> {
        self.host.env_var(name)
    }

    /// Input given with a heredoc (`cmd args <<'EOF' … EOF`), verbatim.
    pub fn stdin(&self) -> Option<&str> {
        self.stdin.as_deref()
    }

    /// The time budget of this run.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The session's timeout limits (`shell.defaultTimeoutSec`, `shell.maxTimeoutSec`).
    pub fn timeouts(&self) -> crate::timeouts::Timeouts {
        self.host.timeouts()
    }

    /// The output cap of the session's results, in characters.
    pub fn output_cap_chars(&self) -> usize {
        self.host.output_cap_chars()
    }

    /// Cancelled when the call is.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Resolves a path the model wrote: `~` and `~/…` against `HOME`, relative paths against
    /// the shell's current directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        self.host.paths().resolve(path)
    }

    /// `path` as the model should see it: relative to the current directory when below it.
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(self.cwd()) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// Runs a command line in the session's persistent shell with its own time limit.
    pub async fn run_native_for(&mut self, command: &str, timeout: Duration) -> CommandOutput {
        self.host.run_native(command, timeout, &self.cancel).await
    }

    /// Runs a command line in the session's persistent shell, as if it had been typed.
    pub async fn run_native(&mut self, command: &str) -> CommandOutput {
        self.host
            .run_native(command, self.timeout, &self.cancel)
            .await
    }
}
