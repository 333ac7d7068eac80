//! Self-growth: the skill sub-agent and what it does for the main agent.
//!
//! [`SkillAgent`] runs a sub-agent (an `AgentRunner` in silent mode, policy `SkillAuthor`) with
//! the prompt of [`prompt`]: role, tools, the full [`meta`] skills, skill metadata. It serves
//! [`search`] (semantic match, BM25 prefilter and fallback from [`rank`]), [`enhance`] (create
//! or improve a skill from the end of a session; also the stop hook after each turn) and
//! [`evaluate`]. Before its first write into an existing skill, [`versions`] snapshots it.
//! [`commands`] exposes `task:skill:search` / `task:skill:enhance` to the agent.

pub mod commands;
pub mod enhance;
pub mod evaluate;
pub mod meta;
pub mod prompt;
pub mod rank;
pub mod search;
pub mod versions;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::agent::runner::{RunnerLimits, TurnOutcome};
use crate::agent::subagent::{SubAgentPolicy, SubAgentRequest, SubAgents};
use crate::skills::{SkillStore, SkillSummary};
use synapse_shared::skill::SkillKind;

/// Model calls one skill sub-agent run may make.
const SKILL_AGENT_MAX_ITERATIONS: u32 = 30;

/// The skill sub-agent and what it needs.
pub struct SkillAgent {
    pub store: Arc<SkillStore>,
    pub subagents: Arc<OnceLock<SubAgents>>,
    pub commands_doc: Arc<OnceLock<String>>,
    /// Where the meta skills are installed and read.
    pub meta_dir: PathBuf,
    pub versions: versions::Versions,
}

impl SkillAgent {
    /// The user skills folder: the only place the sub-agent may write.
    pub fn skills_dir(&self) -> PathBuf {
        self.store.paths().skills_dir.clone()
    }

    /// Visible regular skills (meta skills steer the sub-agent; they are not search results).
    pub fn regular_skills(&self) -> Vec<SkillSummary> {
        self.store
            .list()
            .into_iter()
            .filter(|s| s.enabled && s.kind != SkillKind::Meta)
            .collect()
    }

    /// Runs the sub-agent on `prompt` with `skills` as the metadata it sees.
    pub async fn run(
        &self,
        prompt: String,
        skills: &[SkillSummary],
        max_iterations: u32,
        cwd: &Path,
        env: HashMap<String, String>,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, String> {
        let subagents = self
            .subagents
            .get()
            .ok_or("the skill sub-agent is not available yet (daemon starting)")?;
        let skills_dir = self.skills_dir();
        let meta_dir = self.meta_dir.clone();
        let meta_text = tokio::task::spawn_blocking(move || meta::contents(&meta_dir))
            .await
            .map_err(|e| e.to_string())?;
        let doc = self.commands_doc.get().map(String::as_str).unwrap_or("");
        let system = prompt::system_prompt(&skills_dir, doc, &meta_text, skills);
        let snapshotted: Arc<Mutex<HashSet<String>>> = Arc::default();
        let versions = self.versions.clone();
        let root = skills_dir.clone();
        let on_write: crate::agent::subagent::WriteHook = Arc::new(move |target: &Path| {
            snapshot_before_write(&versions, &root, target, &snapshotted);
        });
        let request = SubAgentRequest {
            system,
            prompt,
            cwd: cwd.to_path_buf(),
            env,
            policy: SubAgentPolicy::SkillAuthor { root: skills_dir },
            limits: RunnerLimits {
                max_iterations: max_iterations.min(SKILL_AGENT_MAX_ITERATIONS),
                ..RunnerLimits::default()
            },
            on_write: Some(on_write),
            gate: None,
            sandbox: None,
        };
        let outcome = subagents.run(request, cancel).await;
        // New or changed scripts and SKILL.md files go live now, not at the watcher's pace.
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.refresh()).await;
        outcome
    }
}

/// Saves a skill folder once per run, before the sub-agent's first write into it.
fn snapshot_before_write(
    versions: &versions::Versions,
    root: &Path,
    target: &Path,
    done: &Mutex<HashSet<String>>,
) {
    let Ok(rel) = target.strip_prefix(root) else {
        return;
    };
    let Some(name) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
        return;
    };
    let dir = root.join(name);
    if !dir.join("SKILL.md").is_file() {
        return;
    }
    let Ok(mut done) = done.lock() else { return };
    if done.insert(name.to_string())
        && let Err(e) = versions.snapshot(name, &dir, "before an automatic change")
    {
        tracing::error!("cannot save a version of skill {name}: {e}");
    }
}

impl SkillAgent {
    /// The folder of user skill `name` (versions exist only for user skills).
    pub fn user_skill_dir(&self, name: &str) -> Result<PathBuf, String> {
        synapse_shared::skill::validate_name(name).map_err(|e| format!("{name:?}: {e}"))?;
        Ok(self.skills_dir().join(name))
    }

    /// Restores a version of user skill `name` and refreshes the store.
    pub async fn rollback(
        &self,
        name: &str,
        version: Option<u32>,
    ) -> Result<(u32, PathBuf), String> {
        let dir = self.user_skill_dir(name)?;
        let versions = self.versions.clone();
        let (name, d) = (name.to_string(), dir.clone());
        let restored = tokio::task::spawn_blocking(move || versions.rollback(&name, &d, version))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.refresh()).await;
        Ok((restored, dir))
    }
}
