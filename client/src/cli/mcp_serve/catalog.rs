//! What `synapse mcp serve` offers, read fresh from the daemon for every listing: three fixed
//! tools (`skills_search`, `skill_load`, `task`), one tool per skill script the caller's folder
//! sees (`skill__<skill>__<script>`), and every tool of the daemon's connected MCP servers
//! (`<server>__<tool>`, with the server's own description and input schema). Each offered tool
//! carries the [`Action`] a call runs.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use synapse_shared::proto::{McpServer, McpServerState, SkillInfo};

use super::names::{tool_name, unique};

/// What calling an offered tool does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Skills.Search for a need.
    SkillsSearch,
    /// The agent's `skill load <name>`.
    SkillLoad,
    /// A `task:general` sub-agent.
    Task,
    /// A `skill:<skill>:<script>` command with the call's `args`.
    Script { command: String },
    /// An `mcp:<server>:<tool>` command with the call's arguments as its JSON.
    Mcp { command: String },
}

/// One offered tool.
#[derive(Debug, Clone)]
pub struct Offered {
    pub tool: Tool,
    pub action: Action,
}

/// The whole offer of one listing.
#[derive(Debug, Clone, Default)]
pub struct Offer {
    pub tools: Vec<Offered>,
}

impl Offer {
    /// The offer from the skills and MCP servers the caller's folder sees.
    pub fn build(skills: &[SkillInfo], servers: &[McpServer]) -> Offer {
        let mut taken = HashSet::new();
        let mut tools = fixed_tools();
        for t in &tools {
            taken.insert(t.tool.name.to_string());
        }
        for skill in skills.iter().filter(|s| offers_scripts(s)) {
            for script in &skill.scripts {
                let short = script.command.rsplit(':').next().unwrap_or(&script.command);
                let name = unique(tool_name(&["skill", &skill.name, short]), &mut taken);
                tools.push(Offered {
                    tool: Tool::new(name, script_description(skill, script), args_schema(script)),
                    action: Action::Script {
                        command: script.command.clone(),
                    },
                });
            }
        }
        for server in servers
            .iter()
            .filter(|s| s.state == McpServerState::Ready as i32)
        {
            for t in &server.tools {
                let tool = if t.tool.is_empty() {
                    t.command.rsplit(':').next().unwrap_or(&t.command)
                } else {
                    &t.tool
                };
                let name = unique(tool_name(&[&server.name, tool]), &mut taken);
                let description = if t.full_description.is_empty() {
                    &t.description
                } else {
                    &t.full_description
                };
                tools.push(Offered {
                    tool: Tool::new(name, description.clone(), mcp_schema(&t.input_schema_json)),
                    action: Action::Mcp {
                        command: t.command.clone(),
                    },
                });
            }
        }
        Offer { tools }
    }

    /// The action behind the tool called `name`.
    pub fn action(&self, name: &str) -> Option<&Action> {
        self.tools
            .iter()
            .find(|t| t.tool.name == name)
            .map(|t| &t.action)
    }

    /// The names offered, in order (what a change of the list is judged by).
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.tool.name.to_string()).collect()
    }
}

/// Skills whose scripts a model may run: loaded, enabled, not hidden from models, not the skill
/// sub-agent's own meta skills.
fn offers_scripts(s: &SkillInfo) -> bool {
    s.error.is_empty() && s.enabled && !s.disable_model_invocation && !s.meta
}

fn fixed_tools() -> Vec<Offered> {
    let search = object(
        json!({
            "query": {"type": "string", "description": "What the skill should do, in words."},
            "limit": {"type": "integer", "minimum": 1, "description": "At most this many skills (default 20)."}
        }),
        &["query"],
    );
    let load = object(
        json!({"name": {"type": "string", "description": "The skill's name (or its id, source:name)."}}),
        &["name"],
    );
    let task = object(
        json!({
            "prompt": {"type": "string", "description": "The whole task, self-contained: the sub-agent sees nothing else."},
            "description": {"type": "string", "description": "A few words naming the task (shown in Synapse's logs)."}
        }),
        &["prompt"],
    );
    vec![
        Offered {
            tool: Tool::new(
                "skills_search",
                "Search Synapse's skill library for skills that fit a need (matched by meaning \
                 by Synapse's skill sub-agent, else by keywords). Answers each skill's name, \
                 description and the tools of its scripts; read one with skill_load.",
                search,
            ),
            action: Action::SkillsSearch,
        },
        Offered {
            tool: Tool::new(
                "skill_load",
                "Load a Synapse skill: its SKILL.md instructions and the list of its bundled \
                 files, exactly as Synapse's `skill load <name>` prints them.",
                load,
            ),
            action: Action::SkillLoad,
        },
        Offered {
            tool: Tool::new(
                "task",
                "Run a Synapse sub-agent in this folder (its own shell, Synapse's skills and MCP \
                 tools, under the folder's permission rules and sandbox) and return its answer. \
                 What would need a person's approval is refused, saying how to allow it.",
                task,
            ),
            action: Action::Task,
        },
    ]
}

fn script_description(
    skill: &SkillInfo,
    script: &synapse_shared::proto::SkillScriptInfo,
) -> String {
    let doc = if !script.help.trim().is_empty() {
        script.help.trim().to_string()
    } else if !script.summary.is_empty() {
        script.summary.clone()
    } else {
        format!("Script of skill {}.", skill.name)
    };
    let usage = if script.usage.is_empty() {
        String::new()
    } else {
        format!(" {}", script.usage)
    };
    format!(
        "{doc}\n\nRuns `{}{usage}` (skill {}: {}) in this folder under its permission rules and \
         sandbox; `args` are its command-line words.",
        script.command,
        skill.name,
        skill.description.trim()
    )
}

fn args_schema(script: &synapse_shared::proto::SkillScriptInfo) -> JsonObject {
    let what = if script.usage.is_empty() {
        "The script's command-line arguments, one word each.".to_string()
    } else {
        format!(
            "The script's command-line arguments, one word each: {}",
            script.usage
        )
    };
    object(
        json!({"args": {"type": "array", "items": {"type": "string"}, "description": what}}),
        &[],
    )
}

/// The server's input schema; one that does not parse as an object is offered as "any object"
/// (the daemon still checks the arguments against the real one).
fn mcp_schema(text: &str) -> Arc<JsonObject> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut m)) => {
            m.entry("type").or_insert_with(|| json!("object"));
            Arc::new(m)
        }
        _ => Arc::new(object(json!({}), &[])),
    }
}

fn object(properties: Value, required: &[&str]) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("type".into(), json!("object"));
    m.insert("properties".into(), properties);
    if !required.is_empty() {
        m.insert("required".into(), json!(required));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_shared::proto::{McpTool, SkillScriptInfo};

    fn skill(name: &str, scripts: &[&str]) -> SkillInfo {
        SkillInfo {
            name: name.into(),
            description: format!("{name} things"),
            enabled: true,
            scripts: scripts
                .iter()
                .map(|s| SkillScriptInfo {
                    command: format!("skill:{name}:{s}"),
                    summary: format!("Does {s}."),
                    usage: "<file>".into(),
                    help: format!("Does {s}.\n\nUsage: {s} <file>"),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn server(name: &str, state: McpServerState, tools: &[&str]) -> McpServer {
        McpServer {
            name: name.into(),
            state: state as i32,
            tools: tools
                .iter()
                .map(|t| McpTool {
                    command: format!("mcp:{name}:{t}"),
                    description: "first".into(),
                    tool: (*t).into(),
                    full_description: format!("first\nsecond of {t}"),
                    input_schema_json: r#"{"type":"object","properties":{"x":{"type":"string"}}}"#
                        .into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn scripts_and_ready_servers_become_tools_with_their_own_texts() {
        let mut hidden = skill("hidden", &["run"]);
        hidden.disable_model_invocation = true;
        let offer = Offer::build(
            &[skill("pdf", &["extract", "office.unpack"]), hidden],
            &[
                server("fs", McpServerState::Ready, &["read_file"]),
                server("down", McpServerState::Failed, &["gone"]),
            ],
        );
        assert_eq!(
            offer.names(),
            [
                "skills_search",
                "skill_load",
                "task",
                "skill__pdf__extract",
                "skill__pdf__office_unpack",
                "fs__read_file"
            ]
        );
        let extract = &offer.tools[3].tool;
        let text = extract.description.as_deref().unwrap_or("");
        assert!(
            text.starts_with("Does extract.\n\nUsage: extract <file>"),
            "{text}"
        );
        assert!(text.contains("`skill:pdf:extract <file>`"), "{text}");
        assert_eq!(extract.input_schema["properties"]["args"]["type"], "array");
        let fs = &offer.tools[5].tool;
        assert_eq!(
            fs.description.as_deref(),
            Some("first\nsecond of read_file")
        );
        assert_eq!(fs.input_schema["properties"]["x"]["type"], "string");
        assert_eq!(
            offer.action("fs__read_file"),
            Some(&Action::Mcp {
                command: "mcp:fs:read_file".into()
            })
        );
        assert_eq!(offer.action("nope"), None);
    }

    #[test]
    fn clashing_names_stay_unique_and_a_bad_schema_is_any_object() {
        let mut s = server("skill", McpServerState::Ready, &["pdf__extract"]);
        s.tools[0].input_schema_json = "not json".into();
        let offer = Offer::build(&[skill("pdf", &["extract"])], &[s]);
        let names = offer.names();
        assert_eq!(names[3], "skill__pdf__extract");
        assert_eq!(names[4], "skill__pdf__extract_2");
        assert_eq!(offer.tools[4].tool.input_schema["type"], "object");
    }
}
