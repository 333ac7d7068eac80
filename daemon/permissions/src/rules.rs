//! The allow/ask/deny lists from the `permissions` object of a settings file, for bash
//! commands and MCP tools, each rule remembering the file it came from. A bad entry becomes a
//! problem message naming its key path and is skipped; the other rules still load.
//!
//! Settings shape (other keys, such as `skill`, belong to other subsystems and are ignored):
//! `{"bash": {"allow": ["git status:*"], "ask": [], "deny": []}, "mcp": {"allow": ["mcp:fs:read_*"]},
//! "defaultMode": "auto", "additionalWritableDirs": ["~/data"]}`

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::normalize;
use super::parse::SimpleCommand;
use super::pattern::Pattern;
use super::policy::Mode;

/// What a rule says about a matching command or tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking. A bash command so allowed runs outside the sandbox when it is
    /// risky or writes outside the writable folders, still asks for a redirect outside them,
    /// and read-only mode ignores the rule.
    Allow,
    /// Ask the user first, even when an allow rule also matches; only yolo mode runs it anyway.
    Ask,
    /// Refuse it in every mode, yolo included.
    Deny,
}

/// Which list a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// `permissions.bash`: patterns over single simple commands, agent commands included.
    Bash,
    /// `permissions.mcp`: patterns over MCP tool names, `mcp:<server>:<tool>`.
    Mcp,
}

/// The rule that decided: its pattern text and the settings file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleHit {
    /// The rule's pattern as written in the settings, such as `git status:*`.
    pub pattern: String,
    /// The label the rules were loaded under (`source` of [`RuleSet::from_json`] or
    /// [`RuleSet::add`]), usually the settings file's path, shown in messages.
    pub source: String,
    /// The command the rule matched when it was not the command's own words: the `rm` a
    /// deleting program amounts to (`rm victim` for `unlink victim`, see [`super::deletes`]).
    pub via: Option<String>,
}

impl RuleHit {
    /// "`<text>` matches", or "`<text>` deletes like `rm …`, which matches", for messages.
    pub fn subject(&self, text: &str) -> String {
        match &self.via {
            Some(via) => format!("`{text}` deletes files like `{via}`, which matches"),
            None => format!("`{text}` matches"),
        }
    }
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: Pattern,
    source: String,
}

#[derive(Debug, Clone, Default)]
struct Lists {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
}

impl Lists {
    fn list(&self, verdict: Verdict) -> &[Rule] {
        match verdict {
            Verdict::Allow => &self.allow,
            Verdict::Ask => &self.ask,
            Verdict::Deny => &self.deny,
        }
    }

    fn list_mut(&mut self, verdict: Verdict) -> &mut Vec<Rule> {
        match verdict {
            Verdict::Allow => &mut self.allow,
            Verdict::Ask => &mut self.ask,
            Verdict::Deny => &mut self.deny,
        }
    }

    fn extend(&mut self, other: Lists) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }
}

/// Every bash and MCP rule from the user's and the project's settings.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    bash: Lists,
    mcp: Lists,
}

impl RuleSet {
    /// A set with no rules: every command is left to the mode and the risky list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the `permissions` object of one settings file (`source` names it in messages).
    pub fn from_json(permissions: &Value, source: &str) -> (RuleSet, Vec<String>) {
        let mut set = RuleSet::new();
        let mut problems = Vec::new();
        let Some(object) = permissions.as_object() else {
            if !permissions.is_null() {
                problems.push(format!(
                    "permissions: expected an object (got {})",
                    describe(permissions)
                ));
            }
            return (set, problems);
        };
        for (key, kind) in [("bash", RuleKind::Bash), ("mcp", RuleKind::Mcp)] {
            let Some(section) = object.get(key) else {
                continue;
            };
            let Some(section) = section.as_object() else {
                problems.push(format!(
                    "permissions.{key}: expected an object with allow, ask and deny lists (got {})",
                    describe(section)
                ));
                continue;
            };
            for (list, value) in section {
                let verdict = match list.as_str() {
                    "allow" => Verdict::Allow,
                    "ask" => Verdict::Ask,
                    "deny" => Verdict::Deny,
                    other => {
                        problems.push(format!(
                            "permissions.{key}.{other}: unknown key (expected allow, ask or deny)"
                        ));
                        continue;
                    }
                };
                let Some(items) = value.as_array() else {
                    problems.push(format!(
                        "permissions.{key}.{list}: expected a list of patterns (got {})",
                        describe(value)
                    ));
                    continue;
                };
                for (i, item) in items.iter().enumerate() {
                    let at = format!("permissions.{key}.{list}[{i}]");
                    let Some(text) = item.as_str() else {
                        problems.push(format!(
                            "{at}: expected a pattern string such as \"git status:*\" (got {})",
                            describe(item)
                        ));
                        continue;
                    };
                    match Pattern::parse(text) {
                        Ok(pattern) => set.add(kind, verdict, pattern, source),
                        Err(e) => problems.push(format!("{at}: {e}")),
                    }
                }
            }
        }
        (set, problems)
    }

    /// Adds `other`'s rules (the project's) to these (the user's).
    pub fn merge(&mut self, other: RuleSet) {
        self.bash.extend(other.bash);
        self.mcp.extend(other.mcp);
    }

    /// Appends one rule to the `kind` list for `verdict`; `source` names where it came from
    /// (a settings file, or a command-line flag) in [`RuleHit::source`].
    pub fn add(&mut self, kind: RuleKind, verdict: Verdict, pattern: Pattern, source: &str) {
        let lists = match kind {
            RuleKind::Bash => &mut self.bash,
            RuleKind::Mcp => &mut self.mcp,
        };
        lists.list_mut(verdict).push(Rule {
            pattern,
            source: source.to_string(),
        });
    }

    /// Some bash deny rule is set.
    pub fn has_bash_deny(&self) -> bool {
        !self.bash.deny.is_empty()
    }

    /// No rule of any kind or verdict is set.
    pub fn is_empty(&self) -> bool {
        [&self.bash, &self.mcp]
            .iter()
            .all(|l| l.allow.is_empty() && l.ask.is_empty() && l.deny.is_empty())
    }

    /// The strongest rule matching `cmd`: deny over ask over allow.
    pub fn bash_verdict(&self, cmd: &SimpleCommand) -> Option<(Verdict, RuleHit)> {
        strongest(|v| self.bash_rule(v, cmd))
    }

    /// The strongest rule matching an MCP tool name: deny over ask over allow.
    pub fn mcp_verdict(&self, name: &str) -> Option<(Verdict, RuleHit)> {
        strongest(|v| self.mcp_rule(v, name))
    }

    /// The first `verdict` rule matching `cmd`. Ask and deny rules look at the words alone, so
    /// `FOO=1 rm x` still hits `rm:*`, and at the `rm` a deleting program amounts to, so
    /// `unlink x` or `find . -delete` hit it too ([`super::deletes`]); an allow rule only covers
    /// leading assignments it spells out (`FOO=1 make:*`), because `LD_PRELOAD=…` or
    /// `GIT_PAGER=…` change what runs, and only the words themselves.
    pub fn bash_rule(&self, verdict: Verdict, cmd: &SimpleCommand) -> Option<RuleHit> {
        let hit = self.bash_words_rule(verdict, cmd);
        if hit.is_some() || verdict == Verdict::Allow {
            return hit;
        }
        super::deletes::as_rm(cmd).into_iter().find_map(|rm| {
            let hit = first_hit(self.bash.list(verdict), |p| p.matches_command(&rm))?;
            Some(RuleHit {
                via: Some(rm.text),
                ..hit
            })
        })
    }

    /// [`bash_rule`](Self::bash_rule) over the command's own words.
    fn bash_words_rule(&self, verdict: Verdict, cmd: &SimpleCommand) -> Option<RuleHit> {
        let with_assignments;
        let subject = if verdict == Verdict::Allow && !cmd.assignments.is_empty() {
            with_assignments = SimpleCommand {
                words: cmd.assignments.iter().chain(&cmd.words).cloned().collect(),
                ..SimpleCommand::default()
            };
            &with_assignments
        } else {
            cmd
        };
        first_hit(self.bash.list(verdict), |p| p.matches_command(subject))
    }

    /// The first `verdict` rule matching an MCP tool name.
    pub fn mcp_rule(&self, verdict: Verdict, name: &str) -> Option<RuleHit> {
        first_hit(self.mcp.list(verdict), |p| p.matches_name(name))
    }
}

fn strongest(find: impl Fn(Verdict) -> Option<RuleHit>) -> Option<(Verdict, RuleHit)> {
    [Verdict::Deny, Verdict::Ask, Verdict::Allow]
        .into_iter()
        .find_map(|v| find(v).map(|hit| (v, hit)))
}

fn first_hit(rules: &[Rule], matches: impl Fn(&Pattern) -> bool) -> Option<RuleHit> {
    rules.iter().find(|r| matches(&r.pattern)).map(|r| RuleHit {
        pattern: r.pattern.to_string(),
        source: r.source.clone(),
        via: None,
    })
}

/// `permissions.additionalWritableDirs`: absolute paths or `~/…` (expanded with `home`).
pub fn writable_dirs(permissions: &Value, home: &Path, problems: &mut Vec<String>) -> Vec<PathBuf> {
    const KEY: &str = "additionalWritableDirs";
    let Some(value) = permissions.get(KEY) else {
        return Vec::new();
    };
    let Some(items) = value.as_array() else {
        problems.push(format!(
            "permissions.{KEY}: expected a list of folders (got {})",
            describe(value)
        ));
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = match item.as_str() {
            Some("~") => Some(home.to_path_buf()),
            Some(s) => match s.strip_prefix("~/") {
                Some(rest) => Some(home.join(rest)),
                None => Some(PathBuf::from(s)).filter(|p| p.is_absolute()),
            },
            None => None,
        };
        match path {
            Some(p) => dirs.push(normalize(&p)),
            None => problems.push(format!(
                "permissions.{KEY}[{i}]: expected an absolute path or one starting with ~/ (got {})",
                describe(item)
            )),
        }
    }
    dirs
}

/// `permissions.defaultMode` (`mode` is read as an older spelling when it is absent).
pub fn default_mode(permissions: &Value, problems: &mut Vec<String>) -> Option<Mode> {
    let (key, value) = ["defaultMode", "mode"]
        .into_iter()
        .find_map(|k| permissions.get(k).map(|v| (k, v)))?;
    match value.as_str().map(str::parse::<Mode>) {
        Some(Ok(mode)) => Some(mode),
        Some(Err(e)) => {
            problems.push(format!("permissions.{key}: {e}"));
            None
        }
        None => {
            problems.push(format!(
                "permissions.{key}: expected one of \"auto\", \"ask\", \"read-only\", \"yolo\" (got {})",
                describe(value)
            ));
            None
        }
    }
}

/// A JSON value for messages: scalars as written, containers by kind.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
