//! A session's permission settings as its clients see them: the choices an attaching client
//! makes (mode, extra allow patterns, interactivity), `/permissions` and its summary. The
//! decisions themselves are the session gate's ([`crate::agent::gate`]).

use synapse_permissions::Mode;

use super::ChatSession;
use crate::agent::AgentError;
use crate::agent::gate::GateOptions;

impl ChatSession {
    /// Applies what an attaching client chose: mode ("" keeps the current one), extra allow
    /// patterns, `--allowedTools`/`--disallowedTools` rules, interactivity. Errors name a bad
    /// mode; problems with patterns are returned.
    pub fn configure_permissions(
        &self,
        mode: &str,
        allow: Vec<String>,
        tool_rules: synapse_permissions::RuleSet,
        non_interactive: bool,
        approve_all: bool,
    ) -> Result<Vec<String>, AgentError> {
        let Some(gate) = &self.gate else {
            return Ok(Vec::new());
        };
        let mode = parse_mode(mode)?;
        Ok(gate.reconfigure(GateOptions {
            mode,
            allow,
            tool_rules,
            non_interactive,
            approve_all,
        }))
    }

    /// The permission mode and its summary (`None` without a gate).
    pub fn permission_summary(&self) -> Option<(String, String)> {
        self.gate
            .as_ref()
            .map(|g| (g.mode().as_str().to_string(), g.summary()))
    }

    /// `/permissions <mode>`: changes the mode; the shell moves into the matching sandbox
    /// before its next command. "" only reports.
    pub async fn set_permission_mode(&self, mode: &str) -> Result<(String, String), AgentError> {
        let Some(gate) = &self.gate else {
            return Err(AgentError::NoGate);
        };
        if let Some(mode) = parse_mode(mode)? {
            gate.set_mode(mode);
            tracing::info!(session = %self.id, mode = mode.as_str(), "permission mode changed");
        }
        Ok((gate.mode().as_str().to_string(), gate.summary()))
    }
}

/// "" → no change; otherwise one of the modes, or an error naming them.
fn parse_mode(mode: &str) -> Result<Option<Mode>, AgentError> {
    let mode = mode.trim();
    if mode.is_empty() {
        return Ok(None);
    }
    mode.parse::<Mode>()
        .map(Some)
        .map_err(|_| AgentError::UnknownMode(mode.to_string()))
}
