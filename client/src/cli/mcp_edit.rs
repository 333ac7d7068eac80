//! `synapse mcp add|add-json|remove|get`, as `claude mcp add` users expect: the entry is built
//! here from the command line (or taken as given by `add-json`) and checked and written by the
//! daemon (`Mcp.Edit`), which then connects it; `get` shows one server's entry (secrets masked),
//! scope, state and tools.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use synapse_shared::paths::Paths;
use synapse_shared::proto::McpEditRequest;
use synapse_shared::proto::McpListRequest;
use synapse_shared::proto::mcp_client::McpClient;

use crate::connect;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// $SYNAPSE_HOME/mcp/mcp_servers.json: every project.
    User,
    /// <project root>/.mcp.json: this project, shared with everyone who clones it (starts once
    /// the folder is trusted and the server approved).
    Project,
    /// This project, for you only: kept in $SYNAPSE_HOME/mcp/local (never in the project); no
    /// trust or approval needed.
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    Stdio,
    Http,
    /// The legacy HTTP+SSE transport: not supported (the error says what to do instead).
    Sse,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  synapse mcp add memory -- npx -y @modelcontextprotocol/server-memory
  synapse mcp add git -e GIT_AUTHOR=me -- uvx mcp-server-git --repository .
  synapse mcp add --transport http docs https://example.com/mcp -H \"Authorization: Bearer $TOKEN\"
  synapse mcp add --scope project fs -- npx -y @modelcontextprotocol/server-filesystem .
  synapse mcp add --scope local scratch -- npx -y @modelcontextprotocol/server-memory
  MCP_CLIENT_SECRET=… synapse mcp add --client-id my-app --client-secret --callback-port 8123 \
      linear https://mcp.linear.app/mcp")]
pub struct AddArgs {
    /// Server name: the <server> of mcp:<server>:<tool>.
    pub name: String,
    /// The command to run (stdio), or the server's URL (http).
    pub command_or_url: String,
    /// Arguments of the command (put `--` before them when they start with `-`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Where the entry goes.
    #[arg(long, short = 's', value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// stdio (a command) or http (a Streamable HTTP URL); guessed from an http(s):// URL. Legacy
    /// sse is refused with the way around it.
    #[arg(long, short = 't', value_enum)]
    pub transport: Option<TransportArg>,
    /// Environment variable for the server, KEY=VALUE (repeatable).
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// HTTP header, "Name: value" (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

/// OAuth client flags of a remote server, as `claude mcp add` has them.
#[derive(Debug, Args, Default)]
pub struct OAuthArgs {
    /// OAuth client id registered for Synapse with the server's authorization server (skips
    /// dynamic client registration).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// Ask for the OAuth client secret (read from MCP_CLIENT_SECRET when set, else typed without
    /// echo); the daemon keeps it with the tokens, never in the config file.
    #[arg(long)]
    pub client_secret: bool,
    /// Fixed port for the login's redirect, http://127.0.0.1:PORT/callback (the one registered
    /// with the client id).
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub callback_port: Option<u16>,
}

impl OAuthArgs {
    /// Adds `oauth.clientId`/`callbackPort` to an http entry.
    fn apply(&self, entry: &mut Value) -> Result<(), String> {
        if self.client_id.is_none() && self.callback_port.is_none() && !self.client_secret {
            return Ok(());
        }
        if entry.get("url").is_none() {
            return Err(
                "--client-id, --client-secret and --callback-port are for remote (http) servers"
                    .into(),
            );
        }
        let oauth = entry
            .as_object_mut()
            .map(|e| e.entry("oauth").or_insert_with(|| json!({})));
        let Some(oauth) = oauth.and_then(Value::as_object_mut) else {
            return Err("\"oauth\" must be an object".into());
        };
        if let Some(id) = &self.client_id {
            oauth.insert("clientId".into(), Value::String(id.clone()));
        }
        if let Some(port) = self.callback_port {
            oauth.insert("callbackPort".into(), json!(port));
        }
        Ok(())
    }
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  synapse mcp add-json memory '{\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]}'
  synapse mcp add-json --scope local docs '{\"type\": \"http\", \"url\": \"https://example.com/mcp\"}'")]
pub struct AddJsonArgs {
    /// Server name: the <server> of mcp:<server>:<tool>.
    pub name: String,
    /// The entry as one `mcpServers` value holds it, e.g. '{"command": "npx", "args": [...]}'.
    pub json: String,
    /// Where the entry goes.
    #[arg(long, short = 's', value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// Ask for the OAuth client secret (MCP_CLIENT_SECRET, else a prompt); kept with the
    /// tokens, never in the config file.
    #[arg(long)]
    pub client_secret: bool,
}

/// The config entry `add` writes.
pub fn entry(a: &AddArgs) -> Result<Value, String> {
    let looks_http =
        a.command_or_url.starts_with("http://") || a.command_or_url.starts_with("https://");
    let transport = a.transport.unwrap_or(if looks_http {
        TransportArg::Http
    } else {
        TransportArg::Stdio
    });
    match transport {
        TransportArg::Sse => Err(format!(
            "the legacy SSE transport is not supported (rmcp, the MCP library Synapse uses, has \
             no client for it): if the server also speaks Streamable HTTP (usually at /mcp), add \
             it with --transport http and that URL; otherwise bridge it over stdio: \
             synapse mcp add {} -- npx -y mcp-remote {} --transport sse-only",
            a.name, a.command_or_url
        )),
        TransportArg::Http => {
            if !looks_http {
                return Err(format!(
                    "{:?} is not an http:// or https:// URL",
                    a.command_or_url
                ));
            }
            if !a.args.is_empty() || !a.env.is_empty() {
                return Err(
                    "an http server takes no command arguments or -e; use -H for headers".into(),
                );
            }
            let mut headers = Map::new();
            for h in &a.headers {
                let (k, v) = h
                    .split_once(':')
                    .ok_or_else(|| format!("header {h:?} is not \"Name: value\""))?;
                headers.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
            }
            let mut e = json!({"type": "http", "url": a.command_or_url});
            if !headers.is_empty() {
                e["headers"] = Value::Object(headers);
            }
            Ok(e)
        }
        TransportArg::Stdio => {
            if !a.headers.is_empty() {
                return Err("-H is for http servers".into());
            }
            let mut env = Map::new();
            for kv in &a.env {
                let (k, v) = kv
                    .split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| format!("-e {kv:?} is not KEY=VALUE"))?;
                env.insert(k.to_string(), Value::String(v.to_string()));
            }
            let mut e = json!({"command": a.command_or_url, "args": a.args});
            if !env.is_empty() {
                e["env"] = Value::Object(env);
            }
            Ok(e)
        }
    }
}

fn scope_name(s: Option<Scope>) -> String {
    match s {
        Some(Scope::User) => "user".into(),
        Some(Scope::Project) => "project".into(),
        Some(Scope::Local) => "local".into(),
        None => String::new(),
    }
}

/// The secret `--client-secret` asks for, or nothing.
fn client_secret(wanted: bool, name: &str) -> Result<String, String> {
    if wanted {
        super::mcp_secret::read(name)
    } else {
        Ok(String::new())
    }
}

async fn edit(paths: &Paths, request: McpEditRequest) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    match McpClient::new(channel).edit(request).await {
        Ok(r) => {
            let r = r.into_inner();
            println!("Saved {}.", r.file);
            if !r.note.is_empty() {
                println!("{}", r.note);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(status) => {
            eprintln!("synapse: {}", status.message());
            Ok(ExitCode::FAILURE)
        }
    }
}

fn cwd() -> String {
    std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default()
}

pub async fn add(paths: &Paths, a: AddArgs) -> anyhow::Result<ExitCode> {
    let built = entry(&a).and_then(|mut e| {
        a.oauth.apply(&mut e)?;
        Ok(e)
    });
    let (entry, client_secret) =
        match built.and_then(|e| Ok((e, client_secret(a.oauth.client_secret, &a.name)?))) {
            Ok(both) => both,
            Err(e) => {
                eprintln!("synapse mcp add: {e}");
                return Ok(ExitCode::from(2));
            }
        };
    edit(
        paths,
        McpEditRequest {
            action: "add".into(),
            name: a.name,
            scope: scope_name(Some(a.scope)),
            entry_json: entry.to_string(),
            cwd: cwd(),
            env: super::mcp::caller_env(),
            client_secret,
        },
    )
    .await
}

/// `mcp add-json <name> '<json>'`: the entry as given; the daemon checks it (naming the field
/// that is wrong) before writing it.
pub async fn add_json(paths: &Paths, a: AddJsonArgs) -> anyhow::Result<ExitCode> {
    let client_secret = match client_secret(a.client_secret, &a.name) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("synapse mcp add-json: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    edit(
        paths,
        McpEditRequest {
            action: "add".into(),
            name: a.name,
            scope: scope_name(Some(a.scope)),
            entry_json: a.json,
            cwd: cwd(),
            env: super::mcp::caller_env(),
            client_secret,
        },
    )
    .await
}

pub async fn remove(paths: &Paths, name: String, scope: Option<Scope>) -> anyhow::Result<ExitCode> {
    edit(
        paths,
        McpEditRequest {
            action: "remove".into(),
            name,
            scope: scope_name(scope),
            entry_json: String::new(),
            cwd: cwd(),
            ..Default::default()
        },
    )
    .await
}

/// `mcp get <name>`: state, where it is configured, its entry (env and header values masked)
/// and its tools.
pub async fn get(paths: &Paths, name: String) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    let servers = McpClient::new(channel)
        .list(McpListRequest {
            include_tools: true,
            cwd: super::mcp::caller_cwd(),
            env: super::mcp::caller_env(),
            session: String::new(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner()
        .servers;
    let Some(s) = servers.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        eprintln!(
            "synapse: no MCP server {name:?}; configured: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return Ok(ExitCode::FAILURE);
    };
    println!("{}", s.name);
    println!("  state:     {}", super::mcp::state_label(s));
    if !s.reason.is_empty() {
        println!("  reason:    {}", s.reason);
    }
    println!("  transport: {}", s.transport);
    if !s.scope.is_empty() {
        println!("  scope:     {}", s.scope);
    }
    println!("  config:    {}", s.source);
    if let Some(e) = configured_entry(&s.source, &s.name) {
        for line in serde_json::to_string_pretty(&masked(e))?.lines() {
            println!("    {line}");
        }
    }
    println!("  tools:     {}", s.tool_count);
    for t in &s.tools {
        println!("    {}  {}", t.command, t.description);
    }
    Ok(ExitCode::SUCCESS)
}

/// The entry of `name` in `file`: its `mcpServers`/`servers` map, else (`~/.claude.json`) the
/// map of the `projects` entry nearest above the current folder.
fn configured_entry(file: &str, name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(file).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let in_map = |doc: &Value| {
        ["mcpServers", "servers"]
            .iter()
            .find_map(|k| doc.get(k)?.get(name).cloned())
    };
    if let Some(found) = in_map(&v) {
        return Some(found);
    }
    let cwd = std::env::current_dir().ok()?;
    v.get("projects")?
        .as_object()?
        .iter()
        .filter(|(root, _)| cwd.starts_with(root.as_str()))
        .max_by_key(|(root, _)| root.len())
        .and_then(|(_, entry)| in_map(entry))
}

/// Values of `env` and `headers`, and an `oauth.clientSecret`, shown as `***` (keys stay).
fn masked(mut e: Value) -> Value {
    for key in ["env", "headers"] {
        if let Some(map) = e.get_mut(key).and_then(Value::as_object_mut) {
            let keys: BTreeMap<String, ()> = map.keys().map(|k| (k.clone(), ())).collect();
            for k in keys.keys() {
                map.insert(k.clone(), Value::String("***".into()));
            }
        }
    }
    if let Some(secret) = e.pointer_mut("/oauth/clientSecret") {
        *secret = Value::String("***".into());
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: &str, target: &str, rest: &[&str]) -> AddArgs {
        AddArgs {
            name: name.into(),
            command_or_url: target.into(),
            args: rest.iter().map(|s| s.to_string()).collect(),
            scope: Scope::User,
            transport: None,
            env: vec![],
            headers: vec![],
            oauth: OAuthArgs::default(),
        }
    }

    #[test]
    fn entries_are_built_like_claude_mcp_add() {
        let mut a = args("git", "uvx", &["mcp-server-git", "--repository", "."]);
        a.env = vec!["TOKEN=abc=def".into()];
        assert_eq!(
            entry(&a).unwrap(),
            json!({"command": "uvx", "args": ["mcp-server-git", "--repository", "."], "env": {"TOKEN": "abc=def"}})
        );
        let mut h = args("docs", "https://x.test/mcp", &[]);
        h.headers = vec!["Authorization: Bearer t:1".into()];
        assert_eq!(
            entry(&h).unwrap(),
            json!({"type": "http", "url": "https://x.test/mcp", "headers": {"Authorization": "Bearer t:1"}})
        );
        let mut bad = args("x", "npx", &[]);
        bad.env = vec!["NOEQUALS".into()];
        assert!(entry(&bad).unwrap_err().contains("KEY=VALUE"));
        let mut not_url = args("x", "npx", &[]);
        not_url.transport = Some(TransportArg::Http);
        assert!(entry(&not_url).is_err());
        assert_eq!(
            masked(json!({"command": "x", "env": {"K": "secret"}})),
            json!({"command": "x", "env": {"K": "***"}})
        );
        assert_eq!(
            masked(json!({"url": "u", "oauth": {"clientId": "c", "clientSecret": "s"}})),
            json!({"url": "u", "oauth": {"clientId": "c", "clientSecret": "***"}})
        );
        let mut remote = args("docs", "https://x.test/mcp", &[]);
        remote.oauth.client_id = Some("my-app".into());
        remote.oauth.callback_port = Some(8123);
        let mut e = entry(&remote).unwrap();
        remote.oauth.apply(&mut e).unwrap();
        assert_eq!(
            e["oauth"],
            json!({"clientId": "my-app", "callbackPort": 8123})
        );
        let mut local = args("x", "npx", &[]);
        local.oauth.client_id = Some("id".into());
        let mut e = entry(&local).unwrap();
        assert!(
            local
                .oauth
                .apply(&mut e)
                .unwrap_err()
                .contains("remote (http)")
        );
        let mut sse = args("old", "https://x.test/sse", &[]);
        sse.transport = Some(TransportArg::Sse);
        let refused = entry(&sse).unwrap_err();
        assert!(
            refused.contains("mcp-remote https://x.test/sse --transport sse-only"),
            "{refused}"
        );
    }
}
