//! MCP resources and prompts, beside tools: `resources/list` (with templates), `resources/read`,
//! `prompts/list` and `prompts/get`, rendered as text for the agent (`mcp:<server>:resources`,
//! `mcp:<server>:read <uri>`), the CLI (`synapse mcp resources|read|prompts|prompt`) and the REPL
//! (`/mcp:<server>:<prompt> args`). A server that did not offer the capability in `initialize`
//! gets a plain "offers no resources" instead of a protocol error.

use serde_json::{Map, Value};

use super::McpManager;
use super::result::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, McpCallOutput};

/// What to ask a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Resources,
    Read(String),
    Prompts,
    Prompt {
        name: String,
        arguments: Map<String, Value>,
    },
}

impl McpManager {
    /// Runs `query` against `server` and renders the answer.
    pub async fn query(&self, server: &str, query: Query) -> McpCallOutput {
        let Some(srv) = self.server(server) else {
            if let Some(held) = self.inner.held.read().get(server) {
                return McpCallOutput::error(
                    super::EXIT_UNAVAILABLE,
                    format!("MCP server {server} is not started: {}", held.reason()),
                );
            }
            let known: Vec<String> = self.list().into_iter().map(|s| s.name).collect();
            return McpCallOutput::error(
                EXIT_USAGE,
                format!(
                    "no MCP server named {server:?} (configured: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
        };
        let conn = match srv.ensure_connected(&self.inner.events).await {
            Ok(c) => c,
            Err(reason) => return super::calls::unavailable(&srv, server, &reason),
        };
        let (has_resources, has_prompts) = conn.offers();
        let answer = match &query {
            Query::Resources | Query::Read(_) if !has_resources => {
                return McpCallOutput::ok(format!("MCP server {server} offers no resources.\n"));
            }
            Query::Prompts | Query::Prompt { .. } if !has_prompts => {
                return McpCallOutput::ok(format!("MCP server {server} offers no prompts.\n"));
            }
            Query::Resources => conn
                .resources()
                .await
                .map(|(r, t)| render_resources(server, &r, &t)),
            Query::Read(uri) => conn.read_resource(uri).await.map(|v| render_read(&v)),
            Query::Prompts => conn.prompts().await.map(|p| render_prompts(server, &p)),
            Query::Prompt { name, arguments } => conn
                .prompt(name, arguments.clone())
                .await
                .map(|v| render_prompt(&v)),
        };
        match answer {
            Ok(text) => McpCallOutput {
                stdout: text.into_bytes(),
                stderr: Vec::new(),
                exit_code: EXIT_OK,
            },
            Err(e) if e.breaks_connection() => {
                srv.call_failed(&conn, &e).await;
                super::calls::unavailable(&srv, server, &e.to_string())
            }
            Err(e) => McpCallOutput::error(EXIT_TOOL_ERROR, format!("mcp:{server}: {e}")),
        }
    }
}

fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl McpManager {
    /// `mcp:<server>:resources` and `mcp:<server>:read` of every server that offers resources
    /// and has no tool of those names (the catalog's, as the wrappers are), for `tools search`.
    pub fn resource_entries(&self) -> Vec<super::CatalogEntry> {
        self.catalog()
            .resource_commands()
            .iter()
            .map(|r| super::CatalogEntry {
                command: r.command.clone(),
                description: r.verb.description(&r.server),
            })
            .collect()
    }
}

/// One line per resource (`uri  name  (mime)  description`), then the templates.
pub fn render_resources(server: &str, resources: &[Value], templates: &[Value]) -> String {
    let mut out = String::new();
    if resources.is_empty() && templates.is_empty() {
        return format!("MCP server {server} lists no resources.\n");
    }
    for r in resources {
        out.push_str(&resource_line(field(r, "uri"), r));
    }
    if !templates.is_empty() {
        out.push_str("templates (fill the {…} parts):\n");
        for t in templates {
            out.push_str(&format!("  {}", resource_line(field(t, "uriTemplate"), t)));
        }
    }
    out.push_str(&format!(
        "Read one with: mcp:{server}:read <uri>  (or synapse mcp read {server} <uri>)\n"
    ));
    out
}

fn resource_line(uri: &str, v: &Value) -> String {
    let mut line = uri.to_string();
    for (key, wrap) in [("name", false), ("mimeType", true)] {
        let val = field(v, key);
        if !val.is_empty() && val != uri {
            line.push_str(&if wrap {
                format!("  ({val})")
            } else {
                format!("  {val}")
            });
        }
    }
    let desc = field(v, "description").lines().next().unwrap_or("");
    if !desc.is_empty() {
        line.push_str(&format!("  — {desc}"));
    }
    line.push('\n');
    line
}

/// The contents of a `resources/read` answer: text whole (the model's paths cap what it sees),
/// binary as a note.
pub fn render_read(v: &Value) -> String {
    let mut out = String::new();
    for c in v
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(text) = c.get("text").and_then(Value::as_str) {
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        } else if let Some(blob) = c.get("blob").and_then(Value::as_str) {
            out.push_str(&format!(
                "[binary {} ({}), about {} bytes, not shown]\n",
                field(c, "uri"),
                field(c, "mimeType"),
                blob.len() / 4 * 3
            ));
        }
    }
    out
}

/// One line per prompt with its arguments (`<required>` / `[optional]`).
pub fn render_prompts(server: &str, prompts: &[Value]) -> String {
    if prompts.is_empty() {
        return format!("MCP server {server} lists no prompts.\n");
    }
    let mut out = String::new();
    for p in prompts {
        let mut line = format!("/mcp:{server}:{}", field(p, "name"));
        for a in p
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = field(a, "name");
            if a.get("required").and_then(Value::as_bool) == Some(true) {
                line.push_str(&format!(" <{name}>"));
            } else {
                line.push_str(&format!(" [{name}]"));
            }
        }
        let desc = field(p, "description").lines().next().unwrap_or("");
        if !desc.is_empty() {
            line.push_str(&format!("  — {desc}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The text of a `prompts/get` answer: each message's text, in order (what a turn would send).
pub fn render_prompt(v: &Value) -> String {
    let mut parts = Vec::new();
    for m in v
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content");
        let text = match content {
            Some(c) if c.get("type").and_then(Value::as_str) == Some("text") => {
                field(c, "text").to_string()
            }
            Some(c) if c.get("type").and_then(Value::as_str) == Some("resource") => c
                .get("resource")
                .map(|r| field(r, "text").to_string())
                .unwrap_or_default(),
            Some(c) => format!("[{} content not shown]", field(c, "type")),
            None => String::new(),
        };
        if !text.is_empty() {
            parts.push(text);
        }
    }
    let mut out = parts.join("\n\n");
    out.push('\n');
    out
}

/// `key=value` words as prompt arguments; a word without `=` is an error naming it.
pub fn prompt_arguments(words: &[String]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    for w in words {
        let (k, v) = w
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| format!("prompt argument {w:?} is not name=value"))?;
        map.insert(k.to_string(), Value::String(v.to_string()));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_and_contents_render_for_people_and_models() {
        let r = render_resources(
            "docs",
            &[
                json!({"uri": "demo://a.md", "name": "a.md", "mimeType": "text/markdown", "description": "The A doc"}),
            ],
            &[json!({"uriTemplate": "demo://{id}", "name": "by id"})],
        );
        assert!(
            r.starts_with("demo://a.md  a.md  (text/markdown)  — The A doc\n"),
            "{r}"
        );
        assert!(r.contains("  demo://{id}  by id\n"), "{r}");
        let read = render_read(&json!({"contents": [
            {"uri": "demo://a.md", "text": "hello"},
            {"uri": "demo://b.png", "mimeType": "image/png", "blob": "AAAA"}
        ]}));
        assert_eq!(
            read,
            "hello\n[binary demo://b.png (image/png), about 3 bytes, not shown]\n"
        );
        let p = render_prompts(
            "w",
            &[
                json!({"name": "args-prompt", "description": "Weather", "arguments": [
                {"name": "city", "required": true}, {"name": "state"}]}),
            ],
        );
        assert_eq!(p, "/mcp:w:args-prompt <city> [state]  — Weather\n");
        let got = render_prompt(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "What's the weather in Paris?"}}]}));
        assert_eq!(got, "What's the weather in Paris?\n");
        assert_eq!(
            prompt_arguments(&["city=Paris".into()]).unwrap()["city"],
            "Paris"
        );
        assert!(prompt_arguments(&["Paris".into()]).is_err());
    }
}
