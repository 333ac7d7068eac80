//! Mcp2Bash: one executable bash script per exposed tool, `$SYNAPSE_HOME/bin/mcp:<server>:<tool>`.
//!
//! A wrapper answers `-h` / `--help` (first argument only) from help text embedded at generation
//! time, so help works without the daemon; anything else `exec`s the `synapse` client by absolute
//! path: `synapse mcp call <server> <tool> "$@"`. Help text comes from the server and is hostile
//! input: it is embedded in a quoted heredoc whose delimiter is chosen not to occur in the text,
//! control characters are dropped, and every other word is shell-quoted.
//!
//! [`WrapperWriter::sync`] writes a wrapper atomically only when its bytes change, removes stale
//! `mcp:*` wrappers, and keeps the command → (server, tool) map in `$SYNAPSE_HOME/mcp/wrappers.json`.
//! Wrappers of a server that is configured but not connected right now are kept as they are.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use synapse_shared::atomic::{write_atomic, write_atomic_mode};

use super::names::{COMMAND_PREFIX, ToolRef};
use super::schema::ToolSpec;

/// The map kept beside the wrappers, below `$SYNAPSE_HOME/mcp/`.
pub const MANIFEST_FILE: &str = "wrappers.json";

#[derive(Debug, thiserror::Error)]
pub enum WrapperError {
    #[error("cannot write wrapper {path}: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot remove stale wrapper {path}: {source}", path = .path.display())]
    Remove { path: PathBuf, source: io::Error },
    #[error("cannot list {path}: {source}", path = .path.display())]
    List { path: PathBuf, source: io::Error },
    #[error("{what} contains a NUL byte and cannot be put in a script")]
    Nul { what: String },
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

/// Writes and prunes the `mcp:*` wrappers in one folder.
#[derive(Debug, Clone)]
pub struct WrapperWriter {
    bin_dir: PathBuf,
    manifest: PathBuf,
    client_bin: PathBuf,
    /// The workspace root a project server's wrappers name (`mcp call --workspace`), so a call
    /// reaches that project's server wherever the shell has `cd`-ed to.
    workspace: Option<PathBuf>,
}

impl WrapperWriter {
    /// `client_bin` is the absolute path of the `synapse` client the wrappers exec.
    pub fn new(bin_dir: PathBuf, mcp_dir: &Path, client_bin: PathBuf) -> WrapperWriter {
        WrapperWriter {
            bin_dir,
            manifest: mcp_dir.join(MANIFEST_FILE),
            client_bin,
            workspace: None,
        }
    }

    /// Wrappers for the project servers of workspace `root`.
    pub fn for_workspace(mut self, root: PathBuf) -> WrapperWriter {
        self.workspace = Some(root);
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
        // Nothing to write into a folder that is not there (a workspace without servers).
        if entries.is_empty() && !self.bin_dir.exists() {
            return Ok(SyncReport::default());
        }
        fs::create_dir_all(&self.bin_dir).map_err(|source| WrapperError::List {
            path: self.bin_dir.clone(),
            source,
        })?;
        let old_manifest = self.read_manifest();
        let mut manifest: BTreeMap<String, ToolRef> = BTreeMap::new();
        let mut report = SyncReport::default();
        for entry in entries {
            let command = &entry.spec.command;
            let skip = |report: &mut SyncReport, why: String| {
                let msg = format!("MCP tool {}: no wrapper: {why}", short_name(command));
                tracing::warn!("{msg}");
                report.skipped.push(msg);
            };
            if command.len() > FILE_NAME_MAX_BYTES {
                skip(
                    &mut report,
                    format!(
                        "the command name is {} bytes, over the {FILE_NAME_MAX_BYTES}-byte file \
                         name limit; call it with `synapse mcp call {} …` instead",
                        command.len(),
                        short_name(&entry.target.server)
                    ),
                );
                continue;
            }
            let path = self.bin_dir.join(command);
            let script = match render_script(entry, &self.client_bin, self.workspace.as_deref()) {
                Ok(s) => s,
                Err(e) => {
                    skip(&mut report, e.to_string());
                    continue;
                }
            };
            let current_mode = fs::metadata(&path)
                .map(|m| m.permissions().mode() & 0o777)
                .ok();
            let same = current_mode == Some(0o755)
                && fs::read(&path).is_ok_and(|b| b == script.as_bytes());
            if same {
                report.unchanged += 1;
            } else {
                if let Err(e) = write_atomic_mode(&path, script.as_bytes(), 0o755) {
                    skip(&mut report, format!("cannot write {}: {e}", path.display()));
                    continue;
                }
                report.written.push(entry.spec.command.clone());
            }
            manifest.insert(entry.spec.command.clone(), entry.target.clone());
        }
        let listing = fs::read_dir(&self.bin_dir).map_err(|source| WrapperError::List {
            path: self.bin_dir.clone(),
            source,
        })?;
        for item in listing.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if !name.starts_with(COMMAND_PREFIX) || manifest.contains_key(&name) {
                continue;
            }
            if let Some(target) = old_manifest
                .get(&name)
                .filter(|t| keep_servers.contains(&t.server))
            {
                manifest.insert(name, target.clone());
                continue;
            }
            let path = item.path();
            match fs::remove_file(&path) {
                Ok(()) => report.removed.push(name),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(WrapperError::Remove { path, source }),
            }
        }
        report.removed.sort();
        if manifest != old_manifest {
            let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
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

/// Drops control characters (except newline and tab) from text that goes into a script.
fn clean_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// One line for a `#` comment: no newlines or control characters.
fn comment_safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn quote(what: &str, word: &str) -> Result<String, WrapperError> {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .map_err(|_| WrapperError::Nul {
            what: what.to_string(),
        })
}

/// A heredoc delimiter that no line of `text` equals.
fn delimiter_for(text: &str) -> String {
    let mut delim = "SYNAPSE_HELP_END".to_string();
    let mut n = 0;
    while text.lines().any(|l| l == delim) {
        n += 1;
        delim = format!("SYNAPSE_HELP_END_{n}");
    }
    delim
}

fn heredoc(text: &str) -> String {
    let mut body = clean_text(text);
    if !body.ends_with('\n') {
        body.push('\n');
    }
    let delim = delimiter_for(&body);
    format!("cat <<'{delim}'\n{body}{delim}\n")
}

/// The full script of one wrapper.
pub fn render_script(
    entry: &WrapperEntry,
    client_bin: &Path,
    workspace: Option<&Path>,
) -> Result<String, WrapperError> {
    let client = quote("client path", &client_bin.to_string_lossy())?;
    let workspace = match workspace {
        Some(root) => format!(
            "--workspace {} ",
            quote("workspace", &root.to_string_lossy())?
        ),
        None => String::new(),
    };
    let server = quote("server name", &entry.target.server)?;
    let tool = quote("tool name", &entry.target.tool)?;
    Ok(format!(
        "#!/bin/bash\n\
         # Generated by synapsed (Mcp2Bash); `synapse tools refresh mcp` rewrites it. Do not edit.\n\
         # Command: {command}\n\
         # MCP server: {server_c}\n\
         # Tool: {tool_c}\n\
         case \"${{1-}}\" in\n\
         -h)\n{short}exit 0 ;;\n\
         --help)\n{full}exit 0 ;;\n\
         esac\n\
         exec {client} mcp call {workspace}{server} {tool} \"$@\"\n",
        command = comment_safe(&entry.spec.command),
        server_c = comment_safe(&entry.target.server),
        tool_c = comment_safe(&entry.target.tool),
        short = heredoc(&entry.spec.short_help()),
        full = heredoc(&entry.spec.full_help()),
    ))
}

#[cfg(test)]
#[path = "wrappers_tests.rs"]
mod tests;
