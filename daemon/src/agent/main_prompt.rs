//! The main agent's [`TurnPrompt`]: what a chat session is told, assembled at each turn's start
//! from what the session knows (its folder, the agent commands' documentation, the project's
//! instructions) and what the turn brings (the skills ranked against the user's words, the MCP
//! servers connected by now, the repository's git facts). The text itself is laid out by
//! [`super::prompt`].

use std::path::PathBuf;
use std::sync::Arc;

use super::prompt::{PromptEnv, PromptSections, system_prompt_with_sections};
use super::turn_prompt::{PromptTurn, TurnPrompt};
use crate::skills::{SkillStore, TaskWords, awareness_budget};
use crate::workspace::SettingsHandle;
use crate::workspace::git::{GIT_PROBE_DEADLINE, GitFacts};
use synapse_mcp::McpHub;
use synapse_mcp::instructions::render_servers;

/// One session's prompt source.
pub struct MainPrompt {
    pub cwd: PathBuf,
    /// The workspace (project root) the session is bound to.
    pub root: Option<PathBuf>,
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

impl TurnPrompt for MainPrompt {
    fn render(&self, turn: &PromptTurn<'_>) -> String {
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        let env = PromptEnv {
            cwd: &self.cwd,
            os: std::env::consts::OS,
            shell: "bash",
            date: &date,
            model: "",
        };
        let skills = self.skills.awareness_section(
            &self.cwd,
            awareness_budget(&self.settings.current()),
            TaskWords {
                now: turn.now,
                earlier: turn.earlier,
            },
        );
        let servers = self.mcp.server_summaries(self.root.as_deref());
        let memory_servers: Vec<String> = servers
            .iter()
            .filter(|s| s.memory)
            .map(|s| s.name.clone())
            .collect();
        let git = if self.cwd.is_absolute() {
            GitFacts::probe(&self.cwd, GIT_PROBE_DEADLINE).prompt_lines()
        } else {
            String::new()
        };
        let mut out = system_prompt_with_sections(
            &env,
            &self.commands_doc,
            &PromptSections {
                skills: &skills,
                servers: &render_servers(&servers),
                memory_servers: &memory_servers,
                git: &git,
            },
        );
        out.push_str(&self.session_sections);
        if let Some(custom) = &self.custom {
            let agents = custom.agents_section(&self.cwd);
            if !agents.is_empty() {
                out.push('\n');
                out.push_str(&agents);
            }
        }
        out.push_str(&self.mcp.instructions_section(self.root.as_deref()));
        out
    }
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
}
