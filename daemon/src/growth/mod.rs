//! Self-growth: the skill sub-agent and what it does for the main agent.
//!
//! [`SkillAgent`] runs a sub-agent (an `AgentRunner` in silent mode, policy `SkillAuthor`) with
//! the prompt of [`prompt`]: role, the commands it writes skills with, the full [`meta`] skills,
//! skill metadata. It serves [`search`] (semantic match, BM25 prefilter and fallback from
//! [`rank`]; offered no tool), [`enhance`] (create or improve a skill from a compact
//! [`transcript`] of the end of a session; also the stop hook after each turn) and
//! [`evaluate`]. Every command it runs passes a [`snapshot_gate`], which saves a skill as a
//! [`versions`] entry before any change to it; its shell runs in the OS sandbox with only the
//! user skills folder and the temp folders writable, where the system has one. [`commands`] exposes `task:skill:search` /
//! `task:skill:enhance` to the agent.
//!
//! A call from a live chat session (its shell session is named by the chat id) runs on that
//! session's [`SubAgentContext`]: one skill sub-agent per chat, remembering its earlier runs,
//! one run at a time. Calls from anywhere else (the CLI's RPCs, `synapse exec`) are one-off.

pub mod commands;
pub mod enhance;
pub mod error;
pub mod evaluate;
mod evaluate_checks;
pub mod meta;
pub mod prompt;
pub mod rank;
pub mod report_check;
pub mod search;
pub mod snapshot_gate;
pub mod transcript;
pub mod versions;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::agent::runner::{RunnerLimits, TurnOutcome};
use crate::agent::session_log::{is_valid_session_id, session_path};
use crate::agent::subagent::{SubAgentPolicy, SubAgentRequest, SubAgentRunner};
use crate::agent::subagent_context::{RunMemory, SubAgentContext, SubAgentContexts};
use crate::shell::GateHandle;
use crate::skills::{SkillStore, SkillSummary};
pub use error::GrowthError;
use snapshot_gate::{RunVersions, SnapshotGate};
use synapse_sandbox::SandboxSpec;
use synapse_shared::skill::SkillKind;

/// Model calls one skill sub-agent run may make.
const SKILL_AGENT_MAX_ITERATIONS: u32 = 30;

/// What the skill sub-agent's memory keeps of an enhancement's prompt.
const ENHANCE_REMEMBERED: &str = "(An enhancement was asked here for the conversation up to \
this point; its transcript is not kept, the next request brings the conversation again.)";

/// The skill sub-agent and what it needs.
pub struct SkillAgent {
    pub store: Arc<SkillStore>,
    /// Runs the sub-agent (on the daemon's shell layer).
    pub subagents: Arc<dyn SubAgentRunner>,
    /// Where the meta skills are installed and read.
    pub meta_dir: PathBuf,
    pub versions: versions::Versions,
    /// The memories of the chat sessions' skill sub-agents.
    pub contexts: Arc<SubAgentContexts>,
    /// The chat sessions' files (an enhancement reads the end of one).
    pub sessions_dir: PathBuf,
    /// `skillEnhance.autoEnhance`, read live (and cheaply: once per completed turn).
    pub auto_enhance: Arc<dyn Fn() -> bool + Send + Sync>,
    /// `skillEnhance.maxEnhanceContextChars`, read live.
    pub max_enhance_chars: Arc<dyn Fn() -> usize + Send + Sync>,
}

/// Who asks the skill sub-agent: from where, with which environment (the model settings),
/// and from which shell session (a live chat's brings its sub-agent's memory).
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    pub session: Option<String>,
}

/// What a run of the skill sub-agent may do to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Create and enhance: `write`/`edit` below the user skills folder.
    Author,
    /// Evaluate: no file changes at all (policy and OS sandbox both read-only).
    ReadOnly,
    /// Search: read-only, a lean prompt (the skills' metadata and the answer format; no
    /// agent-command docs, no meta skills) and no tool: a search never runs a command.
    Search,
}

/// One run of the skill sub-agent: how its turn ended and the versions it caused.
#[derive(Debug, Clone)]
pub struct SkillRun {
    pub outcome: TurnOutcome,
    pub versions: RunVersions,
}

/// The skills a caller in `cwd` sees (`skill list` from there); from a caller without a folder,
/// the user-level skills only.
pub(crate) fn skills_seen_from(store: &SkillStore, cwd: &Path) -> Vec<SkillSummary> {
    if cwd.is_absolute() {
        store.list_in(cwd)
    } else {
        store.list()
    }
}

impl SkillAgent {
    /// The user skills folder: the only place the sub-agent may write.
    pub fn skills_dir(&self) -> PathBuf {
        self.store.paths().skills_dir.clone()
    }

    /// Enabled regular skills a caller in `cwd` sees: the user's and its project's, none of
    /// another project (meta skills steer the sub-agent; they are not search results).
    pub async fn regular_skills(&self, cwd: &Path) -> Vec<SkillSummary> {
        let store = self.store.clone();
        let cwd = cwd.to_path_buf();
        let all = tokio::task::spawn_blocking(move || {
            if cwd.is_absolute() {
                store.add_project_cwd(&cwd);
            }
            skills_seen_from(&store, &cwd)
        })
        .await
        .unwrap_or_default();
        all.into_iter()
            .filter(|s| s.enabled && s.kind != SkillKind::Meta)
            .collect()
    }

    /// The memory of the skill sub-agent of `caller`'s chat session, if it comes from one.
    pub fn context_of(&self, caller: &Caller) -> Option<Arc<SubAgentContext>> {
        caller
            .session
            .as_deref()
            .and_then(|id| self.contexts.get(id))
    }

    /// The end of chat session `id` as a compact [`transcript`] (at most
    /// `maxEnhanceContextChars`), and the path of its file.
    pub async fn conversation_tail(&self, id: &str) -> Result<(String, PathBuf), GrowthError> {
        if !is_valid_session_id(id) {
            return Err(GrowthError::BadSessionId(id.to_string()));
        }
        let file = session_path(&self.sessions_dir, id);
        if !file.is_file() {
            return Err(GrowthError::NoSession {
                id: id.to_string(),
                path: file,
            });
        }
        let max = (self.max_enhance_chars)();
        let f = file.clone();
        let tail = tokio::task::spawn_blocking(move || transcript::read_transcript(&f, max))
            .await
            .map_err(GrowthError::internal)?
            .map_err(|source| GrowthError::Io {
                path: file.clone(),
                source,
            })?;
        Ok((tail, file))
    }

    /// Runs the sub-agent on `prompt` with `skills` as the metadata it sees; it may write
    /// below the user skills folder (create, enhance).
    pub async fn run(
        &self,
        prompt: String,
        skills: &[SkillSummary],
        max_iterations: u32,
        caller: &Caller,
        cancel: &CancellationToken,
    ) -> Result<SkillRun, GrowthError> {
        self.run_as(
            RunMode::Author,
            prompt,
            skills,
            max_iterations,
            caller,
            cancel,
        )
        .await
    }

    /// Runs the sub-agent on `prompt` with `skills` as the metadata it sees, in `mode`:
    /// [`RunMode::ReadOnly`] (search, evaluate) changes nothing on disk.
    pub async fn run_as(
        &self,
        mode: RunMode,
        prompt: String,
        skills: &[SkillSummary],
        max_iterations: u32,
        caller: &Caller,
        cancel: &CancellationToken,
    ) -> Result<SkillRun, GrowthError> {
        let subagents = &self.subagents;
        let skills_dir = self.skills_dir();
        let meta_dir = self.meta_dir.clone();
        let store = self.store.clone();
        let cwd = caller.cwd.clone();
        let system = if mode == RunMode::Search {
            prompt::search_system_prompt(skills)
        } else {
            let meta_text =
                tokio::task::spawn_blocking(move || meta::contents(&meta_dir, &store, &cwd))
                    .await
                    .map_err(GrowthError::internal)?;
            prompt::system_prompt(&skills_dir, &meta_text, skills)
        };
        let gate = SnapshotGate::new(skills_dir.clone(), self.versions.clone());
        let request = SubAgentRequest {
            system,
            prompt,
            cwd: caller.cwd.clone(),
            env: caller.env.clone(),
            caller: caller.session.clone(),
            policy: match mode {
                RunMode::Author => SubAgentPolicy::SkillAuthor { root: skills_dir },
                RunMode::ReadOnly | RunMode::Search => SubAgentPolicy::ReadOnly,
            },
            limits: RunnerLimits {
                max_iterations: max_iterations.min(SKILL_AGENT_MAX_ITERATIONS),
                // A search answers from the metadata in its prompt: offered no tool, it
                // cannot run one.
                offers_bash: mode != RunMode::Search,
                ..RunnerLimits::default()
            },
            gate: Some(GateHandle(Arc::new(gate.clone()))),
            workspace: None,
            sandbox: Some(match mode {
                RunMode::Author => author_sandbox(&self.skills_dir(), caller),
                RunMode::ReadOnly | RunMode::Search => SandboxSpec {
                    writable: Vec::new(),
                    read_only: true,
                    protected: Vec::new(),
                },
            }),
            context: self.context_of(caller).map(|context| RunMemory {
                context,
                // An enhancement's prompt carries the conversation, which the next one brings
                // again: its memory keeps that it ran, and its report.
                prompt_kept_as: (mode == RunMode::Author).then(|| ENHANCE_REMEMBERED.to_string()),
            }),
            model: None,
        };
        let outcome = subagents.run(request, cancel).await;
        let versions = tokio::task::spawn_blocking(move || gate.finish())
            .await
            .unwrap_or_default();
        // New or changed scripts and SKILL.md files go live now, not at the watcher's pace.
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.refresh()).await;
        Ok(SkillRun {
            outcome: outcome?,
            versions,
        })
    }
}

/// Where the skill sub-agent's shell may write: the user skills folder and the temp folders
/// (heredocs and `mktemp` need one). Enforced by the OS sandbox where it is available (Linux
/// Landlock); elsewhere only `write`/`edit` and output redirection are checked.
fn author_sandbox(skills_dir: &Path, caller: &Caller) -> SandboxSpec {
    let mut writable = vec![skills_dir.to_path_buf(), std::env::temp_dir()];
    writable.extend(caller.env.get("TMPDIR").map(PathBuf::from));
    writable.push(PathBuf::from("/dev/shm"));
    SandboxSpec {
        writable,
        read_only: false,
        protected: Vec::new(),
    }
}

impl SkillAgent {
    /// The folder of user skill `name` (versions exist only for user skills).
    pub fn user_skill_dir(&self, name: &str) -> Result<PathBuf, GrowthError> {
        synapse_shared::skill::validate_name(name).map_err(|e| GrowthError::InvalidName {
            name: name.to_string(),
            reason: e.to_string(),
        })?;
        Ok(self.skills_dir().join(name))
    }

    /// Restores a version of user skill `name` and refreshes the store.
    pub async fn rollback(
        &self,
        name: &str,
        version: Option<u32>,
    ) -> Result<(u32, PathBuf), GrowthError> {
        let dir = self.user_skill_dir(name)?;
        let versions = self.versions.clone();
        let (name, d) = (name.to_string(), dir.clone());
        let restored = tokio::task::spawn_blocking(move || versions.rollback(&name, &d, version))
            .await
            .map_err(GrowthError::internal)??;
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.refresh()).await;
        Ok((restored, dir))
    }
}
