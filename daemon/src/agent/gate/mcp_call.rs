//! The verdict on an MCP tool that reaches `Mcp.CallTool` from inside a sandboxed session shell
//! without passing the session's router (its wrapper run by a script, or named through `$(…)`).
//! The router's gate already judged every `mcp:` word it could see; this is the same rules'
//! answer for what it could not: the user's and the trusted project's `permissions.mcp` rules,
//! read the way the session gates read them ([`RulesSource`]: last good content of a broken file,
//! changed project files not honoured until trusted again). Nobody can be asked from there, so
//! only "deny" refuses — and rules that cannot be established (a broken file with no last good
//! content) refuse too. The rules are read once per workspace and kept ([`McpCallGate`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::GateEnv;
use super::rules_source::{RuleFiles, RulesSource};
use synapse_permissions::Verdict;

/// Why an MCP call from inside the sandbox was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpCallRefused {
    #[error("{command} is denied by the rule `{pattern}` in {file}")]
    Denied {
        command: String,
        pattern: String,
        file: String,
    },
    #[error(
        "{command} is refused: the permission rules cannot be read ({why}); fix the file, \
         then call it again"
    )]
    RulesBroken { command: String, why: String },
}

/// Workspaces whose rules are kept read; beyond this the cache starts afresh.
const CACHED_WORKSPACES: usize = 64;

/// The rules such calls are judged by: one [`RulesSource`] per workspace, kept between calls,
/// so a call costs a few `stat`s and files are parsed again only when one of them changed.
pub struct McpCallGate {
    env: GateEnv,
    sources: Mutex<HashMap<PathBuf, Arc<RulesSource>>>,
}

impl McpCallGate {
    pub fn new(env: GateEnv) -> Self {
        Self {
            env,
            sources: Mutex::default(),
        }
    }

    /// Checks `command` (`mcp:<server>:<tool>`) for a caller in `workspace`.
    pub fn check(&self, workspace: Option<&Path>, command: &str) -> Result<(), McpCallRefused> {
        let cwd = workspace.unwrap_or(&self.env.home).to_path_buf();
        let source = {
            let mut sources = self.sources.lock();
            if sources.len() >= CACHED_WORKSPACES && !sources.contains_key(&cwd) {
                sources.clear();
            }
            sources
                .entry(cwd.clone())
                .or_insert_with(|| {
                    Arc::new(RulesSource::new(RuleFiles {
                        user: self.env.user_settings.clone(),
                        trust_file: self.env.trust_file.clone(),
                        cwd,
                        home: self.env.home.clone(),
                        last_good: self.env.last_good_rules.clone(),
                    }))
                })
                .clone()
        };
        let (loaded, _) = source.get();
        if loaded.fail_closed {
            return Err(McpCallRefused::RulesBroken {
                command: command.to_string(),
                why: loaded.broken.join("; "),
            });
        }
        match loaded.rules.mcp_verdict(command) {
            Some((Verdict::Deny, hit)) => {
                tracing::info!(%command, pattern = %hit.pattern, "denied an MCP call from a sandboxed shell");
                Err(McpCallRefused::Denied {
                    command: command.to_string(),
                    pattern: hit.pattern.to_string(),
                    file: hit.source.to_string(),
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(dir: &Path) -> McpCallGate {
        McpCallGate::new(GateEnv {
            synapse_home: dir.join("synapse"),
            user_settings: Arc::new(crate::workspace::SettingsHandle::open(
                dir.join("synapse/settings.json"),
            )),
            trust_file: dir.join("synapse/trusted.json"),
            home: dir.join("home"),
            temp_dir: dir.join("tmp"),
            mcp_hints: Arc::new(|_| (None, None)),
            last_good_rules: Default::default(),
        })
    }

    fn write_rules(dir: &Path, text: &str) {
        let file = dir.join("synapse/settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        // A new file each time: a new inode and mtime, as an editor's save gives.
        let tmp = dir.join("synapse/settings.json.new");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
    }

    #[test]
    fn kept_rules_follow_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("home/proj");
        std::fs::create_dir_all(&project).unwrap();
        let gate = gate(dir.path());
        assert_eq!(gate.check(Some(&project), "mcp:fs:delete_file"), Ok(()));
        write_rules(
            dir.path(),
            r#"{"permissions": {"mcp": {"deny": ["mcp:fs:delete_*"]}}}"#,
        );
        let refused = gate.check(Some(&project), "mcp:fs:delete_file");
        assert!(
            matches!(&refused, Err(McpCallRefused::Denied { pattern, .. }) if pattern == "mcp:fs:delete_*"),
            "{refused:?}"
        );
        assert_eq!(gate.check(Some(&project), "mcp:fs:read_file"), Ok(()));
        // The rule lifted: the next call sees it gone, the same gate kept.
        write_rules(dir.path(), r#"{"permissions": {"mcp": {"deny": []}}}"#);
        assert_eq!(gate.check(Some(&project), "mcp:fs:delete_file"), Ok(()));
    }

    #[test]
    fn a_broken_file_with_nothing_good_before_it_refuses() {
        let dir = tempfile::tempdir().unwrap();
        write_rules(dir.path(), r#"{"permissions": {"mcp": {"deny": "#);
        let refused = gate(dir.path()).check(None, "mcp:fs:read_file");
        assert!(
            matches!(refused, Err(McpCallRefused::RulesBroken { .. })),
            "{refused:?}"
        );
    }
}
