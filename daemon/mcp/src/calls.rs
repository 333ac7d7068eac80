//! Calling tools: from a raw command line (`mcp:<server>:<tool> args…`, the wrapper path and the
//! router's in-process short-cut) or from a JSON object. The argv is mapped with the cached schema
//! here in the daemon, so every path parses arguments the same way.
//!
//! Exit codes: 0 ok, 1 the tool reported an error, 2 usage (bad arguments, unknown tool), 3 the
//! server is unavailable (with the reason; for a server that wants an OAuth login, the `synapse
//! mcp login` to run). A call that finds the server dead drops the connection; the next call
//! reconnects (with backoff after repeated failures).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::args::map_argv;
use super::catalog::CatalogEntry;
use super::manager::McpManager;
use super::names::COMMAND_PREFIX;
use super::result::{EXIT_TOOL_ERROR, EXIT_UNAVAILABLE, EXIT_USAGE, McpCallOutput, render_result};
use super::schema::ToolSpec;
use super::server::{Server, StateKind};
use synapse_command::CallContext;

impl McpManager {
    /// Runs `mcp:<server>:<tool> argv…`: `-h`/`--help` as the first argument print help (no
    /// server round trip once the tool list is known); otherwise the argv is mapped with the
    /// tool's schema and the tool is called. `stdin` is consumed only by `--json -`.
    pub async fn call_argv(
        &self,
        server: &str,
        tool: &str,
        argv: &[String],
        stdin: Option<&[u8]>,
        call: &CallContext,
    ) -> McpCallOutput {
        let (srv, spec) = match self.lookup(server, tool).await {
            Ok(found) => found,
            Err(out) => return out,
        };
        match argv.first().map(String::as_str) {
            Some("-h") => return McpCallOutput::ok(spec.short_help()),
            Some("--help") => return McpCallOutput::ok(spec.full_help()),
            _ => {}
        }
        let arguments = match map_argv(&spec, argv, stdin) {
            Ok(a) => a,
            Err(e) => {
                return McpCallOutput::error(
                    EXIT_USAGE,
                    format!(
                        "{cmd}: {e}\nUsage: {sig}\nRun '{cmd} --help' for every parameter.",
                        cmd = spec.command,
                        sig = spec.signature()
                    ),
                );
            }
        };
        self.invoke(&srv, &spec.command, tool, arguments, call)
            .await
    }

    /// Calls a tool with ready-made JSON arguments (no argv mapping).
    pub async fn call_json(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        call: &CallContext,
    ) -> McpCallOutput {
        match self.lookup(server, tool).await {
            Ok((srv, spec)) => {
                self.invoke(&srv, &spec.command, tool, arguments, call)
                    .await
            }
            Err(out) => out,
        }
    }

    /// The router's short-cut: runs a command word such as `mcp:fs:read_text_file` (the mapped
    /// name, as the wrappers are named) with its arguments. `None` when the word names no known
    /// MCP command, so the router can fall back to the shell.
    pub async fn call_command(
        &self,
        command: &str,
        argv: &[String],
        stdin: Option<&[u8]>,
        call: &CallContext,
    ) -> Option<McpCallOutput> {
        let Some(target) = self.resolve_command_waiting(command).await else {
            return self.login_needed_for(command);
        };
        Some(
            self.call_argv(&target.0, &target.1, argv, stdin, call)
                .await,
        )
    }

    /// The command name of `server`'s `tool`, once the server is connected (waited for when it
    /// is still connecting); `None` when there is no such server or tool.
    pub async fn command_for(&self, server: &str, tool: &str) -> Option<String> {
        self.lookup(server, tool)
            .await
            .ok()
            .map(|(_, spec)| spec.command)
    }

    /// For a command of a server that needs an OAuth login and has never listed its tools (so
    /// it has no commands yet): the answer saying which login to run.
    pub fn login_needed_for(&self, command: &str) -> Option<McpCallOutput> {
        let rest = command.strip_prefix(COMMAND_PREFIX)?;
        let servers = self.inner.servers.read();
        let (name, srv) = servers.iter().find(|(name, s)| {
            rest.starts_with(&format!("{}:", super::names::safe_part(name)))
                && s.state_kind().0 == StateKind::NeedsLogin
        })?;
        Some(unavailable(srv, name, &srv.state_kind().1))
    }

    /// [`resolve_command`](Self::resolve_command), and when that finds nothing but a server
    /// whose commands start like `command` is still connecting (its tools not known yet: the
    /// daemon or the workspace just started), waits for it once and looks again.
    pub async fn resolve_command_waiting(&self, command: &str) -> Option<(String, String)> {
        if let Some(found) = self.resolve_command(command) {
            return Some(found);
        }
        let rest = command.strip_prefix(COMMAND_PREFIX)?;
        let pending: Vec<Arc<Server>> = self
            .inner
            .servers
            .read()
            .iter()
            .filter(|(name, s)| {
                s.config().enabled
                    && s.tools().is_none()
                    && rest.starts_with(&format!("{}:", super::names::safe_part(name)))
            })
            .map(|(_, s)| s.clone())
            .collect();
        if pending.is_empty() {
            return None;
        }
        for srv in &pending {
            let _ = srv.ensure_connected(&self.inner.events).await;
        }
        self.refresh_catalog();
        self.resolve_command(command)
    }

    /// The (server, tool) behind a command name, from the live catalog or the wrapper manifest
    /// (a server still connecting keeps the names of its last run).
    pub fn resolve_command(&self, command: &str) -> Option<(String, String)> {
        if !command.starts_with(COMMAND_PREFIX) {
            return None;
        }
        if let Some(r) = self.catalog().resolve(command) {
            return Some((r.server.clone(), r.tool.clone()));
        }
        let manifest = self.wrapper_manifest();
        manifest
            .get(command)
            .map(|r| (r.server.clone(), r.tool.clone()))
    }

    /// `{command, description}` of every exposed MCP tool, for `tools search`.
    pub fn catalog_entries(&self) -> Vec<CatalogEntry> {
        self.catalog().entries()
    }

    /// Finds the server and the tool's spec, connecting first when the tool list is not known.
    async fn lookup(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<(Arc<Server>, ToolSpec), McpCallOutput> {
        let Some(srv) = self.server(server) else {
            if let Some(problem) = self.inner.invalid.read().get(server) {
                return Err(McpCallOutput::error(
                    EXIT_UNAVAILABLE,
                    format!("MCP server {server} is unavailable: {problem}"),
                ));
            }
            if let Some(held) = self.inner.held.read().get(server) {
                return Err(McpCallOutput::error(
                    EXIT_UNAVAILABLE,
                    format!("MCP server {server} is not started: {}", held.reason()),
                ));
            }
            let known: Vec<String> = self.list().into_iter().map(|s| s.name).collect();
            return Err(McpCallOutput::error(
                EXIT_USAGE,
                format!(
                    "no MCP server named {server:?} (configured: {})",
                    list_or_none(&known)
                ),
            ));
        };
        if srv.tools().is_none() {
            if let Err(reason) = srv.ensure_connected(&self.inner.events).await {
                return Err(unavailable(&srv, server, &reason));
            }
            self.refresh_catalog();
        }
        if let Some(spec) = self.catalog().spec(server, tool) {
            return Ok((srv, spec.clone()));
        }
        // A connection that just came up may not be in the catalog yet: bring it in step once.
        if srv
            .tools()
            .is_some_and(|t| t.iter().any(|t| t.name == tool))
        {
            self.refresh_catalog();
            if let Some(spec) = self.catalog().spec(server, tool) {
                return Ok((srv, spec.clone()));
            }
        }
        let all = srv
            .tools()
            .map(|t| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>())
            .unwrap_or_default();
        if all.iter().any(|t| t == tool) {
            return Err(McpCallOutput::error(
                EXIT_USAGE,
                format!(
                    "tool {tool:?} of MCP server {server} is not exposed (allowedTools / disabledTools in {})",
                    srv.config().source.display()
                ),
            ));
        }
        let exposed: Vec<String> = self
            .catalog()
            .server_commands(server)
            .into_iter()
            .map(|t| t.command)
            .collect();
        Err(McpCallOutput::error(
            EXIT_USAGE,
            format!(
                "MCP server {server} has no tool {tool:?} (commands: {})",
                list_or_none(&exposed)
            ),
        ))
    }

    async fn invoke(
        &self,
        srv: &Server,
        command: &str,
        tool: &str,
        arguments: Map<String, Value>,
        call: &CallContext,
    ) -> McpCallOutput {
        let name = srv.config().name;
        let conn = match srv.ensure_connected(&self.inner.events).await {
            Ok(c) => c,
            Err(reason) => return unavailable(srv, &name, &reason),
        };
        match conn.call(tool, arguments, call).await {
            // Images and audio of a session's call go to its scratch folder (removed with
            // the session); a call from a terminal saves them under the daemon's media folder.
            Ok(result) => {
                let media = call
                    .scratch
                    .clone()
                    .unwrap_or_else(|| self.inner.opts.media_dir.clone());
                render_result(&result, &media)
            }
            Err(e) if e.breaks_connection() => {
                srv.call_failed(&conn, &e).await;
                unavailable(srv, &name, &e)
            }
            Err(e) => McpCallOutput::error(EXIT_TOOL_ERROR, format!("{command}: {e}")),
        }
    }
}

/// Exit 3 with the reason; a server that wants an OAuth login says so and names the command.
pub(crate) fn unavailable(
    srv: &Server,
    server: &str,
    reason: &dyn std::fmt::Display,
) -> McpCallOutput {
    let text = match srv.state_kind().0 {
        StateKind::NeedsLogin => format!("MCP server {server} needs login: {reason}"),
        _ => format!("MCP server {server} is unavailable: {reason}"),
    };
    McpCallOutput::error(EXIT_UNAVAILABLE, text)
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}
