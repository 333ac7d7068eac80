//! Hooks in Claude Code's format and semantics: the user's own programs run at points of a
//! session (`SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `Notification`,
//! `Stop`, `SubagentStop`, `PreCompact`, `SessionEnd`), given the event as JSON on stdin.
//!
//! Flow: [`Hooks`] (one per daemon) owns the [`sources`] and hands each chat session a
//! [`SessionHooks`]; the session, its [`crate::agent::runner::AgentRunner`] and its compactor call
//! one method per event. A method looks the event up in the current [`config::HookSet`] (one
//! `stat` per source file; nothing else happens when no hook is configured for the event), names
//! the tool call as Claude Code would ([`names`]), runs the matching commands at once
//! ([`run`]), and folds what they said into a [`HookVerdict`] ([`output`]). A hook that fails
//! (cannot start, times out, bad JSON) is a notice to the user naming it; the turn goes on.
//!
//! A PreToolUse hook's `allow`/`ask` reaches the one permission gate with the call
//! (`HookPermission` in `shell/gate.rs`, weighed in `agent/gate/decide.rs`); its `deny` or exit 2
//! blocks the call before anything runs.

pub mod config;
pub mod input;
pub mod matcher;
pub mod named_files;
pub mod names;
pub mod output;
pub mod run;
pub mod script_pins;
pub mod sources;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

pub use config::{HookEntry, HookEvent, HookSet};
pub use output::{HookVerdict, Permission};

/// How many times in a row Stop hooks may keep the agent going within one turn.
pub const STOP_CONTINUATIONS_MAX: u32 = 3;

/// The daemon's hooks: their sources, how `mcp:` commands are named, and the live sessions'
/// [`SessionHooks`] by id.
pub struct Hooks {
    sources: sources::HookSources,
    mcp: Option<names::McpLookup>,
    /// The live sessions' hooks by session id: a sub-agent started by a session's command
    /// (`task:*`, also inside a pipeline) fires that session's `SubagentStop`.
    live: Mutex<HashMap<String, Weak<SessionHooks>>>,
}

/// What a session's hooks need to know about it.
pub struct SessionFacts {
    pub session_id: String,
    /// The session's transcript in Claude Code's format (`agent/transcript.rs`).
    pub transcript_path: PathBuf,
    pub cwd: PathBuf,
    /// The workspace root (`CLAUDE_PROJECT_DIR`); `None`: the cwd stands in, no project hooks.
    pub root: Option<PathBuf>,
    /// The client's environment (empty: the daemon's).
    pub env: HashMap<String, String>,
    /// Where notices for the user go (the session's event stream).
    pub notify: Arc<dyn Fn(String) + Send + Sync>,
}

impl Hooks {
    pub fn new(sources: sources::HookSources, mcp: Option<names::McpLookup>) -> Self {
        Self {
            sources,
            mcp,
            live: Mutex::default(),
        }
    }

    /// The hooks of live session `id`.
    pub fn of_session(&self, id: &str) -> Option<Arc<SessionHooks>> {
        self.live.lock().get(id).and_then(Weak::upgrade)
    }

    /// The hooks a new (or resumed) session fires.
    pub fn session(self: &Arc<Self>, facts: SessionFacts) -> Arc<SessionHooks> {
        let env: Vec<(OsString, OsString)> = facts
            .env
            .iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let id = facts.session_id.clone();
        let hooks = Arc::new(SessionHooks {
            daemon: self.clone(),
            project_dir: facts.root.clone().unwrap_or_else(|| facts.cwd.clone()),
            facts,
            base_env: (!env.is_empty()).then_some(env),
            subagent: false,
            pending_context: Mutex::default(),
            told: Mutex::default(),
            starting: Arc::default(),
            prompt_id: Mutex::default(),
            before: Mutex::default(),
        });
        let mut live = self.live.lock();
        live.retain(|_, h| h.strong_count() > 0);
        live.insert(id, Arc::downgrade(&hooks));
        hooks
    }

    /// Every hook that could run in the project at `root` once trusted as it reads now
    /// ([`sources::HookSources::review_entries`]), for `synapse trust`'s review.
    pub fn review_entries(&self, root: &Path) -> Vec<HookEntry> {
        self.sources.review_entries(root)
    }

    /// Why each hook of a session in `cwd` would be held now (a project file it runs is not as
    /// pinned), for `/hooks`.
    pub fn held_in(&self, cwd: &Path, home: Option<&Path>) -> Vec<String> {
        if !cwd.is_absolute() {
            return Vec::new();
        }
        let root = crate::workspace::root::project_root(cwd, home);
        let pins = self.sources.pin_file();
        let mut out: Vec<String> = Vec::new();
        for entry in &self.sources.get(Some(&root)).entries {
            let place = named_files::HookPlace::new(
                cwd,
                &root,
                entry.origin.plugin_root.as_deref(),
                Some(self.sources.home()),
            );
            if let Some(why) = script_pins::hold_reason(entry, &place, &pins)
                && !out.contains(&why)
            {
                out.push(why);
            }
        }
        out
    }

    /// The daemon user's home, as hooks see it.
    pub fn home(&self) -> &Path {
        self.sources.home()
    }

    /// Every hook in force for a session started in `cwd` (its project's when trusted), and
    /// the problems in their files (`/hooks`).
    pub fn for_folder(&self, cwd: &Path, home: Option<&Path>) -> Arc<HookSet> {
        let root = cwd
            .is_absolute()
            .then(|| crate::workspace::root::project_root(cwd, home));
        self.sources.get(root.as_deref())
    }
}

/// One session's hooks (or a sub-agent's of that session, firing `SubagentStop`).
pub struct SessionHooks {
    daemon: Arc<Hooks>,
    facts: SessionFacts,
    project_dir: PathBuf,
    base_env: Option<Vec<(OsString, OsString)>>,
    subagent: bool,
    /// SessionStart output for the model, sent with the next prompt.
    pending_context: Mutex<Vec<String>>,
    /// Problems in the hook files already told to this session.
    told: Mutex<Vec<String>>,
    /// Held while SessionStart hooks run; a prompt waits for it.
    starting: Arc<tokio::sync::Mutex<()>>,
    /// The current prompt's id (`prompt_id`), new at each `UserPromptSubmit`.
    prompt_id: Mutex<Option<String>>,
    /// What each running `Write`/`Edit` call's file held before it ran, by tool-use id.
    before: Mutex<HashMap<String, input::FileBefore>>,
}

impl SessionHooks {
    /// The same session's hooks for a sub-agent it starts: its Stop is `SubagentStop`.
    pub fn for_subagent(&self) -> Arc<SessionHooks> {
        Arc::new(SessionHooks {
            daemon: self.daemon.clone(),
            facts: SessionFacts {
                session_id: self.facts.session_id.clone(),
                transcript_path: self.facts.transcript_path.clone(),
                cwd: self.facts.cwd.clone(),
                root: self.facts.root.clone(),
                env: HashMap::new(),
                notify: self.facts.notify.clone(),
            },
            project_dir: self.project_dir.clone(),
            base_env: self.base_env.clone(),
            subagent: true,
            pending_context: Mutex::default(),
            told: Mutex::default(),
            starting: Arc::default(),
            prompt_id: Mutex::new(self.prompt_id.lock().clone()),
            before: Mutex::default(),
        })
    }

    fn current(&self) -> Arc<HookSet> {
        self.daemon.sources.get(self.facts.root.as_deref())
    }

    /// Tells the user, once per session, what is wrong in the hook files or waits for trust
    /// (at each prompt, so a client attached by then hears it).
    fn tell_problems(&self) {
        for p in &self.current().problems {
            self.tell_once(p.clone());
        }
    }

    /// Runs the hooks of `event` whose matcher takes `subject`, with `fields` added to the
    /// common input; their notices go to the user. Nothing runs (and nothing is built) when no
    /// hook is configured for the event.
    async fn fire(
        &self,
        event: HookEvent,
        subject: &str,
        fields: impl FnOnce() -> Map<String, Value>,
    ) -> HookVerdict {
        self.fire_in(self.current(), event, subject, fields).await
    }

    /// [`Self::fire`] with the hooks already looked up.
    async fn fire_in(
        &self,
        set: Arc<HookSet>,
        event: HookEvent,
        subject: &str,
        fields: impl FnOnce() -> Map<String, Value>,
    ) -> HookVerdict {
        if !set.has(event) {
            return HookVerdict::default();
        }
        let mut chosen: Vec<&HookEntry> = Vec::new();
        for entry in set.entries.iter().filter(|e| e.event == event) {
            // The same command configured twice (two files, two matchers) runs once.
            if entry.matcher.matches(subject) && !chosen.iter().any(|c| c.command == entry.command)
            {
                chosen.push(entry);
            }
        }
        // A hook runs outside the sandbox: only while every project file it runs is as trusted.
        chosen.retain(|entry| match self.hold_reason(entry) {
            Some(why) => {
                self.tell_once(why);
                false
            }
            None => true,
        });
        if chosen.is_empty() {
            return HookVerdict::default();
        }
        let prompt_id = self.prompt_id.lock().clone();
        let mut input = input::common(
            &self.facts.session_id,
            &self.facts.transcript_path,
            &self.facts.cwd,
            prompt_id.as_deref(),
            event,
        );
        input.extend(fields());
        let stdin = Value::Object(input).to_string().into_bytes();
        let runs = chosen.iter().map(|entry| self.run_one(entry, &stdin));
        let outcomes = futures::future::join_all(runs).await;
        let mut verdict = HookVerdict::default();
        for (entry, outcome) in chosen.iter().zip(outcomes) {
            verdict.absorb(event, &label(&entry.command), outcome);
        }
        for notice in &verdict.notices {
            (self.facts.notify)(notice.clone());
        }
        verdict
    }

    /// The folder a hook of this session runs in.
    fn hook_cwd(&self) -> &Path {
        if self.facts.cwd.is_dir() {
            self.facts.cwd.as_path()
        } else {
            Path::new("/")
        }
    }

    /// Why `entry` is held (a project file it runs is not as pinned), for the user.
    fn hold_reason(&self, entry: &HookEntry) -> Option<String> {
        let sources = &self.daemon.sources;
        let place = named_files::HookPlace::new(
            self.hook_cwd(),
            &self.project_dir,
            entry.origin.plugin_root.as_deref(),
            Some(sources.home()),
        );
        script_pins::hold_reason(entry, &place, &sources.pin_file())
    }

    /// Tells the user `notice` (about the hook files) unless this session was told it already.
    fn tell_once(&self, notice: String) {
        {
            let mut told = self.told.lock();
            if told.contains(&notice) {
                return;
            }
            told.push(notice.clone());
        }
        tracing::warn!(session = %self.facts.session_id, "hooks: {notice}");
        (self.facts.notify)(format!("hooks: {notice}"));
    }

    async fn run_one(&self, entry: &HookEntry, stdin: &[u8]) -> run::RunOutcome {
        let dir = self.project_dir.as_os_str().to_os_string();
        let mut env: Vec<(OsString, OsString)> = vec![
            ("CLAUDE_PROJECT_DIR".into(), dir.clone()),
            ("SYNAPSE_PROJECT_DIR".into(), dir),
        ];
        if let Some(root) = &entry.origin.plugin_root {
            env.push(("CLAUDE_PLUGIN_ROOT".into(), root.as_os_str().to_os_string()));
        }
        if let Some(data) = &entry.origin.plugin_data {
            // Claude Code creates the folder before the hook runs; a failure leaves the hook to
            // report what it could not write.
            let _ = std::fs::create_dir_all(data);
            env.push(("CLAUDE_PLUGIN_DATA".into(), data.as_os_str().to_os_string()));
        }
        let cwd = self.hook_cwd();
        run::run(run::HookProcess {
            command: &entry.command,
            timeout: entry.timeout,
            stdin,
            cwd,
            env: &env,
            base_env: self.base_env.as_deref(),
        })
        .await
    }

    /// Runs the `SessionStart` hooks in the background (nothing when none is configured); the
    /// next prompt waits for them.
    pub fn start_in_background(self: &Arc<Self>, source: &'static str) {
        if !self.has(HookEvent::SessionStart) {
            return;
        }
        let Ok(guard) = self.starting.clone().try_lock_owned() else {
            return;
        };
        let hooks = self.clone();
        synapse_command::tasks::spawn(async move {
            hooks.session_start(source).await;
            drop(guard);
        });
    }

    /// `SessionStart` (`startup`, `resume`, `clear`, `compact`): its output reaches the model
    /// with the next prompt.
    pub async fn session_start(&self, source: &str) {
        let verdict = self
            .fire(HookEvent::SessionStart, source, || {
                fields([("source", json!(source))])
            })
            .await;
        self.pending_context.lock().extend(verdict.context);
    }

    /// `SessionEnd` (`clear`, `logout`, `prompt_input_exit`, `other`).
    pub async fn session_end(&self, reason: &str) {
        self.fire(HookEvent::SessionEnd, reason, || {
            fields([("reason", json!(reason))])
        })
        .await;
    }

    /// `UserPromptSubmit`: a block (the prompt is not sent; the reason is for the user), or the
    /// context to send with the prompt (SessionStart's still waiting included).
    pub async fn user_prompt(&self, prompt: &str) -> Result<Vec<String>, String> {
        drop(self.starting.lock().await);
        *self.prompt_id.lock() = Some(input::uuid_v4());
        self.tell_problems();
        let verdict = self
            .fire(HookEvent::UserPromptSubmit, "", || {
                fields([("prompt", json!(prompt))])
            })
            .await;
        if let Some(reason) = verdict.block.or(verdict.stop) {
            return Err(reason);
        }
        let mut context = std::mem::take(&mut *self.pending_context.lock());
        context.extend(verdict.context);
        Ok(context)
    }

    /// `PreToolUse` for the Bash-tool call `command` (id `tool_use_id`). When PostToolUse hooks
    /// are configured, what a `Write`/`Edit` target holds now is kept for their `tool_response`.
    pub async fn pre_tool(&self, tool_use_id: &str, command: &str) -> HookVerdict {
        let set = self.current();
        if set.has(HookEvent::PostToolUse) {
            let (tool, input) = self.tool_of(command);
            if let ("Write" | "Edit", Some(path)) = (
                tool.as_str(),
                input.get("file_path").and_then(Value::as_str),
            ) {
                let before = input::FileBefore::read(Path::new(path));
                self.before.lock().insert(tool_use_id.to_string(), before);
            }
        }
        self.tool_event(HookEvent::PreToolUse, tool_use_id, command, None)
            .await
    }

    /// `PostToolUse` with the call's result and how long it ran.
    pub async fn post_tool(
        &self,
        tool_use_id: &str,
        command: &str,
        output: &str,
        exit_code: i32,
        duration: std::time::Duration,
    ) -> HookVerdict {
        let before = self.before.lock().remove(tool_use_id);
        let done = PostToolFacts {
            output,
            exit_code,
            before,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        };
        self.tool_event(HookEvent::PostToolUse, tool_use_id, command, Some(done))
            .await
    }

    fn tool_of(&self, command: &str) -> (String, Value) {
        names::tool_of(
            command,
            (
                &self.facts.cwd,
                self.facts.root.as_deref(),
                Some(&self.facts.session_id),
            ),
            self.daemon.mcp.as_ref(),
        )
    }

    async fn tool_event(
        &self,
        event: HookEvent,
        tool_use_id: &str,
        command: &str,
        done: Option<PostToolFacts<'_>>,
    ) -> HookVerdict {
        let set = self.current();
        if !set.has(event) {
            return HookVerdict::default();
        }
        let (tool, input) = self.tool_of(command);
        self.fire_in(set, event, &tool, || {
            let response = done.as_ref().map(|d| {
                input::tool_response(&tool, &input, d.output, d.exit_code, d.before.as_ref())
            });
            let mut f = fields([("tool_name", json!(tool)), ("tool_input", input)]);
            if let Some(r) = response {
                f.insert("tool_response".into(), r);
            }
            f.insert("tool_use_id".into(), json!(tool_use_id));
            if let Some(d) = &done {
                f.insert("duration_ms".into(), json!(d.duration_ms));
            }
            f
        })
        .await
    }

    /// `Stop` (or `SubagentStop` for a sub-agent): `Some(reason)` keeps the agent going.
    /// `active` is true when an earlier Stop hook already kept it going this turn.
    /// `last_assistant_message` is the text of the model's last message.
    pub async fn stop(&self, active: bool, last_assistant_message: &str) -> HookVerdict {
        let event = if self.subagent {
            HookEvent::SubagentStop
        } else {
            HookEvent::Stop
        };
        self.fire(event, "", || {
            fields([
                ("stop_hook_active", json!(active)),
                ("last_assistant_message", json!(last_assistant_message)),
            ])
        })
        .await
    }

    /// `PreCompact` (`manual` or `auto`).
    pub async fn pre_compact(&self, trigger: &str) {
        self.fire(HookEvent::PreCompact, trigger, || {
            fields([
                ("trigger", json!(trigger)),
                ("custom_instructions", json!("")),
            ])
        })
        .await;
    }

    /// `Notification` (`permission_prompt` when an approval is asked).
    pub async fn notification(&self, kind: &str, message: &str) {
        self.fire(HookEvent::Notification, kind, || {
            fields([
                ("message", json!(message)),
                ("notification_type", json!(kind)),
            ])
        })
        .await;
    }

    /// Whether any hook is configured for `event` now (one `stat` per source file).
    pub fn has(&self, event: HookEvent) -> bool {
        self.current().has(event)
    }
}

/// What a finished call tells its `PostToolUse` hooks.
struct PostToolFacts<'a> {
    output: &'a str,
    exit_code: i32,
    before: Option<input::FileBefore>,
    duration_ms: u64,
}

fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A hook's command as the user sees it named in a notice (its first line, shortened).
fn label(command: &str) -> String {
    let line = command.lines().next().unwrap_or("").trim();
    let mut out: String = line.chars().take(80).collect();
    if out.len() < line.len() || command.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}
