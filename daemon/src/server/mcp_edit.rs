//! The decisions behind `Mcp.Edit` (`synapse mcp add|remove`): which file an edit goes to (the
//! user's config, the caller's project `.mcp.json` or its `local` file), the entry checked as a config
//! file would hold it (`add-json`: the error names the field), the client secret kept out of the file,
//! the error statuses, and
//! the note the user reads afterwards (the server's state, or why it does not start yet).

use std::path::PathBuf;

use serde_json::Value;
use synapse_shared::proto::McpEditRequest;
use tonic::Status;

use crate::state::DaemonState;
use synapse_mcp::config::USER_CONFIG_FILE;
use synapse_mcp::edit;
use synapse_mcp::{ServerStatus, StateKind};

/// Where an edit goes.
#[derive(Clone)]
pub struct Target {
    pub file: PathBuf,
    pub cwd: PathBuf,
    /// The project root when the file is one project's (its `.mcp.json`, or its local file).
    pub project: Option<PathBuf>,
    /// `user`, `project` or `local`.
    pub scope: &'static str,
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
    let mcp_dir = state.paths.mcp_dir();
    let files = [
        ("user", mcp_dir.join(USER_CONFIG_FILE)),
        ("project", root.join(".mcp.json")),
        ("local", synapse_mcp::local::file(&mcp_dir, &root)),
    ];
    let scope = match (r.action.as_str(), r.scope.as_str()) {
        ("add", "") => "user",
        ("remove", "") => {
            let found: Vec<&(&str, PathBuf)> = files
                .iter()
                .filter(|(_, f)| edit::has(f, &r.name))
                .collect();
            match found.as_slice() {
                [] | [_] => found.first().map_or("user", |(s, _)| s),
                many => {
                    let wheres: Vec<String> = many
                        .iter()
                        .map(|(s, f)| format!("{s} ({})", f.display()))
                        .collect();
                    return Err(Status::failed_precondition(format!(
                        "{:?} is in {}: say which with --scope {}",
                        r.name,
                        wheres.join(" and "),
                        many.iter()
                            .map(|(s, _)| *s)
                            .collect::<Vec<_>>()
                            .join(" or --scope ")
                    )));
                }
            }
        }
        ("add" | "remove", s) => s,
        (a, _) => return Err(Status::invalid_argument(format!("unknown action {a:?}"))),
    };
    let Some((scope, file)) = files.into_iter().find(|(s, _)| *s == scope) else {
        return Err(Status::invalid_argument(format!(
            "unknown scope {scope:?}: use user, project or local"
        )));
    };
    Ok(Target {
        file,
        cwd,
        project: (scope != "user").then_some(root),
        scope,
    })
}

/// Validates the entry and changes the file. A client secret (given with `--client-secret`, or
/// as a literal `oauth.clientSecret`) goes to the token folder, never into the file.
pub fn apply(
    state: &DaemonState,
    r: &McpEditRequest,
    target: &Target,
    file: &std::path::Path,
) -> Result<(), Status> {
    if r.action != "add" {
        let url = edit::entry(file, &r.name)
            .and_then(|e| e.get("url").and_then(Value::as_str).map(str::to_string));
        edit::remove(file, &r.name).map_err(super::status::edit_status)?;
        if let Some(url) = url {
            // Its client secret (given to `add --client-secret`) goes with it.
            let store = synapse_mcp::oauth::store::TokenStore::new(state.paths.mcp_oauth_dir());
            synapse_mcp::oauth::client_secret::remove(&store, &r.name, &url);
        }
        return Ok(());
    }
    let mut entry: Value = serde_json::from_str(&r.entry_json).map_err(|e| {
        Status::invalid_argument(format!("{}: the server entry is not JSON: {e}", r.name))
    })?;
    let secret = take_literal_secret(&mut entry)
        .or_else(|| Some(r.client_secret.clone()).filter(|s| !s.is_empty()));
    let env: std::collections::HashMap<&str, &str> = r
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let lookup = |k: &str| {
        env.get(k)
            .map(|v| v.to_string())
            .or_else(|| std::env::var(k).ok())
    };
    let server = match synapse_mcp::config::validate_entry(&r.name, &entry, &lookup) {
        Ok(server) => Some(server),
        // A variable this terminal lacks may be set where the server runs (a teammate's
        // `.mcp.json`, a later `synapse mcp refresh`): written, and listed with the reason.
        Err(e) if e.contains(synapse_mcp::expand::UNSET_MARK) && secret.is_none() => None,
        Err(e) => return Err(Status::invalid_argument(format!("{}: {e}", r.name))),
    };
    if let (Some(secret), Some(server)) = (&secret, &server) {
        let synapse_mcp::config::Transport::Http { url, .. } = &server.transport else {
            return Err(Status::invalid_argument(format!(
                "{}: a client secret is for a remote (http) server's OAuth login",
                r.name
            )));
        };
        if server
            .oauth
            .as_ref()
            .and_then(|o| o.client_id.as_ref())
            .is_none()
        {
            return Err(Status::invalid_argument(format!(
                "{}: a client secret needs its client id (--client-id, or oauth.clientId)",
                r.name
            )));
        }
        synapse_mcp::oauth::client_secret::save(
            &synapse_mcp::oauth::store::TokenStore::new(state.paths.mcp_oauth_dir()),
            &r.name,
            url,
            secret,
        )
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
    }
    if let (Some(root), "local") = (&target.project, target.scope) {
        synapse_mcp::local::ensure_file(&state.paths.mcp_dir(), root).map_err(|e| {
            Status::failed_precondition(format!("cannot create {}: {e}", file.display()))
        })?;
    }
    edit::add(file, &r.name, entry).map_err(super::status::edit_status)
}

/// Removes a literal `oauth.clientSecret` from `entry` and returns it; a `${VAR}` reference
/// stays (it is no secret in clear).
fn take_literal_secret(entry: &mut Value) -> Option<String> {
    let oauth = entry.get_mut("oauth")?.as_object_mut()?;
    let literal = oauth
        .get("clientSecret")?
        .as_str()
        .filter(|s| !s.is_empty() && !s.contains("${"))?
        .to_string();
    oauth.remove("clientSecret");
    Some(literal)
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
            StateKind::Untrusted | StateKind::NeedsApproval | StateKind::Held => format!(
                "{name} is not started: {}. Project servers start only in a trusted folder, \
                 once approved.",
                s.reason
            ),
        },
    }
}
