//! MCP server configuration: which files are read, in which order, and how one entry becomes a
//! [`ServerConfig`].
//!
//! Files, lowest precedence first: `$SYNAPSE_HOME/mcp/mcp_servers.json` (user), then the project's
//! `./.mcp.json` and `./mcp_servers.json` from the session's cwd; a later file wins by server name.
//! Each holds a `mcpServers` (or `servers`) map in the shape Claude Code writes. A file that is not
//! JSON is reported with `file:line:col` and skipped; a bad entry is reported with its line and the
//! other entries still load. `${VAR}` / `${VAR:-default}` expand in command, args, env, cwd, url
//! and headers (see [`super::expand`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::expand::expand;
use super::filter::ToolFilter;

/// Start-up (spawn + initialize + first tools/list) timeout when the entry sets none.
pub const STARTUP_TIMEOUT_DEFAULT: Duration = Duration::from_secs(30);
/// `tools/call` timeout when the entry sets none.
pub const CALL_TIMEOUT_DEFAULT: Duration = Duration::from_secs(300);

/// The user-level config file below `$SYNAPSE_HOME/mcp/`.
pub const USER_CONFIG_FILE: &str = "mcp_servers.json";
/// Project files, lowest precedence first.
pub const PROJECT_CONFIG_FILES: [&str; 2] = [".mcp.json", "mcp_servers.json"];

/// How the daemon reaches one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC lines on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (`POST`/`GET` on one endpoint).
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`, for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One server entry after expansion and validation.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub filter: ToolFilter,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// The `oauth` object of a remote server's entry (client id, callback port, scopes).
    pub oauth: Option<super::oauth::OAuthSettings>,
    /// The file this entry came from.
    pub source: PathBuf,
    /// `"followProject": true` on one of the user's servers: instead of one connection shared by
    /// every project (told no project), each workspace gets its own, started in and told its
    /// project root — for a server meant to work on "the current project".
    pub follow_project: bool,
}

impl ServerConfig {
    /// True when switching from `self` to `other` needs a new connection (transport or timeouts
    /// changed). A filter change only regenerates wrappers.
    pub fn needs_reconnect(&self, other: &ServerConfig) -> bool {
        self.transport != other.transport
            || self.startup_timeout != other.startup_timeout
            || self.call_timeout != other.call_timeout
            || self.enabled != other.enabled
            || self.oauth != other.oauth
    }
}

/// Something wrong in a config file, located as precisely as we can.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", location(path, *line, *column), message)]
pub struct ConfigProblem {
    pub path: PathBuf,
    /// 1-based; 0 when unknown.
    pub line: usize,
    pub column: usize,
    /// The server entry concerned, if any.
    pub server: Option<String>,
    pub message: String,
}

fn location(path: &Path, line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => format!("{}: ", path.display()),
        (l, 0) => format!("{}:{l}: ", path.display()),
        (l, c) => format!("{}:{l}:{c}: ", path.display()),
    }
}

/// The merged view of every config file.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// Valid entries by name (disabled ones included, with `enabled == false`).
    pub servers: BTreeMap<String, ServerConfig>,
    /// Entries that could not be used, by name: listed as failed with this reason.
    pub invalid: BTreeMap<String, ConfigProblem>,
    /// Whole-file problems (unreadable, not JSON, wrong shape).
    pub problems: Vec<ConfigProblem>,
    /// The files that were found and read, lowest precedence first.
    pub files: Vec<PathBuf>,
    /// Project servers not started: the folder is not trusted, or the user has not approved
    /// this exact entry (`synapse mcp approve`). Listed with why and the one command that
    /// enables them.
    pub held: BTreeMap<String, HeldServer>,
}

/// Why a project server is not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldReason {
    /// The project folder is not trusted (`synapse trust ROOT`).
    Untrusted { root: PathBuf },
    /// Trusted folder, entry never approved (`synapse mcp approve NAME`).
    NeedsApproval,
    /// Approved once, but the entry changed since.
    Changed,
}

/// A project server held back, with why.
#[derive(Debug, Clone)]
pub struct HeldServer {
    pub config: ServerConfig,
    pub why: HoldReason,
}

impl HeldServer {
    /// The state and the one command that enables it, then why it needs the user
    /// (`needs approval — synapse mcp approve fs: …`).
    pub fn reason(&self) -> String {
        let name = &self.config.name;
        let file = self.config.source.display();
        match &self.why {
            HoldReason::Untrusted { root } => format!(
                "untrusted — synapse trust {root}: {root} is not a trusted folder, and a \
                 project's MCP servers run code; review {file} first",
                root = root.display()
            ),
            HoldReason::NeedsApproval => format!(
                "{} — synapse mcp approve {name}: a project's MCP server runs code; review its \
                 entry in {file} first",
                super::approval::NEEDS_APPROVAL
            ),
            HoldReason::Changed => format!(
                "held: changed since approved — synapse mcp approve {name}: its entry in {file} \
                 changed since it was approved; review it again first"
            ),
        }
    }
}

/// The config files for a user home folder and an optional project folder, lowest precedence first.
pub fn config_files(mcp_dir: &Path, project_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut files = vec![mcp_dir.join(USER_CONFIG_FILE)];
    if let Some(dir) = project_dir {
        files.extend(PROJECT_CONFIG_FILES.iter().map(|f| dir.join(f)));
    }
    files
}

impl McpConfig {
    /// Reads `files` (missing ones are skipped) with `lookup` for `${VAR}` expansion.
    pub fn load(files: &[PathBuf], lookup: &dyn Fn(&str) -> Option<String>) -> McpConfig {
        let mut config = McpConfig::default();
        for path in files {
            config.merge_file(path, lookup, None);
        }
        config
    }

    /// Reads and merges one file (a missing one is skipped, an unreadable one is a problem);
    /// `project` makes its stdio servers start in that root.
    pub(crate) fn merge_file(
        &mut self,
        path: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
        project: Option<&Path>,
    ) {
        match synapse_shared::bounded::read_text(
            path,
            None,
            synapse_shared::bounded::CONFIG_MAX_BYTES,
        ) {
            Ok(text) => {
                self.files.push(path.to_path_buf());
                self.merge_text_in(path, &text, lookup, project);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => self.problems.push(ConfigProblem {
                path: path.to_path_buf(),
                line: 0,
                column: 0,
                server: None,
                message: format!("cannot read: {e}"),
            }),
        }
    }

    /// Merges one file's text; entries here override earlier ones of the same name.
    pub fn merge_text(&mut self, path: &Path, text: &str, lookup: &dyn Fn(&str) -> Option<String>) {
        self.merge_text_in(path, text, lookup, None);
    }

    /// [`merge_text`](Self::merge_text) for a file of the project rooted at `project`.
    pub(crate) fn merge_text_in(
        &mut self,
        path: &Path,
        text: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        project: Option<&Path>,
    ) {
        let problem = |line, column, server: Option<&str>, message: String| ConfigProblem {
            path: path.to_path_buf(),
            line,
            column,
            server: server.map(str::to_string),
            message,
        };
        if text.trim().is_empty() {
            return;
        }
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                self.problems.push(problem(
                    e.line(),
                    e.column(),
                    None,
                    format!("invalid JSON: {e}"),
                ));
                return;
            }
        };
        let Some(map) = doc.get("mcpServers").or_else(|| doc.get("servers")) else {
            self.problems.push(problem(
                1,
                1,
                None,
                "expected an object with a \"mcpServers\" (or \"servers\") map".into(),
            ));
            return;
        };
        let Some(map) = map.as_object() else {
            self.problems.push(problem(
                0,
                0,
                None,
                "\"mcpServers\" must be an object".into(),
            ));
            return;
        };
        let base_dir = path.parent().map(Path::to_path_buf);
        for (name, entry) in map {
            let line = entry_line(text, name);
            match parse_entry(name, entry, base_dir.as_deref(), path, lookup) {
                Ok(server) => {
                    let server = match project {
                        Some(root) => super::project_config::in_project(server, root),
                        None => server,
                    };
                    self.invalid.remove(name);
                    self.servers.insert(name.clone(), server);
                }
                Err(message) => {
                    self.servers.remove(name);
                    self.invalid
                        .insert(name.clone(), problem(line, 0, Some(name), message));
                }
            }
        }
    }
}

/// Checks one server entry as a config file would hold it (`synapse mcp add-json`): the error
/// names the field that is wrong.
pub fn validate_entry(
    name: &str,
    entry: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, String> {
    parse_entry(name, entry, None, Path::new("-"), lookup)
}

/// Server names become part of a command name and a file name: keep them printable and short.
fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("server name must be 1 to 64 characters".into());
    }
    if name.chars().any(|c| c.is_control() || c == '/' || c == ':') {
        return Err(format!(
            "server name {name:?} must not contain '/', ':' or control characters"
        ));
    }
    Ok(())
}

pub(crate) fn parse_entry(
    name: &str,
    entry: &Value,
    base_dir: Option<&Path>,
    source: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, String> {
    check_server_name(name)?;
    let obj = entry.as_object().ok_or("server entry must be an object")?;
    let ex = |key: &str, s: &str| expand(s, lookup).map_err(|e| format!("{key}: {e}"));
    let kind = opt_str(obj, "type")?.unwrap_or_default();
    let url = opt_str(obj, "url")?;
    let command = opt_str(obj, "command")?;
    let transport = match (kind.as_str(), command, url) {
        ("", Some(_), Some(_)) => return Err("give either \"command\" or \"url\", not both".into()),
        ("sse", _, url) => return Err(super::error_words::legacy_sse(name, url.as_deref())),
        ("" | "stdio", Some(command), _) => {
            let args = str_list(obj, "args")?
                .iter()
                .map(|a| ex("args", a))
                .collect::<Result<Vec<_>, _>>()?;
            let mut env = BTreeMap::new();
            for (k, v) in str_map(obj, "env")? {
                env.insert(k, ex("env", &v)?);
            }
            let cwd = match opt_str(obj, "cwd")? {
                Some(c) => {
                    let c = PathBuf::from(ex("cwd", &c)?);
                    Some(match base_dir {
                        Some(base) if c.is_relative() => base.join(c),
                        _ => c,
                    })
                }
                None => None,
            };
            let command = ex("command", &command)?;
            if command.trim().is_empty() {
                return Err("\"command\" is empty".into());
            }
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        ("" | "http" | "streamable-http" | "streamableHttp", None, Some(url)) => {
            let url = ex("url", &url)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "url must start with http:// or https:// (got {url:?})"
                ));
            }
            let mut headers = BTreeMap::new();
            for (k, v) in str_map(obj, "headers")? {
                headers.insert(k, ex("headers", &v)?);
            }
            Transport::Http { url, headers }
        }
        ("stdio", None, _) => return Err("a stdio server needs \"command\"".into()),
        ("http" | "streamable-http" | "streamableHttp", _, None) => {
            return Err("an http server needs \"url\"".into());
        }
        ("", None, None) => return Err("expected \"command\" (stdio) or \"url\" (http)".into()),
        (other, _, _) => {
            return Err(format!(
                "unsupported transport {other:?}: expected \"stdio\" or \"http\" (Streamable HTTP)"
            ));
        }
    };
    let enabled = match (opt_bool(obj, "disabled")?, opt_bool(obj, "enabled")?) {
        (Some(d), _) => !d,
        (None, Some(e)) => e,
        (None, None) => true,
    };
    let filter = ToolFilter::new(
        &str_list(obj, "allowedTools")?,
        &str_list(obj, "disabledTools")?,
    )?;
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled,
        filter,
        startup_timeout: opt_secs(obj, "startupTimeoutSec")?.unwrap_or(STARTUP_TIMEOUT_DEFAULT),
        call_timeout: opt_secs(obj, "toolTimeoutSec")?.unwrap_or(CALL_TIMEOUT_DEFAULT),
        oauth: super::oauth::settings::parse(obj.get("oauth"), &ex)?,
        source: source.to_path_buf(),
        follow_project: opt_bool(obj, "followProject")?.unwrap_or(false),
    })
}

fn opt_str(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("expected a string for {key:?} (got {other})")),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("expected a boolean for {key:?} (got {other})")),
    }
}

fn opt_secs(obj: &Map<String, Value>, key: &str) -> Result<Option<Duration>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s > 0.0 && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
            _ => Err(format!(
                "{key:?} must be a positive number of seconds (got {n})"
            )),
        },
        Some(other) => Err(format!(
            "expected a number of seconds for {key:?} (got {other})"
        )),
    }
}

fn str_list(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                // Numbers in args are common in hand-written files; take them as written.
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("expected strings in {key:?} (got {other})")),
            })
            .collect(),
        Some(other) => Err(format!(
            "expected an array of strings for {key:?} (got {other})"
        )),
    }
}

fn str_map(obj: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                other => Err(format!("expected a string for {key}.{k} (got {other})")),
            })
            .collect(),
        Some(other) => Err(format!(
            "expected an object of strings for {key:?} (got {other})"
        )),
    }
}

/// The 1-based line where `"name":` first appears as a key, or 0.
fn entry_line(text: &str, name: &str) -> usize {
    let Ok(quoted) = serde_json::to_string(name) else {
        return 0;
    };
    let mut from = 0;
    while let Some(pos) = text[from..].find(&quoted) {
        let at = from + pos;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return text[..at].matches('\n').count() + 1;
        }
        from = at + quoted.len();
    }
    0
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "config_props.rs"]
mod props;
