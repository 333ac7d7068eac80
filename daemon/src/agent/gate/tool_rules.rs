//! A client's `--allowedTools` / `--disallowedTools` (Claude Code's rule syntax, read by
//! [`synapse_permissions::claude_tools`]) as the session's own allow and deny rules. A deny rule
//! refuses in every mode and nothing the session adds later loosens it; a rule that cannot be
//! read exactly refuses the whole open, since running without it could allow what the user
//! forbade.

use synapse_permissions::{RuleSet, ToolRule, Verdict, claude_tools, split_tool_list};

/// Where the rules say they came from, in refusals and the audit.
const ALLOWED_SOURCE: &str = "--allowedTools";
const DISALLOWED_SOURCE: &str = "--disallowedTools";

/// The session rules for `allowed` and `disallowed`, and notices for tools Synapse lacks; an
/// error names the first rule that could not be read.
pub fn tool_rule_set(
    allowed: &[String],
    disallowed: &[String],
) -> Result<(RuleSet, Vec<String>), String> {
    let mut set = RuleSet::default();
    let mut notices = Vec::new();
    for (list, verdict, source) in [
        (allowed, Verdict::Allow, ALLOWED_SOURCE),
        (disallowed, Verdict::Deny, DISALLOWED_SOURCE),
    ] {
        for rule in split_tool_list(list) {
            match claude_tools::translate(&rule) {
                Ok(ToolRule::Rule { kind, pattern }) => set.add(kind, verdict, pattern, source),
                Ok(ToolRule::NoCounterpart { tool }) => notices.push(format!(
                    "{source}: Synapse has no {tool} tool; `{rule}` changes nothing"
                )),
                Err(e) => return Err(format!("{source} {e}")),
            }
        }
    }
    Ok((set, notices))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use synapse_permissions::parse;

    #[test]
    fn allowed_and_disallowed_rules_land_in_their_lists() {
        let (set, notices) = tool_rule_set(
            &["Bash(touch:*) NotebookEdit".into()],
            &["Bash(rm:*)".into()],
        )
        .unwrap();
        let verdict = |line: &str| {
            let parsed = parse(line);
            set.bash_verdict(parsed.all_commands().next().unwrap())
                .map(|(v, hit)| (v, hit.source))
        };
        assert_eq!(
            verdict("touch a"),
            Some((Verdict::Allow, ALLOWED_SOURCE.to_string()))
        );
        assert_eq!(
            verdict("rm -rf a"),
            Some((Verdict::Deny, DISALLOWED_SOURCE.to_string()))
        );
        assert_eq!(notices.len(), 1, "{notices:?}");
    }

    #[test]
    fn an_unreadable_deny_refuses_the_open() {
        let err = tool_rule_set(&[], &["bash(rm:*)".into()]).unwrap_err();
        assert!(err.starts_with("--disallowedTools `bash(rm:*)`"), "{err}");
    }
}
