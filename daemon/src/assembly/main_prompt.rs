//! The main agent's [`TurnPrompt`]: what a chat session is told. Its system prompt is fixed
//! when the session's first turn starts ([`MainPrompt::open`]) from what the session knows (its
//! folder, the agent commands' documentation, the project's instructions, the stable skills
//! listing, the MCP servers connected by then with their tool names, the repository's git facts
//! at that moment); the text itself is laid out by [`crate::agent::prompt`]. Each later turn's note
//! ([`MainSessionPrompt::turn_note`]) says what the prompt cannot: the skills that fit the new
//! message, what changed in git, and which MCP servers became ready or went away since the model
//! was last told.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::agent::prompt::{PromptEnv, PromptSections, system_prompt_with_sections};
use crate::agent::turn_prompt::{SessionPrompt, TurnPrompt};
use crate::skills::{SkillStore, awareness_budget};
use crate::workspace::SettingsHandle;
use crate::workspace::git::{GIT_PROBE_DEADLINE, GitFacts};
use synapse_mcp::McpHub;
use synapse_mcp::instructions::{ServerSummary, render_servers, server_entry};

/// One session's prompt source.
pub struct MainPrompt {
    pub cwd: PathBuf,
    /// The workspace (project root) the session is bound to.
    pub root: Option<PathBuf>,
    /// The session's id when it has MCP servers of its own (`--mcp-config`): they are listed
    /// first (and alone for a strict session).
    pub own_servers: Option<String>,
    pub commands_doc: Arc<str>,
    /// Sections fixed for the session, appended after the environment (the project's
    /// instruction files).
    pub session_sections: String,
    pub skills: Arc<SkillStore>,
    pub mcp: McpHub,
    pub settings: Arc<SettingsHandle>,
    /// The user's custom sub-agents, listed so the model delegates to them.
    pub custom: Option<Arc<crate::agent::custom::CustomCatalog>>,
}

/// A session's fixed prompt, and what its model was last told about the world around it.
pub struct MainSessionPrompt {
    system: String,
    cwd: PathBuf,
    root: Option<PathBuf>,
    own_servers: Option<String>,
    skills: Arc<SkillStore>,
    mcp: McpHub,
    /// Skills the system prompt lists in full.
    listed_skills: Vec<String>,
    told: Mutex<Told>,
}

/// The facts the model heard last (in the system prompt, then in turn notes).
#[derive(serde::Serialize, serde::Deserialize)]
struct Told {
    /// `None` for a session without an absolute folder (no probe).
    git: Option<GitFacts>,
    servers: Vec<ServerSummary>,
    /// The prompt was rendered for the turn starting now: nothing can have changed yet (and
    /// probing again would only delay the first request).
    #[serde(skip)]
    just_opened: bool,
}

impl TurnPrompt for MainPrompt {
    fn resume(&self, saved: &serde_json::Value) -> Option<Arc<dyn SessionPrompt>> {
        let saved: Saved = serde_json::from_value(saved.clone()).ok()?;
        Some(Arc::new(self.resumed(saved)))
    }

    fn open(&self) -> Arc<dyn SessionPrompt> {
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        let env = PromptEnv {
            cwd: &self.cwd,
            os: std::env::consts::OS,
            shell: "bash",
            date: &date,
            model: "",
        };
        let skills = self
            .skills
            .listing(&self.cwd, awareness_budget(&self.settings.current()));
        let servers = self
            .mcp
            .server_summaries(self.root.as_deref(), self.own_servers.as_deref());
        let memory_servers: Vec<String> = servers
            .iter()
            .filter(|s| s.memory)
            .map(|s| s.name.clone())
            .collect();
        let git = self
            .cwd
            .is_absolute()
            .then(|| GitFacts::probe(&self.cwd, GIT_PROBE_DEADLINE));
        let mut system = system_prompt_with_sections(
            &env,
            &self.commands_doc,
            &PromptSections {
                skills: &skills.text,
                servers: &render_servers(&servers),
                memory_servers: &memory_servers,
                git: &git.as_ref().map(GitFacts::prompt_lines).unwrap_or_default(),
            },
        );
        system.push_str(&self.session_sections);
        if let Some(custom) = &self.custom {
            let agents = custom.agents_section(&self.cwd);
            if !agents.is_empty() {
                system.push('\n');
                system.push_str(&agents);
            }
        }
        system.push_str(
            &self
                .mcp
                .instructions_section(self.root.as_deref(), self.own_servers.as_deref()),
        );
        Arc::new(MainSessionPrompt {
            system,
            cwd: self.cwd.clone(),
            root: self.root.clone(),
            own_servers: self.own_servers.clone(),
            skills: self.skills.clone(),
            mcp: self.mcp.clone(),
            listed_skills: skills.listed,
            told: Mutex::new(Told {
                git,
                servers,
                just_opened: true,
            }),
        })
    }
}

/// What the session log keeps of a [`MainSessionPrompt`].
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    system: String,
    listed_skills: Vec<String>,
    told: Told,
}

impl MainPrompt {
    fn resumed(&self, saved: Saved) -> MainSessionPrompt {
        MainSessionPrompt {
            system: saved.system,
            cwd: self.cwd.clone(),
            root: self.root.clone(),
            own_servers: self.own_servers.clone(),
            skills: self.skills.clone(),
            mcp: self.mcp.clone(),
            listed_skills: saved.listed_skills,
            told: Mutex::new(saved.told),
        }
    }
}

impl SessionPrompt for MainSessionPrompt {
    fn system(&self) -> &str {
        &self.system
    }

    fn saved(&self) -> Option<serde_json::Value> {
        let told = self.told.lock();
        serde_json::to_value(Saved {
            system: self.system.clone(),
            listed_skills: self.listed_skills.clone(),
            told: Told {
                git: told.git.clone(),
                servers: told.servers.clone(),
                just_opened: false,
            },
        })
        .ok()
    }

    fn turn_note(&self, message: &str) -> String {
        let mut parts: Vec<String> = Vec::new();
        let fits = self.skills.fitting(&self.cwd, message, &self.listed_skills);
        if !fits.is_empty() {
            parts.push(format!(
                "Skills that fit this message (`skill load <name>` before following one):\n{fits}"
            ));
        }
        let mut told = self.told.lock();
        if std::mem::take(&mut told.just_opened) {
            return parts.join("\n");
        }
        if let Some(before) = &told.git {
            let now = GitFacts::probe(&self.cwd, GIT_PROBE_DEADLINE);
            if let Some(changes) = now.changes_since(before) {
                parts.push(changes);
                told.git = Some(now);
            }
        }
        let servers = self
            .mcp
            .server_summaries(self.root.as_deref(), self.own_servers.as_deref());
        if let Some(changes) = server_changes(&told.servers, &servers) {
            parts.push(changes);
            told.servers = servers;
        }
        parts.join("\n")
    }
}

/// What changed between the servers the model was told of and those there are `now`: servers
/// that became ready (with their commands) and servers gone; `None` when nothing did.
fn server_changes(told: &[ServerSummary], now: &[ServerSummary]) -> Option<String> {
    let ready: Vec<&ServerSummary> = now
        .iter()
        .filter(|s| s.tool_count.is_some())
        .filter(|s| !told.iter().any(|t| t == *s))
        .collect();
    let gone: Vec<String> = told
        .iter()
        .filter(|t| !now.iter().any(|s| s.name == t.name))
        .map(|t| format!("`{}`", t.name))
        .collect();
    if ready.is_empty() && gone.is_empty() {
        return None;
    }
    let mut out = String::new();
    if !ready.is_empty() {
        out.push_str("MCP servers ready since the session began (their commands work now):\n");
        for s in ready {
            out.push_str(&server_entry(s));
        }
    }
    if !gone.is_empty() {
        out.push_str(&format!(
            "MCP servers no longer connected: {} (their `mcp:<server>:*` commands fail until \
             they reconnect).\n",
            gone.join(", ")
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_turn_sections_land_in_their_places() {
        let env = PromptEnv {
            cwd: Path::new("/w/p"),
            os: "linux",
            shell: "bash",
            date: "2026-11-22",
            model: "",
        };
        let memory = vec!["memory".to_string()];
        let text = system_prompt_with_sections(
            &env,
            "## Agent shell commands\n",
            &PromptSections {
                skills: "# Available skills\n\n- pdf: PDFs.\n",
                servers: "# Connected MCP servers\n\n- memory (9 tools)\n",
                memory_servers: &memory,
                git: "- Git repository: yes (branch main)\n",
            },
        );
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle} missing in {text}"))
        };
        assert!(at("# Skills") < at("# Available skills"));
        assert!(at("# Available skills") < at("# Memory"));
        assert!(at("A memory MCP server is connected (`memory`)") > at("# Memory"));
        assert!(at("# Connected MCP servers") < at("# Environment"));
        assert!(
            text.ends_with("- Git repository: yes (branch main)\n"),
            "{text}"
        );
    }

    fn server(name: &str, tools: Option<u32>) -> ServerSummary {
        ServerSummary {
            name: name.into(),
            tool_count: tools,
            about: String::new(),
            memory: false,
            tools: (0..tools.unwrap_or(0))
                .map(|i| format!("mcp:{name}:t{i}"))
                .collect(),
        }
    }

    #[test]
    fn servers_that_became_ready_or_went_away_are_noted_once() {
        let told = vec![server("memory", Some(2)), server("slow", None)];
        assert_eq!(server_changes(&told, &told), None);
        let now = vec![server("slow", Some(1))];
        assert_eq!(
            server_changes(&told, &now).unwrap(),
            "MCP servers ready since the session began (their commands work now):\n\
             - slow (1 tool)\n  commands: `mcp:slow:t0`\n\
             MCP servers no longer connected: `memory` (their `mcp:<server>:*` commands fail \
             until they reconnect).\n"
        );
        assert_eq!(server_changes(&now, &now), None);
    }
}
