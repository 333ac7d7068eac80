//! Mcp2Bash: what the wrapper `mcp:<server>:<tool>` of an exposed tool is, and the command map
//! beside the wrappers.
//!
//! A wrapper answers `-h` / `--help` (first argument only) from help text embedded at generation
//! time, so help works without the daemon; anything else `exec`s the `synapse` client by absolute
//! path: `synapse mcp call [--workspace <root> | --session <id>] <server> <tool> "$@"`. Rendering and writing
//! belong to [`synapse_command::wrappers`] (the one owner of the bin folders): help from the server is
//! hostile input and is embedded the same way as a skill's.
//!
//! A server that offers resources also gets `mcp:<server>:resources` and `mcp:<server>:read`,
//! which exec `synapse mcp resources|read [--workspace <root>] <server>`: the commands `tools
//! search` lists work in pipelines and in the user's own terminal too.
//!
//! [`WrapperWriter::sync`] writes a wrapper only when its bytes change, removes stale `mcp:*`
//! wrappers, and keeps the command → (server, tool) map of the tool wrappers in `wrappers.json`
//! (in `$SYNAPSE_HOME/mcp/`, or in the workspace's folder). Wrappers of a server that is
//! configured but not connected right now are kept as they are.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use synapse_shared::atomic::write_atomic;

use super::catalog::{ResourceCommand, ResourceVerb};
use super::names::{COMMAND_PREFIX, ToolRef};
use super::schema::ToolSpec;
use synapse_command::wrappers::{Help, ScriptError, WrapperFolder, WrapperScript};

/// The map kept beside the wrappers.
pub const MANIFEST_FILE: &str = "wrappers.json";

#[derive(Debug, thiserror::Error)]
pub enum WrapperError {
    #[error("cannot write {path}: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// One wrapper to generate.
#[derive(Debug, Clone)]
pub struct WrapperEntry {
    pub target: ToolRef,
    pub spec: ToolSpec,
}

/// What a sync changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub written: Vec<String>,
    pub unchanged: usize,
    pub removed: Vec<String>,
    /// Tools with no wrapper, each with why (a name no file can have, a write that failed):
    /// one bad tool never keeps the others from being written.
    pub skipped: Vec<String>,
}

/// Longest file name most filesystems accept, in bytes.
const FILE_NAME_MAX_BYTES: usize = 255;

/// `name` shortened for a message.
fn short_name(name: &str) -> String {
    const SHOWN_CHARS: usize = 60;
    if name.chars().count() <= SHOWN_CHARS {
        name.to_string()
    } else {
        let head: String = name.chars().take(SHOWN_CHARS).collect();
        format!("{head}… ({} characters)", name.chars().count())
    }
}

/// Writes and prunes the `mcp:*` wrappers in one folder. Cheap to clone (one folder state).
#[derive(Debug, Clone)]
pub struct WrapperWriter {
    folder: Arc<Mutex<WrapperFolder>>,
    bin_dir: PathBuf,
    manifest: PathBuf,
    client_bin: PathBuf,
    /// Whose servers the wrappers name: `--workspace <root>` for a project's (so a call reaches
    /// that project's server wherever the shell has `cd`-ed to), `--session <id>` for one
    /// session's own; none for the user's.
    caller: Vec<String>,
}

impl WrapperWriter {
    /// `client_bin` is the absolute path of the `synapse` client the wrappers exec.
    pub fn new(bin_dir: PathBuf, mcp_dir: &Path, client_bin: PathBuf) -> WrapperWriter {
        WrapperWriter {
            folder: Arc::new(Mutex::new(WrapperFolder::open(
                bin_dir.clone(),
                COMMAND_PREFIX,
            ))),
            bin_dir,
            manifest: mcp_dir.join(MANIFEST_FILE),
            client_bin,
            caller: Vec::new(),
        }
    }

    /// Wrappers for the project servers of workspace `root`.
    pub fn for_workspace(mut self, root: PathBuf) -> WrapperWriter {
        self.caller = workspace_words(Some(&root));
        self
    }

    /// Wrappers for the servers of session `id` alone (`--mcp-config`).
    pub fn for_session(mut self, id: &str) -> WrapperWriter {
        self.caller = vec!["--session".into(), id.into()];
        self
    }

    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// Makes the folder hold exactly `entries`, plus the existing wrappers of `keep_servers`.
    pub fn sync(
        &self,
        entries: &[WrapperEntry],
        keep_servers: &HashSet<String>,
    ) -> Result<SyncReport, WrapperError> {
        self.sync_all(entries, &[], keep_servers, &HashSet::new())
    }

    /// [`sync`](Self::sync) with the resource commands too; the existing files named in
    /// `keep_commands` stay (the resource wrappers of a server not connected right now).
    pub fn sync_all(
        &self,
        entries: &[WrapperEntry],
        resources: &[ResourceCommand],
        keep_servers: &HashSet<String>,
        keep_commands: &HashSet<String>,
    ) -> Result<SyncReport, WrapperError> {
        let mut folder = self.folder.lock();
        // Nothing to write into a folder that is not there (a workspace without servers).
        if entries.is_empty() && resources.is_empty() && !self.bin_dir.exists() {
            folder.forget();
            return Ok(SyncReport::default());
        }
        if !self.bin_dir.is_dir() {
            // Removed as a whole (an idle workspace): everything is written again.
            folder.forget();
        }
        let old_manifest = self.read_manifest();
        let mut manifest: BTreeMap<String, ToolRef> = BTreeMap::new();
        let mut wanted: BTreeMap<String, String> = BTreeMap::new();
        let mut report = SyncReport::default();
        let skip = |report: &mut SyncReport, command: &str, why: String| {
            let msg = format!("MCP tool {}: no wrapper: {why}", short_name(command));
            tracing::warn!("{msg}");
            report.skipped.push(msg);
        };
        for entry in entries {
            let command = &entry.spec.command;
            if command.len() > FILE_NAME_MAX_BYTES {
                skip(
                    &mut report,
                    command,
                    format!(
                        "the command name is {} bytes, over the {FILE_NAME_MAX_BYTES}-byte file \
                         name limit; call it with `synapse mcp call {} …` instead",
                        command.len(),
                        short_name(&entry.target.server)
                    ),
                );
                continue;
            }
            match tool_wrapper_for(entry, &self.client_bin, &self.caller).render() {
                Ok(text) => {
                    wanted.insert(command.clone(), text);
                    manifest.insert(command.clone(), entry.target.clone());
                }
                Err(e) => skip(&mut report, command, e.to_string()),
            }
        }
        for resource in resources {
            match resource_wrapper_for(resource, &self.client_bin, &self.caller).render() {
                Ok(text) => {
                    wanted.insert(resource.command.clone(), text);
                }
                Err(e) => skip(&mut report, &resource.command, e.to_string()),
            }
        }
        let keep = |name: &str| {
            keep_commands.contains(name)
                || old_manifest
                    .get(name)
                    .is_some_and(|t| keep_servers.contains(&t.server))
        };
        let wanted_count = wanted.len();
        let changes = folder.sync(wanted, &keep);
        for name in folder.commands() {
            if !manifest.contains_key(name)
                && let Some(target) = old_manifest.get(name)
            {
                manifest.insert(name.to_string(), target.clone());
            }
        }
        drop(folder);
        for e in changes.errors {
            let hint = format!("{e}; call it with `synapse mcp call <server> <tool> …` instead");
            tracing::warn!("MCP wrappers: {hint}");
            report.skipped.push(hint);
        }
        report.unchanged = wanted_count.saturating_sub(changes.written.len());
        report.written = changes.written;
        report.removed = changes.removed;
        report.removed.sort();
        // A tool that got no file is not in the map either.
        manifest.retain(|name, _| self.bin_dir.join(name).exists());
        if manifest != old_manifest {
            let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
            if let Some(dir) = self.manifest.parent() {
                let _ = fs::create_dir_all(dir);
            }
            write_atomic(&self.manifest, text.as_bytes()).map_err(|source| {
                WrapperError::Write {
                    path: self.manifest.clone(),
                    source,
                }
            })?;
        }
        Ok(report)
    }

    /// The command map as last written (empty when missing or unreadable).
    pub fn read_manifest(&self) -> BTreeMap<String, ToolRef> {
        fs::read(&self.manifest)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }
}

/// `--workspace <root>` when `workspace` is given.
fn workspace_words(workspace: Option<&Path>) -> Vec<String> {
    workspace
        .map(|root| vec!["--workspace".into(), root.to_string_lossy().into_owned()])
        .unwrap_or_default()
}

/// The wrapper of one exposed tool.
pub fn tool_wrapper(
    entry: &WrapperEntry,
    client_bin: &Path,
    workspace: Option<&Path>,
) -> WrapperScript {
    tool_wrapper_for(entry, client_bin, &workspace_words(workspace))
}

/// [`tool_wrapper`] with the words that name whose servers answer (`caller`).
fn tool_wrapper_for(entry: &WrapperEntry, client_bin: &Path, caller: &[String]) -> WrapperScript {
    let mut exec = vec![
        client_bin.to_string_lossy().into_owned(),
        "mcp".into(),
        "call".into(),
    ];
    exec.extend(caller.iter().cloned());
    exec.push(entry.target.server.clone());
    exec.push(entry.target.tool.clone());
    WrapperScript {
        command: entry.spec.command.clone(),
        origin: "an MCP tool",
        about: vec![
            ("MCP server", entry.target.server.clone()),
            ("Tool", entry.target.tool.clone()),
        ],
        short_help: entry.spec.short_help(),
        long_help: Help::Text(entry.spec.full_help()),
        exports: Vec::new(),
        exec,
    }
}

/// The wrapper of a resource command: `synapse mcp resources|read [--workspace <root>] <server>`.
pub fn resource_wrapper(
    resource: &ResourceCommand,
    client_bin: &Path,
    workspace: Option<&Path>,
) -> WrapperScript {
    resource_wrapper_for(resource, client_bin, &workspace_words(workspace))
}

/// [`resource_wrapper`] with the words that name whose servers answer (`caller`).
fn resource_wrapper_for(
    resource: &ResourceCommand,
    client_bin: &Path,
    caller: &[String],
) -> WrapperScript {
    let mut exec = vec![
        client_bin.to_string_lossy().into_owned(),
        "mcp".into(),
        resource.verb.word().into(),
    ];
    exec.extend(caller.iter().cloned());
    exec.push(resource.server.clone());
    let command = &resource.command;
    let list = format!(
        "{}:resources",
        command.rsplit_once(':').map_or("", |(b, _)| b)
    );
    let (short, long) = match resource.verb {
        ResourceVerb::List => (
            format!(
                "Usage: {command}\n{}",
                resource.verb.description(&resource.server)
            ),
            format!(
                "{command} - {}\n\nUsage:\n  {command}\n\nPrints one line per resource \
                 (`<uri>  <name>  (<mime type>)  — <description>`), then the resource templates \
                 (URIs with {{…}} parts to fill). Takes no arguments.\n\nExample:\n  {command} | head",
                resource.verb.description(&resource.server)
            ),
        ),
        ResourceVerb::Read => (
            format!(
                "Usage: {command} <uri>\n{}",
                resource.verb.description(&resource.server)
            ),
            format!(
                "{command} - {}\n\nUsage:\n  {command} <uri>\n\nPrints the resource's text (a \
                 binary one is named, not printed). The URIs are the first word of each line of \
                 `{list}`; a template's URI is read with its {{…}} parts filled in.\n\n\
                 Example (the first resource listed):\n  {command} \"$({list} | head -n 1 | cut -d ' ' -f 1)\"",
                resource.verb.description(&resource.server)
            ),
        ),
    };
    WrapperScript {
        command: command.clone(),
        origin: "an MCP server's resources",
        about: vec![("MCP server", resource.server.clone())],
        short_help: short,
        long_help: Help::Text(long),
        exports: Vec::new(),
        exec,
    }
}

/// The full script of one wrapper.
pub fn render_script(
    entry: &WrapperEntry,
    client_bin: &Path,
    workspace: Option<&Path>,
) -> Result<String, ScriptError> {
    tool_wrapper(entry, client_bin, workspace).render()
}

#[cfg(test)]
#[path = "wrappers_tests.rs"]
mod tests;
