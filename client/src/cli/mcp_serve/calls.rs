//! What a `tools/call` of `synapse mcp serve` does at the daemon. Everything that runs goes
//! through `Tools.Exec` as the command the agent would type (`skill:<s>:<script> ARGS`,
//! `mcp:<server>:<tool> --json '{…}'`, `skill load NAME`, `task:general --prompt …`), gated in
//! the caller folder's permission mode with its sandbox and non-interactive: what would ask is
//! refused with the daemon's own words, naming what allows it. `skills_search` asks
//! `Skills.Search`. The offer itself is read from `Skills.List` and `Mcp.List`.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::tools_client::ToolsClient;
use synapse_shared::proto::{ExecRequest, ListSkillsRequest, McpListRequest, SearchSkillsRequest};
use tonic::transport::Channel;

use super::catalog::{Action, Offer};

/// How long a `task` sub-agent may run (the most a command may be given).
pub const TASK_TIMEOUT: Duration = Duration::from_secs(600);

/// A call's answer: its text and whether it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub text: String,
    pub ok: bool,
}

impl Outcome {
    pub fn failed(text: String) -> Self {
        Self { text, ok: false }
    }
}

/// The offer for a caller in `folder`.
pub async fn offer(
    channel: &Channel,
    folder: &Path,
    env: &HashMap<String, String>,
) -> Result<Offer, String> {
    let cwd = folder.display().to_string();
    let mut skills = SkillsClient::new(channel.clone());
    let mut mcp = crate::cli::mcp_query::mcp_client(channel.clone());
    let (skills, servers) = tokio::join!(
        skills.list(ListSkillsRequest { cwd: cwd.clone() }),
        mcp.list(McpListRequest {
            include_tools: true,
            cwd,
            env: env.clone(),
            session: String::new(),
        })
    );
    let skills = skills
        .map_err(|s| format!("the daemon could not list skills: {}", s.message()))?
        .into_inner();
    let servers = servers
        .map_err(|s| format!("the daemon could not list MCP servers: {}", s.message()))?
        .into_inner();
    Ok(Offer::build(&skills.skills, &servers.servers))
}

/// Runs `action` with the call's `arguments` for a caller in `folder`.
pub async fn call(
    channel: &Channel,
    action: &Action,
    arguments: &JsonObject,
    folder: &Path,
    env: &HashMap<String, String>,
    offer: &Offer,
) -> Outcome {
    let command = match command_line(action, arguments) {
        Ok(Some(line)) => line,
        Ok(None) => return search(channel, arguments, folder, env, offer).await,
        Err(bad) => return Outcome::failed(bad),
    };
    let timeout = match action {
        Action::Task => TASK_TIMEOUT,
        _ => Duration::ZERO,
    };
    let outcome = exec(channel, command, timeout, folder, env).await;
    match action {
        Action::Mcp { .. } => Outcome {
            text: server_text(&outcome.text),
            ..outcome
        },
        _ => outcome,
    }
}

/// A re-offered tool's result as its server gave it: without the newline the shell's output
/// ends with and the `[exit code: N]` line (`isError` says that).
fn server_text(output: &str) -> String {
    let text = output.strip_suffix('\n').unwrap_or(output);
    let text = match text.rsplit_once('\n') {
        Some((head, last)) if is_exit_marker(last) => head,
        None if is_exit_marker(text) => "",
        _ => text,
    };
    text.strip_suffix('\n').unwrap_or(text).to_string()
}

fn is_exit_marker(line: &str) -> bool {
    line.strip_prefix("[exit code: ")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|code| code.parse::<i32>().is_ok())
}

/// The command line an action runs; `None` for the search, which is no command.
pub fn command_line(action: &Action, arguments: &JsonObject) -> Result<Option<String>, String> {
    let line = match action {
        Action::SkillsSearch => return Ok(None),
        Action::SkillLoad => format!("skill load {}", quote(&string_arg(arguments, "name")?)?),
        Action::Task => {
            let prompt = string_arg(arguments, "prompt")?;
            let description = match arguments.get("description") {
                Some(Value::String(d)) if !d.trim().is_empty() => d.clone(),
                None | Some(Value::Null) | Some(Value::String(_)) => words(&prompt, 5),
                Some(other) => return Err(format!("`description` must be a string (got {other})")),
            };
            format!(
                "task:general --description {} --prompt {}",
                quote(&description)?,
                quote(&prompt)?
            )
        }
        Action::Script { command } => {
            let args = match arguments.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        Value::Bool(b) => Ok(b.to_string()),
                        other => Err(format!("`args` must hold strings (got {other})")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(other) => {
                    return Err(format!("`args` must be an array of strings (got {other})"));
                }
            };
            let mut line = command.clone();
            for a in &args {
                line.push(' ');
                line.push_str(&quote(a)?);
            }
            line
        }
        Action::Mcp { command } => {
            let json = Value::Object(arguments.clone()).to_string();
            format!("{command} --json {}", quote(&json)?)
        }
    };
    Ok(Some(line))
}

fn string_arg(arguments: &JsonObject, name: &str) -> Result<String, String> {
    match arguments.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            Err(format!("`{name}` is required (a non-empty string)"))
        }
        Some(other) => Err(format!("`{name}` must be a string (got {other})")),
    }
}

fn quote(word: &str) -> Result<String, String> {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .map_err(|_| "an argument holds a NUL byte, which no command line can carry".to_string())
}

/// The first `n` words of `text`, for a task's description when the caller gave none.
fn words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

async fn exec(
    channel: &Channel,
    command: String,
    timeout: Duration,
    folder: &Path,
    env: &HashMap<String, String>,
) -> Outcome {
    let request = ExecRequest {
        session: String::new(),
        command,
        restart: false,
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        cwd: folder.display().to_string(),
        env: env.clone(),
        permission_mode: String::new(),
        settings_mode: true,
    };
    match ToolsClient::new(channel.clone()).exec(request).await {
        Ok(r) => {
            let r = r.into_inner();
            Outcome {
                ok: r.exit_code == 0,
                text: if r.output.is_empty() && r.exit_code != 0 {
                    format!("the command failed with exit code {}", r.exit_code)
                } else {
                    r.output
                },
            }
        }
        Err(status) => Outcome::failed(format!("synapsed: {}", status.message())),
    }
}

async fn search(
    channel: &Channel,
    arguments: &JsonObject,
    folder: &Path,
    env: &HashMap<String, String>,
    offer: &Offer,
) -> Outcome {
    let query = match string_arg(arguments, "query") {
        Ok(q) => q,
        Err(bad) => return Outcome::failed(bad),
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => 0,
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n > 0 => n,
            _ => return Outcome::failed(format!("`limit` must be a positive integer (got {v})")),
        },
    };
    let request = SearchSkillsRequest {
        query,
        limit,
        cwd: folder.display().to_string(),
        local: false,
        env: env.clone(),
    };
    match SkillsClient::new(channel.clone()).search(request).await {
        Ok(r) => Outcome {
            text: search_text(&r.into_inner(), offer),
            ok: true,
        },
        Err(status) => Outcome::failed(format!("synapsed: {}", status.message())),
    }
}

/// The search's answer: each skill with its description and the tools of its scripts.
pub fn search_text(r: &synapse_shared::proto::SearchSkillsResponse, offer: &Offer) -> String {
    if r.skills.is_empty() {
        return "No skill fits.".to_string();
    }
    let how = match r.ranking.as_str() {
        "model" => "matched by Synapse's skill sub-agent".to_string(),
        _ if r.local_reason.is_empty() => "matched by keywords".to_string(),
        _ => format!("matched by keywords: {}", r.local_reason),
    };
    let mut out = format!("{} skill(s), best first ({how}):\n", r.skills.len());
    for s in &r.skills {
        out.push_str(&format!("\n{} — {}\n", s.name, s.description.trim()));
        let tools: Vec<String> = s
            .scripts
            .iter()
            .filter_map(|script| {
                offer.tools.iter().find(|t| {
                    matches!(&t.action, Action::Script { command } if *command == script.command)
                })
            })
            .map(|t| t.tool.name.to_string())
            .collect();
        if !tools.is_empty() {
            out.push_str(&format!("  tools: {}\n", tools.join(", ")));
        }
    }
    out.push_str("\nRead a skill's instructions with skill_load.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn actions_become_the_command_lines_the_agent_would_type() {
        let script = Action::Script {
            command: "skill:pdf:extract".into(),
        };
        assert_eq!(
            command_line(&script, &args(json!({"args": ["a b.pdf", "--pages", 3]}))),
            Ok(Some("skill:pdf:extract 'a b.pdf' --pages 3".into()))
        );
        assert_eq!(
            command_line(&script, &JsonObject::new()),
            Ok(Some("skill:pdf:extract".into()))
        );
        let mcp = Action::Mcp {
            command: "mcp:fs:read_file".into(),
        };
        let line = command_line(&mcp, &args(json!({"path": "it's"})))
            .unwrap()
            .unwrap();
        assert_eq!(
            shlex::split(&line).unwrap(),
            ["mcp:fs:read_file", "--json", r#"{"path":"it's"}"#]
        );
        assert_eq!(
            command_line(&Action::SkillLoad, &args(json!({"name": "pdf"}))),
            Ok(Some("skill load pdf".into()))
        );
        assert_eq!(
            command_line(&Action::Task, &args(json!({"prompt": "count the files here please now"}))),
            Ok(Some(
                "task:general --description 'count the files here please' --prompt 'count the files here please now'".into()
            ))
        );
        assert_eq!(
            command_line(&Action::SkillsSearch, &JsonObject::new()),
            Ok(None)
        );
    }

    #[test]
    fn a_reoffered_tool_answers_its_servers_own_text() {
        assert_eq!(server_text("hello\n"), "hello");
        assert_eq!(server_text("two\nlines\n"), "two\nlines");
        assert_eq!(server_text("it failed\n[exit code: 1]"), "it failed");
        assert_eq!(server_text("it failed\n[exit code: 1]\n"), "it failed");
        assert_eq!(server_text("[exit code: 3]"), "");
        assert_eq!(server_text("[exit code: x]"), "[exit code: x]");
    }

    #[test]
    fn bad_arguments_say_which_and_what_was_expected() {
        let script = Action::Script {
            command: "skill:pdf:extract".into(),
        };
        assert_eq!(
            command_line(&script, &args(json!({"args": "x"}))),
            Err(r#"`args` must be an array of strings (got "x")"#.into())
        );
        assert_eq!(
            command_line(&script, &args(json!({"args": [{"a": 1}]}))),
            Err(r#"`args` must hold strings (got {"a":1})"#.into())
        );
        assert_eq!(
            command_line(&Action::Task, &JsonObject::new()),
            Err("`prompt` is required (a non-empty string)".into())
        );
        assert_eq!(
            command_line(&Action::SkillLoad, &args(json!({"name": 3}))),
            Err("`name` must be a string (got 3)".into())
        );
    }
}
