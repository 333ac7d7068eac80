//! What an installed plugin brings, read from its root: commands (`commands/**/*.md` →
//! `/<plugin>:<name>`), agents (`agents/*.md` → `task:<plugin>:<name>`), skills
//! (`skills/<folder>/SKILL.md`), hooks (`hooks/hooks.json`) and MCP servers (`.mcp.json`, else
//! `mcpServers` in `.claude-plugin/plugin.json`). A manifest or hooks file that does not parse is
//! a problem naming it.

use std::path::Path;

use serde_json::Value;
use synapse_shared::claude_plugins::{self, Plugin, read_json};

/// One plugin's parts, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offers {
    pub commands: Vec<String>,
    pub agents: Vec<String>,
    pub skills: Vec<String>,
    /// The hook events it registers (`PreToolUse`).
    pub hooks: Vec<String>,
    pub mcp_servers: Vec<String>,
    pub problems: Vec<String>,
}

/// What `plugin` offers.
pub fn of(plugin: &Plugin) -> Offers {
    let root = &plugin.root;
    let mut out = Offers::default();
    if let Err(why) = read_json(&root.join(".claude-plugin/plugin.json")) {
        out.problems.push(why);
    }
    let mut commands = Vec::new();
    md_names(&root.join("commands"), "", 4, &mut commands);
    out.commands = commands
        .into_iter()
        .map(|c| format!("/{}:{c}", plugin.name))
        .collect();
    let mut agents = Vec::new();
    md_names(&root.join("agents"), "", 0, &mut agents);
    out.agents = agents
        .into_iter()
        .map(|a| format!("task:{}:{a}", plugin.name))
        .collect();
    out.skills = sorted_dirs(&root.join("skills"))
        .into_iter()
        .filter(|d| root.join("skills").join(d).join("SKILL.md").is_file())
        .map(|d| format!("{}:{d}", plugin.name))
        .collect();
    match read_json(&root.join("hooks/hooks.json")) {
        Ok(Some(v)) => {
            out.hooks = v
                .get("hooks")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        }
        Ok(None) => {}
        Err(why) => out.problems.push(why),
    }
    match claude_plugins::mcp_servers(root) {
        Ok((_, servers)) => out.mcp_servers = servers.keys().cloned().collect(),
        Err(why) => out.problems.push(why),
    }
    out
}

fn md_names(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        if path.is_dir() && depth > 0 {
            md_names(&path, &format!("{prefix}{name}:"), depth - 1, out);
        } else if let Some(stem) = name.strip_suffix(".md")
            && path.is_file()
        {
            out.push(format!("{prefix}{stem}"));
        }
    }
}

fn sorted_dirs(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn lists_each_part_by_the_name_it_is_used_with() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().to_path_buf();
        for d in [
            "commands/sub",
            "agents",
            "skills/pdf",
            "hooks",
            ".claude-plugin",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("commands/go.md"), "x").unwrap();
        fs::write(root.join("commands/sub/deep.md"), "x").unwrap();
        fs::write(root.join("agents/helper.md"), "x").unwrap();
        fs::write(root.join("skills/pdf/SKILL.md"), "x").unwrap();
        fs::write(root.join("hooks/hooks.json"), r#"{"hooks":{"Stop":[]}}"#).unwrap();
        fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name":"p","mcpServers":{"inline":{"command":"x"}}}"#,
        )
        .unwrap();
        let plugin = Plugin {
            name: "p".into(),
            marketplace: "m".into(),
            version: "1".into(),
            root: root.clone(),
            data_dir: root.join("data"),
            enabled: true,
        };
        let o = of(&plugin);
        assert_eq!(o.commands, ["/p:go", "/p:sub:deep"]);
        assert_eq!(o.agents, ["task:p:helper"]);
        assert_eq!(o.skills, ["p:pdf"]);
        assert_eq!(o.hooks, ["Stop"]);
        assert_eq!(o.mcp_servers, ["inline"]);
        fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers":{"file":{"command":"y"}}}"#,
        )
        .unwrap();
        fs::write(root.join("hooks/hooks.json"), "{").unwrap();
        let o = of(&plugin);
        assert_eq!(o.mcp_servers, ["file"]);
        assert!(
            o.problems[0].contains("hooks.json is not valid JSON"),
            "{o:?}"
        );
    }
}
