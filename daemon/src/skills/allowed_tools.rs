//! A loaded skill's `allowed-tools` (Claude Code's frontmatter field) as permission patterns the
//! session gate may pre-approve for the rest of the session: `Bash(git add:*)` → `git add:*`,
//! `Read`/`Grep`/`Glob` → `read:*`/`search:*`/`glob:*`, `Write`/`Edit` → `write:*`/`edit:*`,
//! `WebFetch` → `web_fetch:*`.
//!
//! Fail closed: a bare `Bash` or `Bash(*)` (every command) is never pre-approved, unknown tool
//! names are skipped, MCP tools (`mcp__srv__tool`) are skipped because they run outside the
//! sandbox, and a project skill's list counts only in a trusted folder. Even then the list
//! counts only once the user approved the skill's content ([`super::grants`]), and the gate
//! lets it remove a question only for what stays inside the sandbox. Deny rules, the rules
//! files and the session's mode still apply on top.

use std::path::Path;

use super::source::SkillSource;

/// The patterns to pre-approve and the entries skipped (with why).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Translated {
    pub patterns: Vec<String>,
    pub skipped: Vec<String>,
}

/// Translates `allowed` (as the frontmatter lists it).
pub fn translate(allowed: &[String]) -> Translated {
    let mut out = Translated::default();
    for entry in allowed {
        let entry = entry.trim();
        match one(entry) {
            Ok(p) => {
                if !out.patterns.contains(&p) {
                    out.patterns.push(p);
                }
            }
            Err(why) => out.skipped.push(format!("{entry}: {why}")),
        }
    }
    out
}

fn one(entry: &str) -> Result<String, &'static str> {
    if let Some(inner) = entry
        .strip_prefix("Bash(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let inner = inner.trim();
        if inner.is_empty() || inner == "*" || inner == ":*" {
            return Err("would allow every command; not pre-approved");
        }
        return Ok(inner.to_string());
    }
    if entry.starts_with("mcp__") {
        return Err("MCP tools run outside the sandbox; a skill cannot pre-approve them");
    }
    match entry {
        "Bash" => Err("would allow every command; not pre-approved"),
        "Read" | "LS" => Ok("read:*".into()),
        "Grep" => Ok("search:*".into()),
        "Glob" => Ok("glob:*".into()),
        "Write" => Ok("write:*".into()),
        "Edit" | "MultiEdit" => Ok("edit:*".into()),
        "WebFetch" => Ok("web_fetch:*".into()),
        "TodoWrite" | "TodoRead" => Ok("todo:*".into()),
        _ => Err("not a tool Synapse knows"),
    }
}

/// Whether a skill of `source` in `dir` may pre-approve anything: user-level skills always; a
/// project skill only below a trusted folder (unreadable trust list: no).
pub fn may_pre_approve(source: SkillSource, dir: &Path, trust_file: &Path) -> bool {
    if source != SkillSource::Project {
        return true;
    }
    synapse_shared::trust::load(trust_file)
        .map(|folders| synapse_shared::trust::is_trusted(&folders, dir))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn claude_code_names_become_patterns_and_broad_ones_are_refused() {
        let got = translate(&[
            "Bash(git add:*)".into(),
            "Bash(git status)".into(),
            "Read".into(),
            "Edit".into(),
            "mcp__github__create_issue".into(),
            "mcp__memory".into(),
            "Bash".into(),
            "Bash(*)".into(),
            "Teleport".into(),
        ]);
        assert_eq!(
            got.patterns,
            vec!["git add:*", "git status", "read:*", "edit:*",]
        );
        assert_eq!(got.skipped.len(), 5, "{:?}", got.skipped);
        assert!(got.skipped[0].contains("run outside the sandbox"));
        assert!(got.skipped[2].starts_with("Bash: would allow every command"));
    }

    #[test]
    fn project_skills_pre_approve_only_in_a_trusted_folder() {
        let t = tempfile::tempdir().unwrap();
        let trust = t.path().join("trusted_folders.json");
        let dir = t.path().join("proj/.claude/skills/x");
        std::fs::create_dir_all(&dir).unwrap();
        assert!(may_pre_approve(SkillSource::User, &dir, &trust));
        assert!(!may_pre_approve(SkillSource::Project, &dir, &trust));
        std::fs::write(&trust, "{ broken").unwrap();
        assert!(!may_pre_approve(SkillSource::Project, &dir, &trust));
    }
}
