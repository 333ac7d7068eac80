//! The decisions behind `Mcp.Edit` (`synapse mcp add|remove`): which file an edit goes to (the
//! user's config or the caller's project `.mcp.json`), the entry's shape, the error statuses, and
//! the note the user reads afterwards (the server's state, or why it does not start yet).

use std::path::PathBuf;

use serde_json::Value;
use synapse_shared::proto::McpEditRequest;
use tonic::Status;

use crate::mcp::config::USER_CONFIG_FILE;
use crate::mcp::edit;
use crate::mcp::{ServerStatus, StateKind};
use crate::state::DaemonState;

/// Where an edit goes.
pub struct Target {
    pub file: PathBuf,
    pub cwd: PathBuf,
    /// The project root when the file is a project's `.mcp.json`.
    pub project: Option<PathBuf>,
}

pub fn target(state: &DaemonState, r: &McpEditRequest) -> Result<Target, Status> {
    let cwd = PathBuf::from(&r.cwd);
    if !cwd.is_absolute() {
        return Err(Status::invalid_argument(
            "the request names no working directory",
        ));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = crate::workspace::root::project_root(&cwd, home.as_deref());
    let user = state.paths.mcp_dir().join(USER_CONFIG_FILE);
    let project = root.join(".mcp.json");
    let scope = match (r.action.as_str(), r.scope.as_str()) {
        ("add", "") => "user",
        ("remove", "") => match (edit::has(&user, &r.name), edit::has(&project, &r.name)) {
            (true, true) => {
                return Err(Status::failed_precondition(format!(
                    "{:?} is in both {} and {}: say which with --scope user or --scope project",
                    r.name,
                    user.display(),
                    project.display()
                )));
            }
            (false, true) => "project",
            _ => "user",
        },
        ("add" | "remove", s) => s,
        (a, _) => return Err(Status::invalid_argument(format!("unknown action {a:?}"))),
    };
    match scope {
        "user" => Ok(Target {
            file: user,
            cwd,
            project: None,
        }),
        "project" => Ok(Target {
            file: project,
            cwd,
            project: Some(root),
        }),
        other => Err(Status::invalid_argument(format!(
            "unknown scope {other:?}: use user or project"
        ))),
    }
}

/// Validates the entry and changes the file.
pub fn apply(r: &McpEditRequest, file: &std::path::Path) -> Result<(), Status> {
    let result = if r.action == "add" {
        let entry: Value = serde_json::from_str(&r.entry_json)
            .map_err(|e| Status::invalid_argument(format!("the server entry is not JSON: {e}")))?;
        check_entry(&entry)?;
        edit::add(file, &r.name, entry)
    } else {
        edit::remove(file, &r.name)
    };
    result.map_err(Status::from)
}

/// An entry runs a command or names an HTTP URL.
fn check_entry(entry: &Value) -> Result<(), Status> {
    let has = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    if has("command") || has("url") {
        return Ok(());
    }
    Err(Status::invalid_argument(
        "a server needs a command (stdio) or a url (http)",
    ))
}

/// What the user reads after the edit.
pub fn note(target: &Target, action: &str, name: &str, servers: &[ServerStatus]) -> String {
    if action == "remove" {
        return format!("{name} removed; its mcp:{name}:* commands are gone.");
    }
    let status = servers.iter().find(|s| s.name == name);
    match (status, &target.project) {
        (None, Some(root)) => format!(
            "Project servers start only in a trusted folder, once approved: review {}, then \
             `synapse trust {}` and `synapse mcp approve {name}`.",
            target.file.display(),
            root.display()
        ),
        (None, None) => String::new(),
        (Some(s), _) => match s.state {
            StateKind::Ready => format!(
                "{name} is connected: {} tool(s) as mcp:{name}:<tool>.",
                s.tool_count
            ),
            StateKind::Connecting => format!("{name} is connecting."),
            StateKind::Failed => format!("{name} failed to start: {}", s.reason),
            StateKind::NeedsLogin => format!("{name} needs login: {}", s.reason),
            StateKind::Disabled => format!("{name} is disabled: {}", s.reason),
        },
    }
}
