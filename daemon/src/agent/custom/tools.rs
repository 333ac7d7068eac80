//! Claude Code tool names (a custom agent's `tools`, a custom command's `allowed-tools`) mapped
//! onto what Synapse runs: [`ToolGrant`] says which agent commands and which command lines a
//! custom sub-agent may run, for its [`crate::agent::gate::subagent_policy::PolicyGate`].
//!
//! | listed | allows |
//! | --- | --- |
//! | `Read`, `LS` / `Grep` / `Glob` | `read` / `search` / `glob` |
//! | `Write` / `Edit`, `MultiEdit`, `NotebookEdit` | `write` / `edit` |
//! | `Bash` | native command lines (and `bash`, `job`) |
//! | `Bash(git diff:*)` | only lines whose every command matches one such pattern |
//! | `WebFetch` / `WebSearch` / `TodoWrite` | `web_fetch` / `web_search` / `todo` |
//! | `mcp__srv__tool` / `mcp__srv` | `mcp:srv:tool` / every `mcp:srv:*` tool |
//!
//! Other agent commands (`skill`, `skill:load`, `tools`) run when what they do only reads. An
//! agent with neither `Bash` nor a write tool is read-only: its gate and OS sandbox are the
//! read-only ones `task:explore` gets. Unknown names are kept, to be shown as ignored.

use synapse_permissions::{Effect, Pattern, SimpleCommand};

/// What `Bash` entries allow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BashGrant {
    #[default]
    None,
    /// `Bash`, `Bash(*)`: any line.
    All,
    /// `Bash(pattern)`: lines whose every command matches one of these.
    Patterns(Vec<String>),
}

/// A custom agent's tools, mapped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolGrant {
    pub bash: BashGrant,
    pub read: bool,
    pub grep: bool,
    pub glob: bool,
    pub write: bool,
    pub edit: bool,
    pub web_fetch: bool,
    pub web_search: bool,
    pub todo: bool,
    /// `mcp:srv:tool`, or `mcp:srv:` for a whole server.
    pub mcp: Vec<String>,
    /// Names Synapse has no tool for.
    pub unknown: Vec<String>,
}

/// Why a custom agent's tools do not allow a command; the text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolRefusal {
    /// An agent command (or an `mcp:` command) the tools do not include.
    #[error("refused: `{command}` is not among this agent's tools ({tools})")]
    NotAmongTools {
        /// The command word.
        command: String,
        /// The agent's tools, as its file lists them.
        tools: String,
    },
    /// A shell command for an agent without the Bash tool.
    #[error(
        "refused: this agent has no Bash tool, so it runs no shell commands (its tools: {tools}); \
         use its agent commands"
    )]
    NoBash {
        /// The agent's tools.
        tools: String,
    },
    /// A shell command no `Bash(pattern)` of the agent matches.
    #[error("refused: `{command}` matches none of this agent's Bash patterns ({patterns})")]
    NoPatternMatches {
        /// The command as parsed.
        command: String,
        /// The agent's Bash patterns.
        patterns: String,
    },
    /// A line whose commands cannot all be seen (`eval`, `$(…)` in the command word) for an
    /// agent limited to Bash patterns.
    #[error(
        "refused: this agent may run only commands matching its Bash patterns, and this line \
         hides what it runs ({hidden})"
    )]
    Hidden {
        /// What the parser could not see into.
        hidden: String,
    },
}

impl ToolGrant {
    pub fn parse(listed: &[String]) -> Self {
        let mut g = ToolGrant::default();
        for entry in listed {
            let entry = entry.trim();
            if let Some(inner) = entry
                .strip_prefix("Bash(")
                .and_then(|r| r.strip_suffix(')'))
            {
                let inner = inner.trim();
                if inner.is_empty() || inner == "*" || inner == ":*" {
                    g.bash = BashGrant::All;
                } else if let BashGrant::Patterns(p) = &mut g.bash {
                    p.push(inner.to_string());
                } else if g.bash == BashGrant::None {
                    g.bash = BashGrant::Patterns(vec![inner.to_string()]);
                }
                continue;
            }
            if let Some(rest) = entry.strip_prefix("mcp__") {
                g.mcp.push(match rest.split_once("__") {
                    Some((server, tool)) => format!("mcp:{server}:{tool}"),
                    None => format!("mcp:{rest}:"),
                });
                continue;
            }
            match entry {
                "Bash" => g.bash = BashGrant::All,
                "Read" | "LS" => g.read = true,
                "Grep" => g.grep = true,
                "Glob" => g.glob = true,
                "Write" => g.write = true,
                "Edit" | "MultiEdit" | "NotebookEdit" => g.edit = true,
                "WebFetch" => g.web_fetch = true,
                "WebSearch" => g.web_search = true,
                "TodoWrite" | "TodoRead" => g.todo = true,
                // Sub-agents cannot start sub-agents (`Task`); nothing else to map.
                _ => g.unknown.push(entry.to_string()),
            }
        }
        g
    }

    /// Nothing may change files: no write tool and no `Bash`.
    pub fn read_only(&self) -> bool {
        !self.write && !self.edit && self.bash == BashGrant::None
    }

    /// Whether agent command `name` is one of the tools (for the sub-agent's prompt too).
    pub fn has_command(&self, name: &str) -> Option<bool> {
        Some(match name {
            "read" => self.read,
            "search" => self.grep,
            "glob" => self.glob,
            "write" => self.write,
            "edit" => self.edit,
            "web_fetch" => self.web_fetch,
            "web_search" => self.web_search,
            "todo" => self.todo,
            "bash" | "job" => self.bash != BashGrant::None,
            _ => return None,
        })
    }

    /// Why agent command `name` with `effect` is not among the tools, if it is not.
    pub fn judge_agent(&self, name: &str, effect: &Effect) -> Result<(), ToolRefusal> {
        let allowed = match self.has_command(name) {
            Some(allowed) => allowed,
            None => match effect {
                Effect::ReadOnly => true,
                Effect::Writes(_) => self.write || self.edit,
                Effect::SubAgent { .. } | Effect::Other => self.bash != BashGrant::None,
            },
        };
        if allowed {
            Ok(())
        } else {
            Err(ToolRefusal::NotAmongTools {
                command: name.to_string(),
                tools: self.describe(),
            })
        }
    }

    /// Why the command line is not allowed by the tools, if it is not: `mcp:*` commands need
    /// their MCP tool, everything else the `Bash` tool (or a matching `Bash(pattern)`).
    pub fn judge_native(&self, line: &str) -> Result<(), ToolRefusal> {
        let parsed = synapse_permissions::parse(line);
        for cmd in parsed.all_commands() {
            let Some(first) = cmd.words.first() else {
                continue;
            };
            if first.starts_with("mcp:") {
                if self.mcp.iter().any(|m| mcp_matches(m, first)) {
                    continue;
                }
                return Err(ToolRefusal::NotAmongTools {
                    command: first.clone(),
                    tools: self.describe(),
                });
            }
            match &self.bash {
                BashGrant::All => {}
                BashGrant::None => {
                    return Err(ToolRefusal::NoBash {
                        tools: self.describe(),
                    });
                }
                BashGrant::Patterns(patterns) => {
                    if !bash_allows(patterns, cmd) {
                        return Err(ToolRefusal::NoPatternMatches {
                            command: cmd.words.join(" "),
                            patterns: patterns.join(", "),
                        });
                    }
                }
            }
        }
        if !parsed.opaque.is_empty() && matches!(self.bash, BashGrant::Patterns(_)) {
            return Err(ToolRefusal::Hidden {
                hidden: parsed.opaque.join("; "),
            });
        }
        Ok(())
    }

    /// The tools as a short list (`Read, Grep, Glob`).
    pub fn describe(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for (on, name) in [
            (self.read, "Read"),
            (self.grep, "Grep"),
            (self.glob, "Glob"),
            (self.write, "Write"),
            (self.edit, "Edit"),
            (self.web_fetch, "WebFetch"),
            (self.web_search, "WebSearch"),
            (self.todo, "TodoWrite"),
        ] {
            if on {
                out.push(name.into());
            }
        }
        match &self.bash {
            BashGrant::None => {}
            BashGrant::All => out.push("Bash".into()),
            BashGrant::Patterns(p) => out.extend(p.iter().map(|p| format!("Bash({p})"))),
        }
        out.extend(self.mcp.iter().map(|m| {
            let rest = m.trim_start_matches("mcp:");
            match rest.strip_suffix(':') {
                Some(server) => format!("mcp__{server}"),
                None => format!("mcp__{}", rest.replacen(':', "__", 1)),
            }
        }));
        if out.is_empty() {
            "none".into()
        } else {
            out.join(", ")
        }
    }
}

fn mcp_matches(grant: &str, command: &str) -> bool {
    if grant.ends_with(':') {
        command.starts_with(grant)
    } else {
        command == grant
    }
}

/// Whether one command matches one of `patterns` (Claude Code's `Bash(…)` contents, read as
/// Synapse permission patterns: `git status:*`, `npm run *`, `echo hi`).
pub fn bash_allows(patterns: &[String], cmd: &SimpleCommand) -> bool {
    patterns
        .iter()
        .filter_map(|p| Pattern::parse(p).ok())
        .any(|p| p.matches_command(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(list: &str) -> ToolGrant {
        ToolGrant::parse(&super::super::frontmatter::split_list(list))
    }

    #[test]
    fn read_tools_make_a_read_only_agent_without_shell_commands() {
        let g = grant("Read, Grep, Glob");
        assert!(g.read_only());
        assert!(g.judge_agent("read", &Effect::ReadOnly).is_ok());
        assert!(g.judge_agent("search", &Effect::ReadOnly).is_ok());
        let refused = g.judge_agent("write", &Effect::Writes(vec![])).unwrap_err();
        assert_eq!(
            refused,
            ToolRefusal::NotAmongTools {
                command: "write".into(),
                tools: "Read, Grep, Glob".into()
            }
        );
        assert!(
            refused.to_string().contains("Read, Grep, Glob"),
            "{refused}"
        );
        let no_bash = g.judge_native("ls").unwrap_err();
        assert!(matches!(no_bash, ToolRefusal::NoBash { .. }), "{no_bash:?}");
        assert!(no_bash.to_string().contains("no Bash tool"), "{no_bash}");
        assert!(g.judge_agent("skill:load", &Effect::ReadOnly).is_ok());
    }

    #[test]
    fn bash_patterns_and_mcp_tools_allow_exactly_what_they_name() {
        let g = grant("Bash(git diff:*), Bash(git status), mcp__github__get_issue, mcp__fs");
        assert!(!g.read_only());
        assert!(
            g.judge_native("git diff HEAD | head").is_err(),
            "head is not listed"
        );
        assert!(g.judge_native("git diff HEAD && git status").is_ok());
        assert!(g.judge_native("git push").is_err());
        assert!(g.judge_native("mcp:github:get_issue --number 1").is_ok());
        assert!(g.judge_native("mcp:github:delete_repo").is_err());
        assert!(g.judge_native("mcp:fs:read_file --path x").is_ok());
        assert_eq!(
            g.describe(),
            "Bash(git diff:*), Bash(git status), mcp__github__get_issue, mcp__fs"
        );
        let all = grant("Bash, Write");
        assert!(all.judge_native("cargo test").is_ok());
        assert!(all.judge_agent("edit", &Effect::Writes(vec![])).is_err());
        assert!(all.judge_agent("write", &Effect::Writes(vec![])).is_ok());
        assert_eq!(grant("Task, Read").unknown, vec!["Task"]);
    }
}
