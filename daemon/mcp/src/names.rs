//! Command names for MCP tools: `mcp:<server>:<tool>`, where both parts keep only a safe charset
//! (`A-Z a-z 0-9 _ . -`) so the name is one shell word and one file name. Other characters become
//! `_`; when two tools map to the same name, later ones (in server, tool order) get `_2`, `_3`….
//! The resulting [`CommandMap`] is what lets a command be resolved back to the real server and
//! tool names.

use std::collections::{BTreeMap, HashSet};

/// The prefix of every MCP command.
pub const COMMAND_PREFIX: &str = "mcp:";

/// Replaces characters outside the safe charset with `_`; an empty result becomes `_`.
pub fn safe_part(raw: &str) -> String {
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A leading '-' or '.' would make a file name look like an option or a hidden file.
    match s.chars().next() {
        None => "_".to_string(),
        Some('-' | '.') => format!("_{s}"),
        Some(_) => s,
    }
}

/// The name `server`'s `tool` gets when no other tool's name takes it first.
pub fn base_command(server: &str, tool: &str) -> String {
    format!("{COMMAND_PREFIX}{}:{}", safe_part(server), safe_part(tool))
}

/// Where a command leads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

/// Command name ↔ (server, tool) for every exposed tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandMap {
    by_command: BTreeMap<String, ToolRef>,
    by_ref: BTreeMap<ToolRef, String>,
}

impl CommandMap {
    /// Names every tool; `tools` must be sorted for the naming to be stable across refreshes.
    pub fn build<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> CommandMap {
        let mut map = CommandMap::default();
        let mut taken: HashSet<String> = HashSet::new();
        let mut sorted: Vec<(&str, &str)> = tools.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        // Tools whose names are already safe keep them; only mapped names get suffixes.
        let is_safe = |(s, t): &(&str, &str)| safe_part(s) == *s && safe_part(t) == *t;
        let (safe, mapped): (Vec<_>, Vec<_>) = sorted.into_iter().partition(is_safe);
        for (server, tool) in safe.into_iter().chain(mapped) {
            let base = base_command(server, tool);
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            let r = ToolRef {
                server: server.to_string(),
                tool: tool.to_string(),
            };
            map.by_ref.insert(r.clone(), name.clone());
            map.by_command.insert(name, r);
        }
        map
    }

    /// The tool behind a command name.
    pub fn resolve(&self, command: &str) -> Option<&ToolRef> {
        self.by_command.get(command)
    }

    /// The command name of a tool.
    pub fn command(&self, server: &str, tool: &str) -> Option<&str> {
        self.by_ref
            .get(&ToolRef {
                server: server.to_string(),
                tool: tool.to_string(),
            })
            .map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &ToolRef)> {
        self.by_command.iter()
    }

    pub fn len(&self) -> usize {
        self.by_command.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_command.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names_and_collisions() {
        assert_eq!(safe_part("read_text_file"), "read_text_file");
        assert_eq!(safe_part("a b/c$(x)"), "a_b_c__x_");
        assert_eq!(safe_part("-rf"), "_-rf");
        assert_eq!(safe_part(""), "_");
        let map = CommandMap::build([("s", "a b"), ("s", "a_b"), ("s", "a/b"), ("s", "ok")]);
        assert_eq!(map.command("s", "a_b"), Some("mcp:s:a_b"));
        assert_eq!(map.command("s", "a b"), Some("mcp:s:a_b_2"));
        assert_eq!(map.command("s", "a/b"), Some("mcp:s:a_b_3"));
        assert_eq!(
            map.resolve("mcp:s:a_b_3"),
            Some(&ToolRef {
                server: "s".into(),
                tool: "a/b".into()
            })
        );
        assert_eq!(map.len(), 4);
    }
}
