//! A chat session's permission gate: the [`CommandGate`] the router asks before every model
//! command. It holds the session's mode, the rules from the files ([`rules_source`]) plus the
//! session's own (`--allow`, "always this session" answers), asks the user through the
//! session's approver when the policy says "ask", turns "ask" into a refusal in a
//! non-interactive run, saves "always" answers to the rules file, and audits every decision
//! ([`audit`]). The decision itself is [`synapse_permissions::decide`]; [`decide`] feeds it the
//! session's facts, [`answer`] acts on what it says, [`summary`] describes it for `/permissions`.

mod answer;
pub mod audit;
mod bypass;
mod decide;
pub mod exec_gate;
pub mod mcp_call;
pub mod private_tmp;
mod protect;
pub mod rules_source;
pub mod shell_state;
mod skill_grants;
pub mod subagent_policy;
mod summary;
pub mod tool_rules;
pub mod trust_list;
pub mod trust_review;
mod user_config;

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;

use self::answer::session_rule_set;
use self::audit::Audit;
use self::rules_source::{LoadedRules, RulesSource};
use super::approvals::SessionApprover;
use crate::shell::{
    CommandGate, GateAction, GateHandle, GateInfo, GateVerdict, SkillToolsAnswer, SkillToolsGrant,
};
use crate::workspace::SettingsHandle;
use synapse_permissions::{Mode, RuleSet};
use synapse_sandbox::SandboxSpec;

/// An MCP tool's `(readOnlyHint, destructiveHint)` annotations, by `mcp:<server>:<tool>`.
pub type McpHints = Arc<dyn Fn(&str) -> (Option<bool>, Option<bool>) + Send + Sync>;

/// Facts about the daemon every session gate needs.
#[derive(Clone)]
pub struct GateEnv {
    pub synapse_home: PathBuf,
    /// The user's `settings.json` (the daemon's one handle on it).
    pub user_settings: Arc<SettingsHandle>,
    pub trust_file: PathBuf,
    /// The user's home (`~` in commands and rules).
    pub home: PathBuf,
    pub temp_dir: PathBuf,
    pub mcp_hints: McpHints,
    /// The last good rules of each settings file, shared by every session of the daemon.
    pub last_good_rules: rules_source::LastGood,
    /// The agent commands the session shells define, from the command registry.
    pub agent_commands: Arc<synapse_permissions::AgentCommands>,
}

impl GateEnv {
    /// The user's own configuration ([`user_config`]): read-only in the sandbox even beneath
    /// the session's folder, and asked about in every mode by the write guard.
    pub fn user_config(&self) -> Vec<PathBuf> {
        user_config::paths(&self.home, &self.synapse_home)
    }
}

/// Per-session choices made by the client.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// `None`: the settings' `permissions.defaultMode`, else auto.
    pub mode: Option<Mode>,
    pub allow: Vec<String>,
    /// `--allowedTools` / `--disallowedTools`, already read ([`tool_rules`]).
    pub tool_rules: RuleSet,
    pub non_interactive: bool,
    pub approve_all: bool,
    /// What a non-interactive refusal tells the user to do.
    pub refusal_hint: RefusalHint,
}

/// How a non-interactive caller can allow what was refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RefusalHint {
    /// `synapse run`: rerun with `--allow PATTERN` or `--yes`.
    #[default]
    RunFlags,
    /// `synapse exec` and `synapse mcp serve`, which take no such flags: the allow rule to add
    /// to the rules file an "always" answer would write.
    SettingsRule,
}

struct State {
    mode: Option<Mode>,
    session_rules: RuleSet,
    /// Loaded skills' `allowed-tools` the user let count ([`skill_grants`]): they only ever
    /// remove a question for what runs inside the sandbox, so they are kept apart from
    /// `session_rules`, which may lift a command out of it.
    skill_rules: RuleSet,
    non_interactive: bool,
    approve_all: bool,
    refusal_hint: RefusalHint,
    /// Problems already reported, so each is said once.
    reported: Vec<String>,
    /// `--add-dir` folders: writable and "inside the session" as its own folder is.
    added_dirs: Vec<PathBuf>,
    /// `--dangerously-skip-permissions` ([`bypass`]).
    bypass: bool,
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
    /// What the session shell has defined, for resolving command names.
    shell: Arc<Mutex<shell_state::TrackedShell>>,
    /// The session's temporary folder.
    tmp: private_tmp::SessionTmp,
    /// The line the user approved in the running call, and the commands it names: agent
    /// commands that line runs (through the agent channel) are not asked about again.
    approved_line: Mutex<Option<(u64, Vec<String>)>>,
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
            user: env.user_settings.clone(),
            trust_file: env.trust_file.clone(),
            cwd: root.clone(),
            home: env.home.clone(),
            last_good: env.last_good_rules.clone(),
        });
        let mut problems = Vec::new();
        let mut session_rules = session_rule_set(&options.allow, &mut problems);
        session_rules.merge(options.tool_rules);
        let gate = Self {
            env,
            root,
            source,
            state: Mutex::new(State {
                mode: options.mode,
                session_rules,
                skill_rules: RuleSet::default(),
                non_interactive: options.non_interactive,
                approve_all: options.approve_all,
                refusal_hint: options.refusal_hint,
                reported: Vec::new(),
                added_dirs: Vec::new(),
                bypass: false,
            }),
            approver,
            audit,
            forced_mode: None,
            notify,
            shell: Arc::default(),
            tmp: private_tmp::SessionTmp::Shared,
            approved_line: Mutex::new(None),
        };
        (gate, problems)
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Applies a client's (re)attach: mode, extra allow patterns, interactivity. Returns the
    /// problems with the patterns, then what the session's folder means for the user's
    /// configuration when it holds some ([`Self::folder_notice`]).
    pub fn reconfigure(&self, options: GateOptions) -> Vec<String> {
        let mut problems = Vec::new();
        let extra = session_rule_set(&options.allow, &mut problems);
        {
            let mut st = self.state();
            if options.mode.is_some() {
                st.mode = options.mode;
            }
            st.session_rules.merge(extra);
            st.session_rules.merge(options.tool_rules);
            st.non_interactive = options.non_interactive;
            st.approve_all = options.approve_all;
            st.refusal_hint = options.refusal_hint;
        }
        problems.extend(self.folder_notice());
        problems
    }

    /// `--add-dir`: more folders the session may write, as its own folder (the sandbox's
    /// writable list and the rules' "inside the session" paths). Replaces earlier ones.
    pub fn set_added_dirs(&self, dirs: Vec<PathBuf>) {
        self.state().added_dirs = dirs;
    }

    /// `--dangerously-skip-permissions`: every question answered yes, inside the sandbox.
    pub fn set_bypass(&self, on: bool) {
        self.state().bypass = on;
    }

    /// The notice for a session whose folder holds the user's configuration (a session in
    /// `$HOME`): what stays read-only under the current mode, or, where commands run without
    /// the sandbox (yolo mode, no Landlock), that only the guard stands for it.
    pub fn folder_notice(&self) -> Option<String> {
        let (home, synapse_home) = (&self.env.home, &self.env.synapse_home);
        let sandboxed = match self.mode() {
            Mode::ReadOnly => return None,
            Mode::Yolo => Err("yolo mode runs commands without the sandbox"),
            Mode::Auto | Mode::Ask => match synapse_sandbox::support() {
                synapse_sandbox::Support::Landlock { .. } => Ok(()),
                synapse_sandbox::Support::Unavailable { .. } => {
                    Err("this system cannot sandbox commands")
                }
            },
        };
        let notice = user_config::notice(&self.root, home, synapse_home)?;
        Some(match sandboxed {
            Ok(()) => notice,
            Err(why) => user_config::unconfined_notice(&self.root, home, why),
        })
    }

    pub fn set_mode(&self, mode: Mode) {
        self.state().mode = Some(mode);
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        self.mode_with(&self.rules())
    }

    /// The mode in force, with the rules files already read.
    fn mode_with(&self, loaded: &LoadedRules) -> Mode {
        if let Some(m) = self.forced_mode {
            return m;
        }
        let chosen = self.state().mode;
        let mode = chosen.or(loaded.default_mode).unwrap_or(Mode::Auto);
        // A broken rules file with no last good version may have held deny rules: every
        // command that is not a plain read asks until it is fixed.
        if loaded.fail_closed && matches!(mode, Mode::Yolo | Mode::Auto) {
            return Mode::Ask;
        }
        mode
    }

    /// The rules files' content (re-read only when one changed); new problems are told once.
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
    fn writable_dirs(&self, loaded: &LoadedRules) -> Vec<PathBuf> {
        let mut dirs = vec![self.root.clone(), skills_dir(&self.env.synapse_home)];
        dirs.extend(self.temp_dir());
        dirs.extend(loaded.writable_dirs.iter().cloned());
        dirs.extend(self.state().added_dirs.iter().cloned());
        dirs.dedup();
        dirs
    }

    /// The OS sandbox the session's shell should run in under the current mode. Asked at the
    /// start of every turn, so a broken rules file is told here each turn until it is fixed.
    pub fn sandbox_spec(&self) -> Option<SandboxSpec> {
        let loaded = self.rules();
        for line in &loaded.broken {
            tracing::warn!("permission rules: {line}");
            (self.notify)(format!("permission rules: {line}"));
        }
        self.sandbox_spec_with(&loaded)
    }

    fn sandbox_spec_with(&self, loaded: &LoadedRules) -> Option<SandboxSpec> {
        match self.mode_with(loaded) {
            Mode::Yolo => None,
            Mode::ReadOnly => Some(SandboxSpec {
                writable: Vec::new(),
                read_only: true,
                protected: Vec::new(),
            }),
            Mode::Auto | Mode::Ask => Some(SandboxSpec {
                writable: self.writable_dirs(loaded),
                read_only: false,
                protected: self.env.user_config(),
            }),
        }
    }

    /// Shares `shell`, the picture of a shell that outlives this gate (`synapse exec` sessions).
    pub fn with_tracked_shell(mut self, shell: Arc<Mutex<shell_state::TrackedShell>>) -> Self {
        self.shell = shell;
        self
    }

    /// Gives the session a private temporary folder (its shell's `TMPDIR`, the only temporary
    /// folder its sandbox may write), removed when the gate is dropped.
    pub fn with_private_tmp(self) -> Self {
        self.with_private_tmp_in(None)
    }

    /// The same, with `reserved` (a spare shell's, made by [`SessionGate::tmp_maker`]) as the
    /// folder when given.
    pub fn with_private_tmp_in(mut self, reserved: Option<Arc<tempfile::TempDir>>) -> Self {
        self.tmp = match reserved {
            Some(dir) => private_tmp::SessionTmp::Private(dir),
            None => private_tmp::SessionTmp::private(&self.env.temp_dir),
        };
        self
    }

    /// Makes private temporary folders as this gate's was made (for a spare shell's session);
    /// `None` when the gate has none of its own.
    pub fn tmp_maker(&self) -> Option<crate::shell::spare::SpareTmp> {
        self.tmp.private_path()?;
        let temp = self.env.temp_dir.clone();
        Some(crate::shell::spare::SpareTmp(Arc::new(
            move || match private_tmp::SessionTmp::private(&temp) {
                private_tmp::SessionTmp::Private(dir) => Some(dir),
                _ => None,
            },
        )))
    }

    /// The session's private temporary folder, when it has one of its own.
    pub fn private_temp_dir(&self) -> Option<PathBuf> {
        self.tmp.private_path()
    }

    /// The session's temporary folder (`None`: none could be made, none is writable).
    pub fn temp_dir(&self) -> Option<PathBuf> {
        self.tmp.path(&self.env.temp_dir)
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
                skill_rules: st.skill_rules.clone(),
                non_interactive: st.non_interactive,
                approve_all: st.approve_all,
                refusal_hint: st.refusal_hint,
                reported: st.reported.clone(),
                added_dirs: st.added_dirs.clone(),
                bypass: st.bypass,
            }),
            approver: self.approver.clone(),
            audit: self.audit.clone(),
            forced_mode: Some(Mode::ReadOnly),
            notify: self.notify.clone(),
            // A sub-agent runs in its own shell.
            shell: Arc::default(),
            tmp: self.tmp.clone(),
            approved_line: Mutex::new(None),
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

    fn grant_skill_tools<'a>(
        &'a self,
        grant: SkillToolsGrant<'a>,
    ) -> BoxFuture<'a, SkillToolsAnswer> {
        Box::pin(self.grant_skill_tools_now(grant))
    }
}

/// A handle for the router.
pub fn handle(gate: Arc<SessionGate>) -> GateHandle {
    GateHandle(gate)
}

fn skills_dir(synapse_home: &Path) -> PathBuf {
    synapse_home.join("skills")
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
