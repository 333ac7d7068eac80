//! Claude Code's tool rules (`--allowedTools` / `--disallowedTools` of `claude -p`) read as
//! Synapse rules, so a script written for Claude Code keeps its permissions.
//!
//! Claude Code names a tool and optionally a specifier: `Bash(git status:*)`, `Bash(npm run
//! test)`, `Read`, `Edit`, `mcp__github__create_issue`, `mcp__github`. Synapse's one tool is
//! `Bash` and its agent commands are shell words, so each rule becomes one rule pattern:
//! `Bash(<spec>)` is the spec itself (`git status:*` prefix, `npm run *` glob, exact words), a bare
//! `Bash` is `*` (every command line, the agent's own commands included), the file tools become
//! their agent commands (`Read` → `read:*`, `Grep` → `search:*`, …) and MCP tools their
//! `mcp:<server>:<tool>` names. A list argument may hold several rules separated by commas or
//! spaces outside parentheses ([`split_tool_list`]).
//!
//! What cannot be read exactly is an error, never a guess: a deny that matched less than the
//! user meant would let through what they forbade. Path specifiers of the file tools
//! (`Read(./secrets/**)`) and `WebFetch(domain:…)` are refused with the form to use instead.

use super::pattern::{Pattern, PatternError};
use super::rules::RuleKind;

/// One Claude Code rule, read as a Synapse rule.
#[derive(Debug, Clone)]
pub enum ToolRule {
    /// The rule's list and pattern.
    Rule {
        /// Whether the pattern goes to the bash list (Bash and the file tools) or the MCP list.
        kind: RuleKind,
        /// The Synapse pattern the rule became, such as `git status:*` or `read:*`.
        pattern: Pattern,
    },
    /// A Claude Code tool Synapse does not have (`NotebookEdit`): nothing to allow or deny.
    NoCounterpart {
        /// The tool's name as Claude Code spells it.
        tool: String,
    },
}

/// A rule that could not be read; the message names it and the form to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolRuleError {
    /// The tool name is not one Claude Code has, nor a `mcp__<server>[__<tool>]` name.
    #[error(
        "`{rule}`: unknown tool `{tool}` (expected Claude Code's names: Bash, Read, Edit, Write, \
         Glob, Grep, WebFetch, WebSearch, Task, TodoWrite or mcp__<server>__<tool>; names are \
         case-sensitive)"
    )]
    UnknownTool {
        /// The whole rule as given, trimmed.
        rule: String,
        /// The tool name in front of any `(`.
        tool: String,
    },
    /// A file, web or MCP tool was given a specifier, which Synapse cannot read exactly.
    #[error(
        "`{rule}`: {tool} takes no specifier in Synapse (its path and domain rules are not \
         supported); use `{tool}` for every use, or a command pattern such as \
         `Bash(read src/*)`"
    )]
    Specifier {
        /// The whole rule as given, trimmed.
        rule: String,
        /// The tool name in front of the `(`.
        tool: String,
    },
    /// The rule has a `(` without a closing `)` at its end, or a stray `)`.
    #[error("`{rule}`: unbalanced parentheses (expected `Tool` or `Tool(specifier)`)")]
    Parentheses {
        /// The whole rule as given, trimmed.
        rule: String,
    },
    /// The specifier of a `Bash(…)` rule (or the name built for an MCP tool) is not a valid
    /// Synapse pattern.
    #[error("`{rule}`: {source}")]
    Pattern {
        /// The whole rule as given, trimmed.
        rule: String,
        /// Why the pattern was refused.
        #[source]
        source: PatternError,
    },
}

/// Claude Code's file and web tools and the agent command each one is in Synapse.
const TOOL_COMMANDS: &[(&str, &str)] = &[
    ("Read", "read:*"),
    ("Write", "write:*"),
    ("Edit", "edit:*"),
    ("MultiEdit", "edit:*"),
    ("Glob", "glob:*"),
    ("Grep", "search:*"),
    ("WebFetch", "web_fetch:*"),
    ("WebSearch", "web_search:*"),
    ("TodoWrite", "todo:*"),
    // Every sub-agent: `task:general`, `task:explore`, custom ones.
    ("Task", "task:?*"),
    ("Agent", "task:?*"),
];

/// Claude Code tools with no Synapse counterpart: a rule naming one changes nothing.
const NO_COUNTERPART: &[&str] = &[
    "NotebookEdit",
    "NotebookRead",
    "LS",
    "BashOutput",
    "KillShell",
    "KillBash",
    "ExitPlanMode",
    "SlashCommand",
    "Skill",
];

/// Splits list arguments (`"Bash(git log:*),Read Edit"`) into single rules: commas and spaces
/// separate rules except inside parentheses.
pub fn split_tool_list<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let mut rules = Vec::new();
    for arg in args {
        let mut depth = 0usize;
        let mut current = String::new();
        for c in arg.as_ref().chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !current.is_empty() {
                        rules.push(std::mem::take(&mut current));
                    }
                }
                _ => current.push(c),
            }
        }
        if !current.is_empty() {
            rules.push(current);
        }
    }
    rules
}

/// Reads one Claude Code rule.
pub fn translate(rule: &str) -> Result<ToolRule, ToolRuleError> {
    let rule = rule.trim();
    let (tool, spec) = match rule.find('(') {
        Some(open) => {
            let Some(inner) = rule[open + 1..].strip_suffix(')') else {
                return Err(ToolRuleError::Parentheses { rule: rule.into() });
            };
            (&rule[..open], Some(inner.trim()))
        }
        None if rule.contains(')') => {
            return Err(ToolRuleError::Parentheses { rule: rule.into() });
        }
        None => (rule, None),
    };
    let spec = spec.filter(|s| !s.is_empty());
    let pattern = |text: &str| {
        Pattern::parse(text).map_err(|source| ToolRuleError::Pattern {
            rule: rule.into(),
            source,
        })
    };
    let specifier = || ToolRuleError::Specifier {
        rule: rule.into(),
        tool: tool.into(),
    };
    if tool == "Bash" {
        return Ok(ToolRule::Rule {
            kind: RuleKind::Bash,
            pattern: pattern(spec.unwrap_or("*"))?,
        });
    }
    if let Some(rest) = tool.strip_prefix("mcp__") {
        if spec.is_some() {
            return Err(specifier());
        }
        let name = match rest.split_once("__") {
            Some((server, "*")) | Some((server, "")) => format!("mcp:{server}:*"),
            Some((server, tool)) => format!("mcp:{server}:{tool}"),
            None if !rest.is_empty() => format!("mcp:{rest}:*"),
            None => {
                return Err(ToolRuleError::UnknownTool {
                    rule: rule.into(),
                    tool: tool.into(),
                });
            }
        };
        return Ok(ToolRule::Rule {
            kind: RuleKind::Mcp,
            pattern: pattern(&name)?,
        });
    }
    if let Some((_, command)) = TOOL_COMMANDS.iter().find(|(name, _)| *name == tool) {
        if spec.is_some() {
            return Err(specifier());
        }
        return Ok(ToolRule::Rule {
            kind: RuleKind::Bash,
            pattern: pattern(command)?,
        });
    }
    if NO_COUNTERPART.contains(&tool) {
        return Ok(ToolRule::NoCounterpart { tool: tool.into() });
    }
    Err(ToolRuleError::UnknownTool {
        rule: rule.into(),
        tool: tool.into(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::parse::parse;

    fn rule(text: &str) -> (RuleKind, Pattern) {
        match translate(text).unwrap() {
            ToolRule::Rule { kind, pattern } => (kind, pattern),
            other => panic!("{text}: {other:?}"),
        }
    }

    /// Whether `text`'s rule covers the first simple command of `line`.
    fn covers(text: &str, line: &str) -> bool {
        let (kind, pattern) = rule(text);
        assert_eq!(kind, RuleKind::Bash, "{text}");
        let parsed = parse(line);
        let cmd = parsed.all_commands().next().unwrap();
        pattern.matches_command(cmd)
    }

    #[test]
    fn bash_prefix_rules_keep_claude_codes_meaning() {
        assert_eq!(rule("Bash(git status:*)").1.source(), "git status:*");
        assert!(covers("Bash(git status:*)", "git status --short"));
        assert!(!covers("Bash(git status:*)", "git push"));
        assert!(covers("Bash(rm:*)", "rm -rf build"));
        assert!(covers("Bash(rm:*)", "/bin/rm x"));
    }

    #[test]
    fn bash_exact_and_glob_rules() {
        assert!(covers("Bash(npm run test)", "npm run test"));
        assert!(!covers("Bash(npm run test)", "npm run test --watch"));
        assert!(covers("Bash(npm run *)", "npm run lint"));
    }

    #[test]
    fn a_bare_bash_covers_every_command_the_agents_own_included() {
        assert!(covers("Bash", "curl example.com"));
        assert!(covers("Bash()", "read notes.txt"));
    }

    #[test]
    fn file_tools_become_their_agent_commands() {
        assert!(covers("Read", "read src/main.rs --limit 5"));
        assert!(!covers("Read", "readlink x"));
        assert!(covers("Edit", "edit a.txt old new"));
        assert!(covers("MultiEdit", "edit a.txt old new"));
        assert!(covers("Write", "write a.txt hi"));
        assert!(covers("Grep", "search TODO --path src"));
        assert!(covers("Glob", "glob '**/*.rs'"));
        assert!(covers("Task", "task:general --prompt x --description y"));
        assert!(covers("Task", "task:reviewer --prompt x --description y"));
        assert!(!covers("Task", "tasks"));
        assert!(covers("WebFetch", "web_fetch https://example.com"));
    }

    #[test]
    fn mcp_tools_and_servers_become_mcp_names() {
        let (kind, p) = rule("mcp__github__create_issue");
        assert_eq!(kind, RuleKind::Mcp);
        assert!(p.matches_name("mcp:github:create_issue"));
        assert!(!p.matches_name("mcp:github:delete_repo"));
        for whole in ["mcp__github", "mcp__github__*"] {
            let (kind, p) = rule(whole);
            assert_eq!(kind, RuleKind::Mcp);
            assert!(p.matches_name("mcp:github:delete_repo"), "{whole}");
            assert!(!p.matches_name("mcp:gitlab:x"), "{whole}");
        }
    }

    #[test]
    fn lists_split_on_commas_and_spaces_outside_parentheses() {
        let args = [
            "Bash(git status:*),Read Edit".to_string(),
            "  Bash(npm run test) ".into(),
        ];
        assert_eq!(
            split_tool_list(&args),
            vec!["Bash(git status:*)", "Read", "Edit", "Bash(npm run test)"]
        );
    }

    #[test]
    fn what_cannot_be_read_exactly_is_an_error() {
        assert!(matches!(
            translate("bash(rm:*)"),
            Err(ToolRuleError::UnknownTool { .. })
        ));
        assert!(matches!(
            translate("Read(./secrets/**)"),
            Err(ToolRuleError::Specifier { .. })
        ));
        assert!(matches!(
            translate("WebFetch(domain:example.com)"),
            Err(ToolRuleError::Specifier { .. })
        ));
        assert!(matches!(
            translate("Bash(rm:*"),
            Err(ToolRuleError::Parentheses { .. })
        ));
        assert!(matches!(
            translate("Bash(:*)"),
            Err(ToolRuleError::Pattern { .. })
        ));
        let message = translate("Read(x)").unwrap_err().to_string();
        assert!(message.contains("Bash(read src/*)"), "{message}");
    }

    #[test]
    fn tools_synapse_lacks_change_nothing() {
        assert!(matches!(
            translate("NotebookEdit").unwrap(),
            ToolRule::NoCounterpart { .. }
        ));
    }
}
