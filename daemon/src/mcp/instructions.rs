//! Server `instructions` (from `initialize`) for the model: a system-prompt section with one
//! bounded block per connected server, so the model learns how each server wants to be used.
//! Only servers the manager serves (enabled, connected) contribute; the text is the server's,
//! capped per server and in total so one verbose server cannot crowd out the prompt.

use std::fmt::Write as _;

use super::McpManager;

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
}
