//! `/tools` and `/skill list`: what the agent can run besides its built-in commands — every
//! `mcp:<server>:<tool>` command (from the MCP service) and `skill:<skill>:<script>` command and
//! skill (from the skills service), optionally filtered by a word.

use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::{ListSkillsRequest, McpListRequest, McpServerState, SkillInfo};

use super::Repl;
use crate::render::theme::Theme;

impl Repl {
    pub(super) async fn tools(&mut self, query: Option<String>) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let servers = McpClient::new(self.link.channel().clone())
            .list(McpListRequest {
                include_tools: true,
                cwd: crate::cli::mcp::caller_cwd(),
                env: crate::cli::mcp::caller_env(),
                session: String::new(),
            })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner()
            .servers;
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for server in &servers {
            match McpServerState::try_from(server.state) {
                Ok(McpServerState::Failed) => notes.push(format!(
                    "MCP server {} is not available: {}",
                    server.name, server.reason
                )),
                Ok(McpServerState::NeedsLogin) => notes.push(format!(
                    "MCP server {} needs login: {}",
                    server.name, server.reason
                )),
                Ok(McpServerState::Connecting) => {
                    notes.push(format!("MCP server {} is still connecting", server.name));
                }
                _ => {}
            }
            rows.extend(
                server
                    .tools
                    .iter()
                    .map(|t| (t.command.clone(), t.description.clone())),
            );
        }
        for skill in self.list_skills().await? {
            rows.extend(
                skill
                    .commands
                    .iter()
                    .map(|c| (c.clone(), skill.description.clone())),
            );
        }
        let (cols, _) = termimad::terminal_size();
        let columns = if cols == 0 { 100 } else { usize::from(cols) };
        let text = tool_table(&self.theme, rows, query.as_deref(), &notes, columns);
        self.say(&text);
        Ok(())
    }

    pub(super) async fn skill_list(&mut self) -> anyhow::Result<()> {
        let skills = self.list_skills().await?;
        let (cols, _) = termimad::terminal_size();
        let columns = if cols == 0 { 100 } else { usize::from(cols) };
        self.say(&skill_table(&skills, columns));
        Ok(())
    }

    pub(super) async fn list_skills(&mut self) -> anyhow::Result<Vec<SkillInfo>> {
        self.ensure_link().await?;
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        Ok(SkillsClient::new(self.link.channel().clone())
            .list(ListSkillsRequest { cwd })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner()
            .skills)
    }
}

/// One line per skill: name, source, state, description (cut to fit `columns`).
pub fn skill_table(skills: &[SkillInfo], columns: usize) -> String {
    if skills.is_empty() {
        return "No skills yet. Skills are folders with a SKILL.md in ~/.synapse/skills (or the \
                project's .synapse/skills); `synapse skill create` makes one.\n"
            .to_string();
    }
    let width = skills
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut out = String::new();
    for s in skills {
        if !s.error.is_empty() {
            out.push_str(&format!("{:<width$}  (broken)  {}\n", s.name, s.error));
            continue;
        }
        let mut tags = vec![s.source.clone()];
        if !s.enabled {
            tags.push("disabled".into());
        }
        if s.permission == "ask" {
            tags.push("asks".into());
        }
        let tags = tags.join(", ");
        let room = columns.saturating_sub(width + tags.len() + 6).max(20);
        let description: String = s.description.chars().take(room).collect();
        out.push_str(&format!("{:<width$}  ({tags})  {description}\n", s.name));
    }
    out.push_str(&format!(
        "{} skill(s). `skill load <name>` is how the agent reads one.\n",
        skills.len()
    ));
    out
}

/// Commands and descriptions, filtered by `query` (case-insensitive), sorted, with notes;
/// descriptions are cut to fit `columns`.
pub fn tool_table(
    theme: &Theme,
    mut rows: Vec<(String, String)>,
    query: Option<&str>,
    notes: &[String],
    columns: usize,
) -> String {
    if let Some(q) = query {
        let q = q.to_lowercase();
        rows.retain(|(c, d)| c.to_lowercase().contains(&q) || d.to_lowercase().contains(&q));
    }
    rows.sort();
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(match query {
            Some(_) => "No mcp:* or skill:* command matches.\n",
            None => "No mcp:* or skill:* commands yet: add MCP servers (mcp_servers.json) or skills with scripts.\n",
        });
    } else {
        let width = rows.iter().map(|(c, _)| c.len()).max().unwrap_or(0).min(48);
        let room = columns.saturating_sub(width + 5).max(20);
        for (command, description) in &rows {
            let padded = format!("{command:<width$}");
            out.push_str(&format!(
                "  {}  {}\n",
                theme.bold(&padded),
                theme.dim(&cut(description, room))
            ));
        }
        out.push_str(&theme.dim(&format!(
            "{} command(s); each answers -h and --help.\n",
            rows.len()
        )));
    }
    for note in notes {
        out.push_str(&theme.yellow(&format!("{note}\n")));
    }
    out
}

/// The first line of `text`, cut to `columns`.
fn cut(text: &str, columns: usize) -> String {
    crate::render::width::fit(text.lines().next().unwrap_or_default(), columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_sorts() {
        let rows = vec![
            ("mcp:fs:write_file".to_string(), "Write a file".to_string()),
            ("mcp:fs:read_file".to_string(), "Read a file".to_string()),
            (
                "skill:pdf:extract".to_string(),
                "Extract text from PDFs".to_string(),
            ),
        ];
        let all = tool_table(&Theme::plain(), rows.clone(), None, &[], 80);
        insta::assert_snapshot!(all);
        let some = tool_table(
            &Theme::plain(),
            rows,
            Some("PDF"),
            &["MCP server x is not available: gone".into()],
            80,
        );
        let long = vec![("mcp:a:b".to_string(), "x".repeat(200))];
        let narrow = tool_table(&Theme::plain(), long, None, &[], 60);
        assert!(narrow.lines().all(|l| l.chars().count() <= 60), "{narrow}");
        assert!(
            some.contains("skill:pdf:extract") && !some.contains("mcp:fs"),
            "{some}"
        );
        assert!(some.contains("not available: gone"), "{some}");
    }
}
