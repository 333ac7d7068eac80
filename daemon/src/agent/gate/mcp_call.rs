//! The verdict on an MCP tool that reaches `Mcp.CallTool` from inside a sandboxed session shell
//! without passing the session's router (its wrapper run by a script, or named through `$(…)`).
//! The router's gate already judged every `mcp:` word it could see; this is the same rules'
//! answer for what it could not: the user's and the trusted project's `permissions.mcp` rules,
//! read the way the session gates read them ([`RulesSource`]: last good content of a broken file,
//! changed project files not honoured until trusted again). Nobody can be asked from there, so
//! only "deny" refuses — and rules that cannot be established (a broken file with no last good
//! content) refuse too.

use std::path::Path;

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

/// Checks `command` (`mcp:<server>:<tool>`) for a caller in `workspace`.
pub fn check_mcp_call(
    env: &GateEnv,
    workspace: Option<&Path>,
    command: &str,
) -> Result<(), McpCallRefused> {
    let source = RulesSource::new(RuleFiles {
        user_settings: env.user_settings.clone(),
        trust_file: env.trust_file.clone(),
        cwd: workspace.unwrap_or(&env.home).to_path_buf(),
        home: env.home.clone(),
        last_good: env.last_good_rules.clone(),
    });
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
