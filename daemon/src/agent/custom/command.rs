//! One custom slash command (Claude Code's `commands/<path>.md`): its name from its path
//! (`frontend/component.md` → `frontend:component`), its frontmatter (`description`,
//! `argument-hint`, `allowed-tools`, `model`) and its body with the arguments put in:
//! `$ARGUMENTS` is the whole argument text, `$1` … `$9` its words (quotes group words, as in a
//! shell); a body that uses neither gets `ARGUMENTS: …` appended, so nothing typed is lost.

use std::path::{Path, PathBuf};

use super::files::{Found, Scope};
use super::frontmatter;

/// Characters of a description taken from the body's first line.
const DESCRIPTION_FROM_BODY_MAX_CHARS: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash: `hello-cmd`, `frontend:component`.
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    /// As the frontmatter lists them (`Bash(git status:*)`, `Read`).
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
    pub scope: Scope,
}

/// The command name for a file at `rel` below its commands folder; `Err` says why it can't be one.
pub fn name_of(rel: &Path) -> Result<String, String> {
    let stem = rel.with_extension("");
    let mut parts = Vec::new();
    for part in stem.components() {
        let part = part.as_os_str().to_string_lossy();
        if part.is_empty()
            || !part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(format!(
                "`{part}` cannot be part of a command name (letters, digits, `-`, `_` and `.` only)"
            ));
        }
        parts.push(part.into_owned());
    }
    if parts.is_empty() {
        return Err("empty name".into());
    }
    Ok(parts.join(":"))
}

impl CustomCommand {
    /// Reads a found file; `Err` is the problem to report (file and line).
    pub fn from_found(found: &Found) -> Result<Self, String> {
        let name = name_of(&found.rel).map_err(|e| format!("{}: {e}", found.path.display()))?;
        let parsed = frontmatter::parse(&found.path, &found.text)?;
        let description = parsed.text("description").unwrap_or_else(|| {
            let first = parsed
                .body
                .lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .unwrap_or_default();
            first
                .chars()
                .take(DESCRIPTION_FROM_BODY_MAX_CHARS)
                .collect()
        });
        Ok(Self {
            name,
            description,
            argument_hint: parsed.text("argument-hint"),
            allowed_tools: parsed.list("allowed-tools").unwrap_or_default(),
            model: parsed.text("model"),
            body: parsed.body.trim().to_string(),
            path: found.path.clone(),
            scope: found.scope,
        })
    }

    /// The body with `args` put in.
    pub fn with_arguments(&self, args: &str) -> String {
        substitute(&self.body, args)
    }
}

/// `$ARGUMENTS` → `args`; `$1`…`$9` → its words (missing ones empty). When `body` uses neither,
/// the arguments follow it as `ARGUMENTS: …`.
pub fn substitute(body: &str, args: &str) -> String {
    let args = args.trim();
    let words =
        shlex::split(args).unwrap_or_else(|| args.split_whitespace().map(str::to_string).collect());
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        let mut chars = after.chars();
        match (chars.next(), chars.next()) {
            (Some(d @ '1'..='9'), next) if !next.is_some_and(|c| c.is_ascii_digit()) => {
                let n = d as usize - '1' as usize;
                out.push_str(words.get(n).map(String::as_str).unwrap_or_default());
                used = true;
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn found(rel: &str, text: &str) -> Found {
        Found {
            path: PathBuf::from("/p/.claude/commands").join(rel),
            rel: PathBuf::from(rel),
            scope: Scope::Project,
            text: text.into(),
        }
    }

    #[test]
    fn names_come_from_paths_and_descriptions_from_the_body_when_missing() {
        let c = CustomCommand::from_found(&found(
            "frontend/component.md",
            "---\nargument-hint: <name>\nmodel: claude-x\n---\n# Make a component\n\nBuild $1.\n",
        ))
        .unwrap();
        assert_eq!(c.name, "frontend:component");
        assert_eq!(c.description, "Make a component");
        assert_eq!(c.argument_hint.as_deref(), Some("<name>"));
        assert_eq!(c.model.as_deref(), Some("claude-x"));
        assert!(name_of(Path::new("bad name.md")).is_err());
        let err =
            CustomCommand::from_found(&found("x.md", "---\ndescription: [\n---\n")).unwrap_err();
        assert!(err.contains("x.md:"), "{err}");
    }

    #[test]
    fn arguments_and_positions_are_put_in() {
        assert_eq!(substitute("Hello $ARGUMENTS!", "Bob"), "Hello Bob!");
        assert_eq!(
            substitute("Fix #$1 with priority $2 ($3)", "456 \"very high\""),
            "Fix #456 with priority very high ()"
        );
        assert_eq!(substitute("Costs $5.00 and $10", "a"), "Costs .00 and $10");
        assert_eq!(
            substitute("Review it.", "src/a.rs"),
            "Review it.\n\nARGUMENTS: src/a.rs"
        );
        assert_eq!(substitute("Review it.", ""), "Review it.");
        assert_eq!(substitute("Pay $ now", "x"), "Pay $ now\n\nARGUMENTS: x");
    }
}
