//! A chat session's permission gate: the [`CommandGate`] the router asks before every model
//! command. It holds the session's mode, the rules from the files ([`rules_source`]) plus the
//! session's own (`--allow`, "always this session" answers), asks the user through the
//! session's approver when the policy says "ask", turns "ask" into a refusal in a
//! non-interactive run, saves "always" answers to the rules file, and audits every decision
//! ([`audit`]). The decision itself is [`crate::permissions::decide`].

pub mod audit;
pub mod rules_source;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use synapse_shared::settings;

use self::audit::{Audit, AuditEntry};
use self::rules_source::{LoadedRules, RulesSource};
use super::approvals::SessionApprover;
use crate::permissions::{
    self, Action, Context, Decision, Effect, Mode, Pattern, RuleKind, RuleSet, Verdict,
};
use crate::sandbox::SandboxSpec;
use crate::shell::{CommandGate, GateAction, GateHandle, GateInfo, GateVerdict};

/// An MCP tool's `(readOnlyHint, destructiveHint)` annotations, by `mcp:<server>:<tool>`.
pub type McpHints = Arc<dyn Fn(&str) -> (Option<bool>, Option<bool>) + Send + Sync>;

/// Facts about the daemon every session gate needs.
#[derive(Clone)]
pub struct GateEnv {
    pub synapse_home: PathBuf,
    pub user_settings: PathBuf,
    pub trust_file: PathBuf,
    /// The user's home (`~` in commands and rules).
    pub home: PathBuf,
    pub temp_dir: PathBuf,
    pub mcp_hints: McpHints,
}

/// Per-session choices made by the client.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// `None`: the settings' `permissions.defaultMode`, else auto.
    pub mode: Option<Mode>,
    pub allow: Vec<String>,
    pub non_interactive: bool,
    pub approve_all: bool,
}

struct State {
    mode: Option<Mode>,
    session_rules: RuleSet,
    non_interactive: bool,
    approve_all: bool,
    /// Problems already reported, so each is said once.
    reported: Vec<String>,
}

pub struct SessionGate {
    env: GateEnv,
    /// The session's starting folder: writable in auto/ask mode.
    root: PathBuf,
    source: RulesSource,
    state: Mutex<State>,
    approver: Arc<SessionApprover>,
    audit: Arc<Audit>,
    /// Fixed mode for sub-agents (`task:explore` is read-only whatever the session's mode).
    forced_mode: Option<Mode>,
    /// Where problems in the rules files are told (the session's notices).
    notify: Arc<dyn Fn(String) + Send + Sync>,
}

impl SessionGate {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        env: GateEnv,
        root: PathBuf,
        options: GateOptions,
        approver: Arc<SessionApprover>,
        audit: Arc<Audit>,
        notify: Arc<dyn Fn(String) + Send + Sync>,
    ) -> (Self, Vec<String>) {
        let source = RulesSource::new(rules_source::RuleFiles {
            user_settings: env.user_settings.clone(),
            trust_file: env.trust_file.clone(),
            cwd: root.clone(),
            home: env.home.clone(),
        });
        let mut problems = Vec::new();
        let session_rules = session_rule_set(&options.allow, &mut problems);
        let gate = Self {
            env,
            root,
            source,
            state: Mutex::new(State {
                mode: options.mode,
                session_rules,
                non_interactive: options.non_interactive,
                approve_all: options.approve_all,
                reported: Vec::new(),
            }),
            approver,
            audit,
            forced_mode: None,
            notify,
        };
        (gate, problems)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a client's (re)attach: mode, extra allow patterns, interactivity. Returns the
    /// problems with the patterns.
    pub fn reconfigure(&self, options: GateOptions) -> Vec<String> {
        let mut problems = Vec::new();
        let extra = session_rule_set(&options.allow, &mut problems);
        let mut st = self.state();
        if options.mode.is_some() {
            st.mode = options.mode;
        }
        st.session_rules.merge(extra);
        st.non_interactive = options.non_interactive;
        st.approve_all = options.approve_all;
        problems
    }

    pub fn set_mode(&self, mode: Mode) {
        self.state().mode = Some(mode);
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        if let Some(m) = self.forced_mode {
            return m;
        }
        let chosen = self.state().mode;
        chosen
            .or_else(|| self.rules().default_mode)
            .unwrap_or(Mode::Auto)
    }

    fn rules(&self) -> Arc<LoadedRules> {
        let (rules, fresh) = self.source.get();
        if fresh && !rules.problems.is_empty() {
            let new: Vec<String> = {
                let mut st = self.state();
                let new: Vec<String> = rules
                    .problems
                    .iter()
                    .filter(|p| !st.reported.contains(p))
                    .cloned()
                    .collect();
                st.reported.extend(new.iter().cloned());
                new
            };
            for p in new {
                tracing::warn!("permission rules: {p}");
                (self.notify)(format!("permission rules: {p}"));
            }
        }
        rules
    }

    /// Folders the session shell may write to in auto/ask mode.
    pub fn writable_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![
            self.root.clone(),
            skills_dir(&self.env.synapse_home),
            self.env.temp_dir.clone(),
        ];
        dirs.extend(self.rules().writable_dirs.iter().cloned());
        dirs.dedup();
        dirs
    }

    /// The OS sandbox the session's shell should run in under the current mode.
    pub fn sandbox_spec(&self) -> Option<SandboxSpec> {
        match self.mode() {
            Mode::Yolo => None,
            Mode::ReadOnly => Some(SandboxSpec {
                writable: Vec::new(),
                read_only: true,
            }),
            Mode::Auto | Mode::Ask => Some(SandboxSpec {
                writable: self.writable_dirs(),
                read_only: false,
            }),
        }
    }

    /// A read-only gate for a `task:explore` sub-agent: same rules, approver and audit.
    pub fn read_only_child(&self) -> SessionGate {
        let st = self.state();
        SessionGate {
            env: self.env.clone(),
            root: self.root.clone(),
            source: RulesSource::new(self.source.files().clone()),
            state: Mutex::new(State {
                mode: Some(Mode::ReadOnly),
                session_rules: st.session_rules.clone(),
                non_interactive: st.non_interactive,
                approve_all: st.approve_all,
                reported: st.reported.clone(),
            }),
            approver: self.approver.clone(),
            audit: self.audit.clone(),
            forced_mode: Some(Mode::ReadOnly),
            notify: self.notify.clone(),
        }
    }

    /// A few lines for `/permissions`: the mode, the sandbox and where rules come from.
    pub fn summary(&self) -> String {
        let mode = self.mode();
        let rules = self.rules();
        let mut out = format!(
            "permission mode: {} — {}\n",
            mode.as_str(),
            mode.description()
        );
        let sandbox = match (mode, crate::sandbox::support()) {
            (Mode::Yolo, _) => "sandbox: off (yolo)".to_string(),
            (_, crate::sandbox::Support::Landlock { abi }) => match self.sandbox_spec() {
                Some(s) if s.read_only => format!("sandbox: Landlock ABI {abi}, read-only"),
                _ => format!(
                    "sandbox: Landlock ABI {abi}; shell writes only to {}",
                    self.writable_dirs()
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            (_, crate::sandbox::Support::Unavailable { reason }) => {
                format!("sandbox: unavailable ({reason}); rules only")
            }
        };
        out.push_str(&sandbox);
        out.push('\n');
        out.push_str(&format!("rules: {}\n", self.env.user_settings.display()));
        match &rules.project {
            Some(p) if p.trusted => {
                out.push_str(&format!("rules: {} (trusted)\n", p.file.display()))
            }
            Some(p) => out.push_str(&format!(
                "ignored: {} (folder not trusted; `synapse trust {}` to use it)\n",
                p.file.display(),
                p.dir.display()
            )),
            None => {}
        }
        out
    }

    /// Where an "always" answer is saved: the trusted project's file, else the user's.
    fn always_file(&self) -> PathBuf {
        match &self.rules().project {
            Some(p) if p.trusted => p.file.clone(),
            _ => self.env.user_settings.clone(),
        }
    }

    async fn decide_and_ask(&self, action: GateAction<'_>, info: GateInfo<'_>) -> GateVerdict {
        let mode = self.mode();
        let loaded = self.rules();
        let mut rules = loaded.rules.clone();
        rules.merge(self.state().session_rules.clone());
        // The session's folder stays writable after a `cd` elsewhere, as in the sandbox.
        let mut extra = loaded.writable_dirs.clone();
        extra.push(self.root.clone());
        let skills = skills_dir(&self.env.synapse_home);
        let ctx = Context {
            cwd: info.cwd,
            home: &self.env.home,
            synapse_home: &skills,
            temp_dir: &self.env.temp_dir,
            extra_writable: &extra,
            sandboxed: info.sandboxed,
            is_session_pid: info.is_session_pid,
        };
        let (text, decision) = match &action {
            GateAction::Native { command } => (*command, self.native(command, mode, &rules, &ctx)),
            GateAction::Agent {
                name,
                command,
                effect,
                ..
            } => {
                if let Some(inner) = action.shell_line() {
                    let d = self.native(&inner, mode, &rules, &ctx);
                    (*command, d)
                } else {
                    let d = permissions::decide(
                        &Action::Agent {
                            name,
                            command,
                            effect: effect.clone(),
                        },
                        mode,
                        &rules,
                        &ctx,
                    );
                    (
                        *command,
                        protect_settings(d, effect, &self.protected(), mode),
                    )
                }
            }
        };
        let native = matches!(action, GateAction::Native { .. })
            || matches!(action, GateAction::Agent { name: "bash", .. });
        self.resolve(text, decision, mode, native && info.sandboxed)
            .await
    }

    /// The decision for a command line: the policy, combined with the MCP rules for every
    /// `mcp:` command in it.
    fn native(&self, command: &str, mode: Mode, rules: &RuleSet, ctx: &Context) -> Decision {
        let mut decision = permissions::decide(&Action::Native { command }, mode, rules, ctx);
        let parsed = permissions::parse(command);
        for cmd in parsed.all_commands() {
            let Some(program) = cmd.program() else {
                continue;
            };
            if !program.starts_with("mcp:") {
                continue;
            }
            let (read_only_hint, destructive_hint) = (self.env.mcp_hints)(program);
            let d = permissions::decide(
                &Action::Mcp {
                    name: program,
                    read_only_hint,
                    destructive_hint,
                },
                mode,
                rules,
                ctx,
            );
            decision = stricter(decision, d);
        }
        decision
    }

    fn protected(&self) -> Vec<PathBuf> {
        let mut files = vec![self.env.user_settings.clone(), self.env.trust_file.clone()];
        if let Some(p) = &self.rules().project {
            files.push(p.file.clone());
        }
        files
    }

    async fn resolve(
        &self,
        command: &str,
        decision: Decision,
        mode: Mode,
        sandboxed: bool,
    ) -> GateVerdict {
        let mode_name = mode.as_str();
        let record = |outcome: &str, reason: &str, by: &str| {
            self.audit.record(&AuditEntry {
                outcome,
                command,
                reason,
                by,
                mode: mode_name,
            })
        };
        match decision {
            Decision::Allow { escalate, note } => {
                if escalate && sandboxed {
                    record("unsandboxed", note.as_deref().unwrap_or("allowed"), "rule");
                    GateVerdict::RunUnsandboxed
                } else {
                    GateVerdict::Run
                }
            }
            Decision::Deny { reason } => {
                record("denied", &reason, "rule");
                GateVerdict::Refuse(format!("Permission denied: {reason}"))
            }
            Decision::Ask {
                reason,
                suggestion,
                escalate,
            } => {
                let run = if escalate && sandboxed {
                    GateVerdict::RunUnsandboxed
                } else {
                    GateVerdict::Run
                };
                let (non_interactive, approve_all) = {
                    let st = self.state();
                    (st.non_interactive, st.approve_all)
                };
                if approve_all {
                    record("approved", &reason, "--yes");
                    return run;
                }
                if non_interactive {
                    record("denied", &reason, "non-interactive");
                    let how = if suggestion.is_empty() {
                        "--yes".to_string()
                    } else {
                        format!("--allow '{suggestion}' or --yes")
                    };
                    (self.notify)(format!(
                        "denied: `{}` ({reason}); allow it with {how}",
                        one_line(command)
                    ));
                    return GateVerdict::Refuse(format!(
                        "Permission denied: {reason}. This run is non-interactive, so nobody can \
                         approve it; the user can rerun with {how}."
                    ));
                }
                let file = self.always_file();
                let answer = self
                    .approver
                    .request(
                        format!("Run `{}`?", one_line(command)),
                        reason.clone(),
                        suggestion.clone(),
                        file.display().to_string(),
                    )
                    .await;
                match answer.as_str() {
                    "yes" => {
                        record("approved", &reason, "user");
                        run
                    }
                    "session" if !suggestion.is_empty() => {
                        self.allow_for_session(&suggestion);
                        record("approved-for-session", &suggestion, "user");
                        run
                    }
                    // Without a pattern the approver remembered the question itself.
                    "session" | "always" if suggestion.is_empty() => {
                        record("approved-for-session", &reason, "user");
                        run
                    }
                    "always" => {
                        self.allow_for_session(&suggestion);
                        match save_always(&file, &suggestion) {
                            Ok(()) => record("approved-always", &suggestion, "user"),
                            Err(e) => {
                                (self.notify)(format!(
                                    "could not save `{suggestion}` to {}: {e}; allowed for this session only",
                                    file.display()
                                ));
                                record("approved-for-session", &suggestion, "user");
                            }
                        }
                        run
                    }
                    _ => {
                        record("denied", &reason, "user");
                        GateVerdict::Refuse(format!(
                            "Permission denied by the user: `{}` ({reason}). Do not retry it; \
                             ask the user or take another way.",
                            one_line(command)
                        ))
                    }
                }
            }
        }
    }

    fn allow_for_session(&self, pattern: &str) {
        match Pattern::parse(pattern) {
            Ok(p) => {
                let kind = rule_kind(pattern);
                self.state()
                    .session_rules
                    .add(kind, Verdict::Allow, p, "this session");
            }
            Err(e) => tracing::warn!("cannot allow {pattern:?} for the session: {e}"),
        }
    }
}

impl CommandGate for SessionGate {
    fn check<'a>(
        &'a self,
        action: GateAction<'a>,
        info: GateInfo<'a>,
    ) -> BoxFuture<'a, GateVerdict> {
        Box::pin(self.decide_and_ask(action, info))
    }

    fn read_only(&self) -> Option<GateHandle> {
        Some(GateHandle(Arc::new(self.read_only_child())))
    }
}

/// A handle for the router.
pub fn handle(gate: Arc<SessionGate>) -> GateHandle {
    GateHandle(gate)
}

fn skills_dir(synapse_home: &Path) -> PathBuf {
    synapse_home.join("skills")
}

fn rule_kind(pattern: &str) -> RuleKind {
    if pattern.starts_with("mcp:") && !pattern.contains(' ') {
        RuleKind::Mcp
    } else {
        RuleKind::Bash
    }
}

fn session_rule_set(patterns: &[String], problems: &mut Vec<String>) -> RuleSet {
    let mut set = RuleSet::default();
    for p in patterns {
        match Pattern::parse(p) {
            Ok(pat) => set.add(rule_kind(p), Verdict::Allow, pat, "--allow"),
            Err(e) => problems.push(format!("--allow {p:?}: {e}")),
        }
    }
    set
}

/// The stricter of two decisions: deny over ask over allow.
fn stricter(a: Decision, b: Decision) -> Decision {
    fn rank(d: &Decision) -> u8 {
        match d {
            Decision::Allow { .. } => 0,
            Decision::Ask { .. } => 1,
            Decision::Deny { .. } => 2,
        }
    }
    if rank(&b) > rank(&a) { b } else { a }
}

/// Writes to the files that hold the rules themselves are never allowed silently: an agent
/// that could edit them could grant itself anything.
fn protect_settings(d: Decision, effect: &Effect, protected: &[PathBuf], mode: Mode) -> Decision {
    let Effect::Writes(paths) = effect else {
        return d;
    };
    let hit = paths.iter().find(|p| {
        protected
            .iter()
            .any(|f| synapse_shared::trust::normalize(p) == *f)
    });
    match (hit, &d, mode) {
        (Some(p), Decision::Allow { .. }, m) if m != Mode::Yolo => Decision::Ask {
            reason: format!("{} holds permission settings", p.display()),
            suggestion: format!("write {}", p.display()),
            escalate: false,
        },
        _ => d,
    }
}

/// Adds `pattern` to `permissions.<bash|mcp>.allow` in `file` (kept once).
fn save_always(file: &Path, pattern: &str) -> Result<(), settings::SettingsError> {
    let list = match rule_kind(pattern) {
        RuleKind::Mcp => "mcp",
        RuleKind::Bash => "bash",
    };
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    settings::update(file, |tree| {
        let current = tree
            .pointer(&format!("/permissions/{list}/allow"))
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default();
        let mut items = current;
        if !items.iter().any(|v| v.as_str() == Some(pattern)) {
            items.push(serde_json::Value::String(pattern.to_string()));
        }
        settings::set_key(
            tree,
            &["permissions", list, "allow"],
            serde_json::Value::Array(items),
        );
    })
    .map(|_| ())
}

fn one_line(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(160).collect();
    if s.len() < first.len() || command.lines().nth(1).is_some() {
        s.push('…');
    }
    s
}
