//! Per-server approval of project MCP servers, pinned by content.
//!
//! A project's MCP config (`.mcp.json`, `mcp_servers.json`, `.vscode/mcp.json`, its `~/.claude.json`
//! entry) runs code, so after the folder is trusted each of its servers still
//! needs the user's approval of that exact entry: [`entry_hash`] is a SHA-256 of what decides
//! what runs (transport, command, args, the names of the env variables and headers, cwd, url),
//! and [`project_entry_hash`] adds the content of the project files its command runs (a
//! `node server.js` of the repository), so a rewritten script needs approval again too.
//! Approvals live in `$SYNAPSE_HOME/mcp/approved_servers.json` (never in the project), keyed by
//! project root and server name. [`hold_unapproved`] moves every project server without a
//! matching approval out of the config before anything starts it — a changed entry (by the
//! agent, `git pull`, anyone) needs approval again; an approvals file that can't be read
//! approves nothing. [`approve`] records the user's answer (read-modify-write under a lock,
//! atomic rename).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::config::{ConfigProblem, HeldServer, HoldReason, McpConfig, ServerConfig, Transport};

/// The approvals file below `$SYNAPSE_HOME/mcp/`.
pub const APPROVALS_FILE: &str = "approved_servers.json";
/// Start of the reason a held server is listed with.
pub const NEEDS_APPROVAL: &str = "needs approval";

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a valid approvals file ({reason}); fix or delete it, then approve again"
    )]
    Corrupt { path: PathBuf, reason: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// root → server → approved hash.
type Approvals = BTreeMap<String, BTreeMap<String, String>>;

/// The SHA-256 (hex) of what decides what a server entry of the project at `root` runs: the
/// entry, and the content of the project files its command runs
/// ([`super::approval_files::named_project_files`]; an entry naming none hashes as the entry
/// alone).
pub fn project_entry_hash(server: &ServerConfig, root: &Path) -> String {
    let files = super::approval_files::named_project_files(server, root);
    if files.is_empty() {
        return entry_hash(server);
    }
    let pinned = json!({"entry": entry_hash(server), "files": files});
    let digest = Sha256::digest(pinned.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 (hex) of what decides what a server entry runs.
pub fn entry_hash(server: &ServerConfig) -> String {
    let keys = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    let mut pinned = match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => json!({"type": "stdio", "command": command, "args": args, "env": keys(env),
                    "cwd": cwd.as_ref().map(|c| c.display().to_string())}),
        Transport::Http { url, headers } => {
            json!({"type": "http", "url": url, "headers": keys(headers)})
        }
    };
    // Where a login sends the browser and the client id: pinned too, only when set (so the
    // approvals of entries without it stay valid).
    if let Some(o) = &server.oauth {
        pinned["oauth"] = json!({"clientId": o.client_id, "callbackPort": o.callback_port,
                                 "scopes": o.scopes, "clientSecret": o.client_secret.is_some()});
    }
    let digest = Sha256::digest(pinned.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn file(mcp_dir: &Path) -> PathBuf {
    mcp_dir.join(APPROVALS_FILE)
}

fn load(mcp_dir: &Path) -> Result<Approvals, ApprovalError> {
    let path = file(mcp_dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Approvals::new()),
        Err(source) => return Err(ApprovalError::Read { path, source }),
    };
    let corrupt = |reason: String| ApprovalError::Corrupt {
        path: path.clone(),
        reason,
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    let Some(roots) = value.get("approved").and_then(Value::as_object) else {
        return Err(corrupt("expected an object `approved`".into()));
    };
    let mut out = Approvals::new();
    for (root, servers) in roots {
        let Some(servers) = servers.as_object() else {
            return Err(corrupt(format!("`approved.{root}` is not an object")));
        };
        let entry = out.entry(root.clone()).or_default();
        for (name, hash) in servers {
            let Some(hash) = hash.as_str() else {
                return Err(corrupt(format!("`approved.{root}.{name}` is not a string")));
            };
            entry.insert(name.clone(), hash.to_string());
        }
    }
    Ok(out)
}

/// Moves every server of `config` — the project layer of `root`: its own files, its
/// `.vscode/mcp.json` and its `~/.claude.json` entry, all of which run code the user did not
/// write through Synapse — that lacks an approval of its current content from
/// `config.servers` to `config.held`.
pub fn hold_unapproved(config: &mut McpConfig, root: &Path, mcp_dir: &Path) {
    if config.servers.is_empty() {
        return;
    }
    let approvals = load(mcp_dir).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "MCP approvals unreadable: no project server is approved");
        config.problems.push(ConfigProblem {
            path: file(mcp_dir),
            line: 0,
            column: 0,
            server: None,
            message: e.to_string(),
        });
        Approvals::new()
    });
    let approved = approvals.get(&root.display().to_string());
    for (name, server) in std::mem::take(&mut config.servers) {
        let hash = project_entry_hash(&server, root);
        let why = match approved.and_then(|a| a.get(&name)) {
            Some(h) if *h == hash => {
                config.servers.insert(name, server);
                continue;
            }
            Some(_) => HoldReason::Changed,
            None => HoldReason::NeedsApproval,
        };
        config.held.insert(
            name,
            HeldServer {
                config: server,
                why,
            },
        );
    }
}

/// Holds every server of `config` (the project layer of the untrusted folder `root`): listed
/// with `synapse trust ROOT`, never started.
pub fn hold_untrusted(config: &mut McpConfig, root: &Path) {
    for (name, server) in std::mem::take(&mut config.servers) {
        config.held.insert(
            name,
            HeldServer {
                config: server,
                why: HoldReason::Untrusted {
                    root: root.to_path_buf(),
                },
            },
        );
    }
}

/// Records approval of `servers` (held entries of the project at `root`) as they are now.
pub fn approve(
    mcp_dir: &Path,
    root: &Path,
    servers: &[&ServerConfig],
) -> Result<(), ApprovalError> {
    let path = file(mcp_dir);
    let write_err = |source| ApprovalError::Write {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(mcp_dir).map_err(write_err)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(mcp_dir.join(".approved_servers.lock"))
        .map_err(write_err)?;
    lock.lock().map_err(write_err)?;
    let mut approvals = load(mcp_dir)?;
    let entry = approvals.entry(root.display().to_string()).or_default();
    for s in servers {
        entry.insert(s.name.clone(), project_entry_hash(s, root));
    }
    let mut text =
        serde_json::to_string_pretty(&json!({ "approved": approvals })).unwrap_or_default();
    text.push('\n');
    synapse_shared::atomic::write_atomic_mode(&path, text.as_bytes(), 0o600).map_err(write_err)
}

/// What `synapse mcp approve` did.
#[derive(Debug, Default)]
pub struct ApproveOutcome {
    pub approved: Vec<String>,
    /// `name: why` for named servers that were not waiting for approval.
    pub not_waiting: Vec<String>,
}

/// Approves the held project servers of `root` named in `names` (all of them with `all`) as
/// their entries read now, and starts them.
pub async fn approve_project_servers(
    mcp: &super::McpManager,
    mcp_dir: &Path,
    root: &Path,
    names: &[String],
    all: bool,
) -> Result<ApproveOutcome, ApprovalError> {
    let config = mcp.load_config();
    let mut outcome = ApproveOutcome::default();
    let waiting = |h: &HeldServer| !matches!(h.why, HoldReason::Untrusted { .. });
    let chosen: Vec<&ServerConfig> = if all {
        config
            .held
            .values()
            .filter(|h| waiting(h))
            .map(|h| &h.config)
            .collect()
    } else {
        names
            .iter()
            .filter_map(|n| match config.held.get(n) {
                Some(h) if waiting(h) => Some(&h.config),
                Some(_) => {
                    outcome.not_waiting.push(format!(
                        "{n}: {} is not a trusted folder; run `synapse trust {}` first",
                        root.display(),
                        root.display()
                    ));
                    None
                }
                None => {
                    let why = if config.servers.contains_key(n) {
                        "already approved (or not a project server)"
                    } else {
                        "no such project server here (is the folder trusted? `synapse trust`)"
                    };
                    outcome.not_waiting.push(format!("{n}: {why}"));
                    None
                }
            })
            .collect()
    };
    if chosen.is_empty() {
        return Ok(outcome);
    }
    approve(mcp_dir, root, &chosen)?;
    outcome.approved = chosen.iter().map(|s| s.name.clone()).collect();
    mcp.refresh().await;
    Ok(outcome)
}

/// One line for a session of the workspace `mcp` serves naming the project servers waiting for
/// approval and the command that approves them; `None` when none wait (or the folder is not
/// trusted).
pub fn waiting_notice(mcp: &super::McpManager) -> Option<String> {
    let super::Scope::Project(root) = mcp.scope() else {
        return None;
    };
    let config = mcp.load_config();
    let names: Vec<&str> = config
        .held
        .iter()
        .filter(|(_, h)| !matches!(h.why, HoldReason::Untrusted { .. }))
        .map(|(n, _)| n.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    let how = match names.as_slice() {
        [one] => format!("`synapse mcp approve {one}`"),
        _ => "`synapse mcp approve --all` (or name each)".to_string(),
    };
    Some(format!(
        "MCP: not started, {NEEDS_APPROVAL}: {} (from this project's config; it runs code). \
         Review it, then run {how} in {}.",
        names.join(", "),
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::ToolFilter;
    use std::time::Duration;

    fn server(name: &str, source: &Path, args: &[&str]) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Transport::Stdio {
                command: "node".into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: BTreeMap::from([("TOKEN".into(), "secret".into())]),
                cwd: None,
            },
            enabled: true,
            filter: ToolFilter::default(),
            startup_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(5),
            oauth: None,
            source: source.to_path_buf(),
            follow_project: false,
        }
    }

    #[test]
    fn only_the_approved_content_starts_and_a_change_is_held_again() {
        let home = tempfile::tempdir().unwrap();
        let mcp_dir = home.path().join("mcp");
        let project = tempfile::tempdir().unwrap();
        let source = project.path().join(".mcp.json");
        let config_with = |args: &[&str]| {
            let mut c = McpConfig::default();
            c.servers.insert("fs".into(), server("fs", &source, args));
            c
        };
        let mut c = config_with(&["server.js"]);
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert_eq!(c.held["fs"].why, HoldReason::NeedsApproval);
        assert!(c.held["fs"].reason().contains("synapse mcp approve fs"));

        approve(&mcp_dir, project.path(), &[&c.held["fs"].config]).unwrap();
        let mut c = config_with(&["server.js"]);
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert!(c.servers.contains_key("fs") && c.held.is_empty());

        let mut c = config_with(&["evil.js"]);
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert_eq!(c.held["fs"].why, HoldReason::Changed);
        assert!(
            c.held["fs"]
                .reason()
                .starts_with("held: changed since approved — synapse mcp approve fs")
        );

        std::fs::write(mcp_dir.join(APPROVALS_FILE), "{not json").unwrap();
        let mut c = config_with(&["server.js"]);
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert!(
            c.held.contains_key("fs"),
            "an unreadable approvals file approves nothing"
        );
    }

    #[test]
    fn a_changed_project_script_holds_its_approved_server() {
        let home = tempfile::tempdir().unwrap();
        let mcp_dir = home.path().join("mcp");
        let project = tempfile::tempdir().unwrap();
        let source = project.path().join(".mcp.json");
        std::fs::write(project.path().join("server.js"), "serve()").unwrap();
        let config = || {
            let mut c = McpConfig::default();
            c.servers
                .insert("fs".into(), server("fs", &source, &["server.js"]));
            c
        };
        let mut c = config();
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        approve(&mcp_dir, project.path(), &[&c.held["fs"].config]).unwrap();
        let mut c = config();
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert!(c.servers.contains_key("fs"), "{:?}", c.held);
        std::fs::write(project.path().join("server.js"), "serve(); steal()").unwrap();
        let mut c = config();
        hold_unapproved(&mut c, project.path(), &mcp_dir);
        assert_eq!(c.held["fs"].why, HoldReason::Changed);
    }

    #[test]
    fn the_hash_pins_env_names_not_values() {
        let s = server("a", Path::new("/p/.mcp.json"), &["x"]);
        let mut t = s.clone();
        if let Transport::Stdio { env, .. } = &mut t.transport {
            env.insert("TOKEN".into(), "other".into());
        }
        assert_eq!(entry_hash(&s), entry_hash(&t));
        if let Transport::Stdio { env, .. } = &mut t.transport {
            env.insert("LD_PRELOAD".into(), "x".into());
        }
        assert_ne!(entry_hash(&s), entry_hash(&t));
    }
}
