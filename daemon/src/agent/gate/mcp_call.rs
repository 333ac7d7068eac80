//! The verdict on an MCP tool that reaches `Mcp.CallTool` from inside a sandboxed session shell
//! without passing the session's router (its wrapper run by a script — `python3 -c
//! 'subprocess.run(["mcp:fs:write_file", …])'` — or named through `$(…)`). It gets the same
//! verdict the router would give: the user's and the trusted project's rules (`permissions.mcp`
//! deny/ask/allow, read the way the session gates read them, [`RulesSource`]), the mode the rules
//! files set (else auto), and the server's read-only/destructive annotations. Nobody can be
//! asked from there, so what would ask is refused, as `synapse run` refuses — a tool that only
//! reads runs, `write_file` does not — and the message says how to call it so the user can be
//! asked. Rules that cannot be established (a broken file with no last good content) refuse
//! too. The rules are read once per workspace and kept ([`McpCallGate`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::GateEnv;
use super::rules_source::{RuleFiles, RulesSource};
use synapse_permissions::{Action, Context, Decision, Mode, Verdict};

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
    #[error(
        "{command} needs the user's approval ({reason}), and nobody can be asked for a call made \
         from inside a script; run it as a command of its own (`{command} …`) so the user can be \
         asked, or the user can allow it with a `permissions.mcp.allow` rule"
    )]
    WouldAsk { command: String, reason: String },
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
        if let Some((Verdict::Deny, hit)) = loaded.rules.mcp_verdict(command) {
            tracing::info!(%command, pattern = %hit.pattern, "denied an MCP call from a sandboxed shell");
            return Err(McpCallRefused::Denied {
                command: command.to_string(),
                pattern: hit.pattern.to_string(),
                file: hit.source.to_string(),
            });
        }
        let (read_only_hint, destructive_hint) = (self.env.mcp_hints)(command);
        let mode = loaded.default_mode.unwrap_or(Mode::Auto);
        let no_writes: [std::path::PathBuf; 0] = [];
        let ctx = Context {
            cwd: &cwd_of(workspace, &self.env.home),
            home: &self.env.home,
            synapse_home: &self.env.synapse_home,
            temp_dir: &self.env.temp_dir,
            extra_writable: &no_writes,
            sandboxed: true,
            is_session_pid: &|_| false,
            agent_commands: &self.env.agent_commands,
        };
        let decision = synapse_permissions::decide(
            &Action::Mcp {
                name: command,
                read_only_hint,
                destructive_hint,
            },
            mode,
            &loaded.rules,
            &ctx,
        );
        match decision {
            Decision::Allow { .. } => Ok(()),
            Decision::Deny { reason } | Decision::Ask { reason, .. } => {
                tracing::info!(%command, %reason, "refused an MCP call from a sandboxed shell");
                Err(McpCallRefused::WouldAsk {
                    command: command.to_string(),
                    reason,
                })
            }
        }
    }
}

fn cwd_of(workspace: Option<&Path>, home: &Path) -> PathBuf {
    workspace.unwrap_or(home).to_path_buf()
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
            // As server-filesystem marks them: read_* read-only, delete_* destructive.
            mcp_hints: Arc::new(|c: &str| {
                (
                    c.contains(":read_").then_some(true),
                    c.contains(":delete_").then_some(true),
                )
            }),
            last_good_rules: Default::default(),
            agent_commands: Arc::new(crate::shell::builtin_registry().agent_commands()),
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
        // The router would ask for a destructive tool: from a script, that is a refusal.
        let asked = gate.check(Some(&project), "mcp:fs:delete_file");
        assert!(
            matches!(&asked, Err(McpCallRefused::WouldAsk { .. })),
            "{asked:?}"
        );
        assert!(
            asked
                .unwrap_err()
                .to_string()
                .contains("run it as a command of its own")
        );
        assert_eq!(gate.check(Some(&project), "mcp:fs:read_file"), Ok(()));
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
        // The user's allow rule is what lets it run unasked, as in the router.
        write_rules(
            dir.path(),
            r#"{"permissions": {"mcp": {"allow": ["mcp:fs:delete_file"]}}}"#,
        );
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
