//! Server `instructions` (from `initialize`) for the model: a system-prompt section with one
//! bounded block per connected server, so the model learns how each server wants to be used.
//! Only servers the manager serves (enabled, connected) contribute; the text is the server's,
//! capped per server and in total so one verbose server cannot crowd out the prompt.
//!
//! Before those blocks, `# Connected MCP servers` names every server a session can use (ready or
//! still connecting): its tool count, the first line of its instructions or its description, and
//! its `mcp:<server>:<tool>` commands by name, so the model can run `<command> -h` at once instead
//! of a `tools search` first. A server with many tools gets its first [`TOOLS_LISTED_PER_SERVER`]
//! names, the count of the rest and the `tools search <server>` that lists them. A server that
//! keeps memory (named so, or with a `create_entities` / `*memory*` tool) is flagged, so the
//! prompt's Memory section can point at it.

use std::fmt::Write as _;

use super::McpManager;
use super::server::StateKind;

/// Longest instructions text kept for one server.
pub const INSTRUCTIONS_PER_SERVER_CHARS: usize = 2_000;
/// Longest the whole section's server texts may be together.
pub const INSTRUCTIONS_TOTAL_CHARS: usize = 8_000;

impl McpManager {
    /// `(server, instructions)` of every connected server that sent any, by server name.
    pub fn server_instructions(&self) -> Vec<(String, String)> {
        let servers = self.inner.servers.read().clone();
        servers
            .into_iter()
            .filter_map(|(name, server)| {
                let text = server.ready()?.instructions()?;
                let text = text.trim();
                (!text.is_empty()).then(|| (name, text.to_string()))
            })
            .collect()
    }

    /// The system-prompt section for [`Self::server_instructions`]; empty when none.
    pub fn instructions_section(&self) -> String {
        render_section(&self.server_instructions())
    }
}

/// Longest description of a server in its line, in characters.
const SERVER_ABOUT_MAX_CHARS: usize = 160;
/// Tool commands named per server; a server with more lists these and counts the rest.
pub const TOOLS_LISTED_PER_SERVER: usize = 12;

/// One server a session can use, for its line in the prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerSummary {
    pub name: String,
    /// `None` while it is still connecting.
    pub tool_count: Option<u32>,
    /// The first line of its instructions, else its description; may be empty.
    pub about: String,
    /// Whether it looks like a memory store.
    pub memory: bool,
    /// Its `mcp:<server>:<tool>` commands, in the server's order (empty while connecting).
    pub tools: Vec<String>,
}

impl McpManager {
    /// Every enabled server that is connected or connecting, by name.
    pub fn server_summaries(&self) -> Vec<ServerSummary> {
        let servers = self.inner.servers.read().clone();
        let listed = self.list();
        let mut out = Vec::new();
        for status in listed {
            let connecting = match status.state {
                StateKind::Ready => false,
                StateKind::Connecting => true,
                _ => continue,
            };
            let connection = servers.get(&status.name).and_then(|s| s.ready());
            let about = connection
                .as_ref()
                .and_then(|c| {
                    let first = c.instructions().and_then(|t| {
                        t.lines()
                            .map(str::trim)
                            .find(|l| !l.is_empty())
                            .map(str::to_string)
                    });
                    first.or_else(|| c.description())
                })
                .unwrap_or_default();
            let memory = is_memory_server(
                &status.name,
                status.tools.iter().map(|t| t.command.as_str()),
            );
            out.push(ServerSummary {
                tool_count: (!connecting).then_some(status.tool_count),
                about: one_line(&about, SERVER_ABOUT_MAX_CHARS),
                memory,
                tools: status.tools.into_iter().map(|t| t.command).collect(),
                name: status.name,
            });
        }
        out
    }
}

/// A memory store: named so, or offering a knowledge-graph or memory tool.
pub fn is_memory_server<'a>(name: &str, mut commands: impl Iterator<Item = &'a str>) -> bool {
    name.to_lowercase().contains("memory")
        || commands.any(|c| {
            let tool = c.rsplit(':').next().unwrap_or(c).to_lowercase();
            tool == "create_entities" || tool.contains("memory") || tool.contains("memories")
        })
}

fn one_line(text: &str, max_chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        return flat;
    }
    let kept: String = flat.chars().take(max_chars - 1).collect();
    format!("{}…", kept.trim_end())
}

/// `# Connected MCP servers`, one entry each; empty when none.
pub fn render_servers(servers: &[ServerSummary]) -> String {
    if servers.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Connected MCP servers\n\nTheir tools are `mcp:<server>:<tool>` commands: run \
         `<command> -h` before the first call.\n",
    );
    for s in servers {
        out.push_str(&server_entry(s));
    }
    out
}

/// One server's line and, when it is ready, the line naming its commands (bounded).
pub fn server_entry(s: &ServerSummary) -> String {
    let tools = match s.tool_count {
        Some(1) => "1 tool".to_string(),
        Some(n) => format!("{n} tools"),
        None => "connecting".to_string(),
    };
    let about = if s.about.is_empty() {
        String::new()
    } else {
        format!(" — {}", s.about)
    };
    let mut out = format!("- {} ({tools}){about}\n", s.name);
    if s.tool_count.is_none() {
        let _ = writeln!(
            out,
            "  its commands: `tools search {}` once it is ready",
            s.name
        );
        return out;
    }
    let named: Vec<String> = s
        .tools
        .iter()
        .take(TOOLS_LISTED_PER_SERVER)
        .map(|c| format!("`{c}`"))
        .collect();
    let total = s.tools.len().max(s.tool_count.unwrap_or(0) as usize);
    if named.is_empty() {
        if total > 0 {
            let _ = writeln!(out, "  its commands: `tools search {}`", s.name);
        }
        return out;
    }
    let _ = write!(out, "  commands: {}", named.join(", "));
    if total > named.len() {
        let _ = write!(
            out,
            " and {} more (`tools search {}` lists them all)",
            total - named.len(),
            s.name
        );
    }
    out.push('\n');
    out
}

/// `# MCP server instructions` with one `## mcp:<server>:*` block each, within the bounds.
pub fn render_section(items: &[(String, String)]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n# MCP server instructions\n\nWhat each MCP server says about using its `mcp:<server>:*` \
         commands (the server's words, not the user's):\n",
    );
    let mut budget = INSTRUCTIONS_TOTAL_CHARS;
    for (server, text) in items {
        if budget == 0 {
            let _ = writeln!(
                out,
                "\n## mcp:{server}:*\n[instructions omitted: prompt budget used]"
            );
            continue;
        }
        let cap = INSTRUCTIONS_PER_SERVER_CHARS.min(budget);
        let kept: String = text.chars().take(cap).collect();
        budget -= kept.chars().count();
        let _ = writeln!(out, "\n## mcp:{server}:*\n{kept}");
        if kept.len() < text.len() {
            let _ = writeln!(out, "[… instructions cut at {cap} characters]");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_is_bounded_and_the_total_too() {
        let long = "x".repeat(INSTRUCTIONS_PER_SERVER_CHARS + 50);
        let items: Vec<(String, String)> =
            (0..6).map(|i| (format!("s{i}"), long.clone())).collect();
        let section = render_section(&items);
        assert!(section.contains("## mcp:s0:*\n"));
        assert!(section.contains("instructions cut at 2000 characters"));
        assert!(section.contains("## mcp:s5:*\n[instructions omitted"));
        assert!(
            section.len() < INSTRUCTIONS_TOTAL_CHARS + 2_000,
            "{}",
            section.len()
        );
        assert_eq!(render_section(&[]), "");
    }

    #[test]
    fn memory_servers_and_server_lines() {
        assert!(is_memory_server("memory", std::iter::empty()));
        assert!(is_memory_server(
            "kg",
            ["mcp:kg:create_entities", "mcp:kg:read_graph"].into_iter()
        ));
        assert!(!is_memory_server(
            "files",
            ["mcp:files:read_file"].into_iter()
        ));
        let text = render_servers(&[
            ServerSummary {
                name: "memory".into(),
                tool_count: Some(2),
                about: "Knowledge graph.".into(),
                memory: true,
                tools: vec![
                    "mcp:memory:create_entities".into(),
                    "mcp:memory:read_graph".into(),
                ],
            },
            ServerSummary {
                name: "slow".into(),
                tool_count: None,
                about: String::new(),
                memory: false,
                tools: Vec::new(),
            },
        ]);
        assert!(
            text.contains(
                "- memory (2 tools) — Knowledge graph.\n  commands: \
                 `mcp:memory:create_entities`, `mcp:memory:read_graph`\n"
            ),
            "{text}"
        );
        assert!(!text.contains("tools search memory"), "{text}");
        assert!(
            text.contains(
                "- slow (connecting)\n  its commands: `tools search slow` once it is ready\n"
            ),
            "{text}"
        );
        assert_eq!(render_servers(&[]), "");
    }

    #[test]
    fn a_server_with_many_tools_names_some_and_counts_the_rest() {
        let tools: Vec<String> = (0..40).map(|i| format!("mcp:big:tool_{i:02}")).collect();
        let text = server_entry(&ServerSummary {
            name: "big".into(),
            tool_count: Some(40),
            about: String::new(),
            memory: false,
            tools,
        });
        assert_eq!(
            text.matches("`mcp:big:tool_").count(),
            TOOLS_LISTED_PER_SERVER,
            "{text}"
        );
        assert!(text.contains("`mcp:big:tool_11`"), "{text}");
        assert!(!text.contains("tool_12"), "{text}");
        assert!(
            text.ends_with(" and 28 more (`tools search big` lists them all)\n"),
            "{text}"
        );
    }
}
