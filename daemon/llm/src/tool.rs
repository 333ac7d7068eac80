//! The one tool the model sees: `Bash {command, restart}`. Its definition lives here and nowhere
//! else; the agent loop sends [`bash_tool`] with every request and decodes each call's input with
//! [`BashInput::from_input`] before handing the command string to the shell router.

use serde::Deserialize;
use serde_json::{Value, json};

use super::types::ToolDefinition;

/// The tool's name as the model sees it.
pub const BASH_TOOL_NAME: &str = "Bash";

const BASH_TOOL_DESCRIPTION: &str = "\
Run a command in the session's persistent bash shell (the working directory and exported \
variables persist) and get its output and exit code. The agent shell commands and extension \
commands described in the system prompt run the same way; `<command> --help` documents any of \
them. Set restart to true to start a fresh shell first.";

/// The `Bash` tool definition: input `{command: string, restart: boolean}`, only `command` required.
pub fn bash_tool() -> ToolDefinition {
    ToolDefinition {
        name: BASH_TOOL_NAME.to_string(),
        description: BASH_TOOL_DESCRIPTION.to_string(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command to run, exactly as it would be typed into bash."
                },
                "restart": {
                    "type": "boolean",
                    "description": "Start a fresh shell before running the command. Default false."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

/// The decoded input of one `Bash` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BashInput {
    /// The command line to run, as it would be typed into bash.
    pub command: String,
    /// Start a fresh shell before running the command; false when the model leaves it out.
    #[serde(default)]
    pub restart: bool,
}

/// Why a tool call's input could not be used; the message goes back to the model as the result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolInputError {
    /// The model called a tool other than [`BASH_TOOL_NAME`].
    #[error("unknown tool {name:?}: the only tool is {BASH_TOOL_NAME}")]
    UnknownTool {
        /// The tool name the model used.
        name: String,
    },
    /// The input is not a `{command, restart}` object.
    #[error(
        "invalid {BASH_TOOL_NAME} input: {reason} (expected {{\"command\": string, \"restart\": boolean}})"
    )]
    Invalid {
        /// serde's description of what did not fit (a missing `command`, a wrong type, ...).
        reason: String,
    },
}

impl BashInput {
    /// Decodes a tool call by name and input, as they arrive in `LlmEvent::ToolCallDone`.
    pub fn from_input(name: &str, input: &Value) -> Result<Self, ToolInputError> {
        if name != BASH_TOOL_NAME {
            return Err(ToolInputError::UnknownTool {
                name: name.to_string(),
            });
        }
        BashInput::deserialize(input).map_err(|e| ToolInputError::Invalid {
            reason: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_requires_only_command() {
        let tool = bash_tool();
        assert_eq!(tool.name, "Bash");
        assert_eq!(tool.input_schema["required"], json!(["command"]));
        assert_eq!(
            tool.input_schema["properties"]["restart"]["type"],
            "boolean"
        );
    }

    #[test]
    fn input_decodes_with_default_restart_and_rejects_bad_shapes() {
        let ok = BashInput::from_input("Bash", &json!({"command": "ls"})).unwrap();
        assert_eq!(
            ok,
            BashInput {
                command: "ls".into(),
                restart: false
            }
        );
        let err = BashInput::from_input("Bash", &json!({"cmd": "ls"})).unwrap_err();
        assert!(err.to_string().contains("command"), "{err}");
        let err = BashInput::from_input("Read", &json!({})).unwrap_err();
        assert!(err.to_string().contains("only tool is Bash"), "{err}");
    }
}
