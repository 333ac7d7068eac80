//! One custom sub-agent (Claude Code's `agents/<name>.md`): `name` (else the file's name),
//! `description` (what the main agent reads to decide when to delegate), `tools` (omitted: every
//! tool the caller has), `model`, and its body, which is the sub-agent's system prompt.

use std::path::PathBuf;

use super::files::{Found, Scope};
use super::frontmatter;
use super::tools::ToolGrant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomAgent {
    pub name: String,
    pub description: String,
    /// `None`: no `tools` field, so the agent has the tools `task:general` has.
    pub tools: Option<ToolGrant>,
    pub model: Option<String>,
    /// Its system prompt.
    pub prompt: String,
    pub path: PathBuf,
    pub scope: Scope,
}

/// Whether `name` can be an agent's name (it becomes the command `task:<name>`); a plugin's
/// agent is `<plugin>:<agent>`, each part a name.
pub fn check_name(name: &str) -> Result<(), String> {
    if let Some((plugin, agent)) = name.split_once(':') {
        return check_name(plugin)
            .and_then(|()| check_name(agent))
            .map_err(|_| format!("`{name}` cannot be a plugin agent's name (<plugin>:<agent>, each letters, digits, `-` and `_`)"));
    }
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` cannot be an agent name (letters, digits, `-` and `_`, starting with a \
             letter or digit, at most 64 characters)"
        ))
    }
}

impl CustomAgent {
    /// Reads a found file; `Err` is the problem to report (file and line).
    pub fn from_found(found: &Found) -> Result<Self, String> {
        let parsed = frontmatter::parse(&found.path, &found.text)?;
        let stem = found
            .rel
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = parsed.text("name").unwrap_or(stem);
        // Claude Code names a plugin's agents `<plugin>:<agent>`.
        let name = match (found.scope, found.rel.components().next()) {
            (Scope::Plugin, Some(plugin)) => {
                format!("{}:{name}", plugin.as_os_str().to_string_lossy())
            }
            _ => name,
        };
        check_name(&name).map_err(|e| format!("{}: {e}", found.path.display()))?;
        let prompt = parsed.body.trim().to_string();
        if prompt.is_empty() {
            return Err(format!(
                "{}: the body is empty; it is the agent's system prompt, so write what the agent \
                 is and how it works below the frontmatter",
                found.path.display()
            ));
        }
        let description = parsed
            .text("description")
            .unwrap_or_else(|| format!("The custom agent `{name}` (its file has no description)."));
        Ok(Self {
            name,
            description,
            tools: parsed.list("tools").map(|list| ToolGrant::parse(&list)),
            model: parsed.text("model"),
            prompt,
            path: found.path.clone(),
            scope: found.scope,
        })
    }

    /// `tools` as a short list, for help and listings.
    pub fn tools_text(&self) -> String {
        match &self.tools {
            None => "all (no `tools` field)".into(),
            Some(grant) => grant.describe(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Found {
        Found {
            path: PathBuf::from("/h/.claude/agents/reviewer.md"),
            rel: PathBuf::from("reviewer.md"),
            scope: Scope::User,
            text: text.into(),
        }
    }

    #[test]
    fn fields_and_defaults() {
        let a = CustomAgent::from_found(&found(
            "---\nname: code-reviewer\ndescription: Reviews diffs.\ntools: Read, Grep, Glob\nmodel: inherit\n---\nYou review code.\n",
        ))
        .unwrap();
        assert_eq!(a.name, "code-reviewer");
        assert!(a.tools.as_ref().unwrap().read_only());
        assert_eq!(a.prompt, "You review code.");
        let bare = CustomAgent::from_found(&found("You review code.\n")).unwrap();
        assert_eq!(bare.name, "reviewer");
        assert_eq!(bare.tools, None);
        assert!(CustomAgent::from_found(&found("---\nname: a b\n---\nx\n")).is_err());
        assert!(CustomAgent::from_found(&found("---\nname: ok\n---\n\n")).is_err());
    }
}
