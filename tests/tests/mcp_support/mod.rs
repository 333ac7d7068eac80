//! Shared helpers for the `mcp_*` tests: fixture paths (failing with the install hint when the
//! fixtures are missing), a temporary Synapse home with an MCP config, an in-process
//! [`McpManager`], deadline waits, and process counting through /proc.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod oauth;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use synapse_mcp::{McpCallOutput, McpManager, McpOptions, StateKind};

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn require(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "test fixture {} is missing: run tests/fixtures/install.sh (needs node/npm and python3.11)",
        path.display()
    );
    path
}

/// `node …/server-filesystem/dist/index.js`, as a config `command` + `args` prefix.
pub fn fs_server_js() -> PathBuf {
    require(
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
    )
}

pub fn venv_python() -> PathBuf {
    require(fixtures_dir().join("venv/bin/python"))
}

pub fn py_server() -> PathBuf {
    require(fixtures_dir().join("py_server.py"))
}

pub fn bad_mcp() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bad_mcp"))
}

/// A temporary Synapse home with `mcp/` and `bin/`.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("mcp")).unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::create_dir_all(dir.path().join("media")).unwrap();
        Home { dir }
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn bin(&self) -> PathBuf {
        self.path().join("bin")
    }
    /// Writes `$HOME/mcp/mcp_servers.json`.
    pub fn write_config(&self, doc: &Value) {
        let text = serde_json::to_string_pretty(doc).unwrap();
        std::fs::write(self.path().join("mcp/mcp_servers.json"), text).unwrap();
    }
    /// Manager options; `${VAR}` lookups see only `vars`.
    pub fn options(&self, client_bin: &Path, vars: &[(&str, &str)]) -> McpOptions {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        McpOptions {
            mcp_dir: self.path().join("mcp"),
            bin_dir: self.bin(),
            client_bin: client_bin.to_path_buf(),
            media_dir: self.path().join("media"),
            env: Arc::new(move |k| map.get(k).cloned()),
            oauth: synapse_mcp::oauth::OAuthVault::new(self.path().join("mcp/oauth")),
            user_env: Default::default(),
            project_plugins: Arc::new(synapse_shared::claude_plugins::UserOnly),
        }
    }
    /// The user's servers and one manager per workspace, as the daemon holds them.
    pub fn hub(&self, vars: &[(&str, &str)]) -> synapse_mcp::McpHub {
        synapse_mcp::McpHub::new(
            self.options(Path::new("/nonexistent/synapse"), vars),
            Arc::new(synapse_daemon::workspace::Workspaces::new(
                self.path().join("workspaces"),
                Arc::new(|| std::time::Duration::from_secs(600)),
            )),
        )
    }
    pub fn manager(&self, vars: &[(&str, &str)]) -> McpManager {
        McpManager::new(self.options(Path::new("/nonexistent/synapse"), vars))
    }
    pub fn wrappers(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.bin())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("mcp:"))
            .collect();
        names.sort();
        names
    }
}

pub fn stdio(command: &Path, args: &[&str]) -> Value {
    serde_json::json!({"command": command, "args": args})
}

/// Polls `cond` until it holds or `deadline` passes (then panics naming `what`).
pub async fn wait_until(deadline: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + deadline;
    while !cond() {
        assert!(
            Instant::now() < end,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn state_of(m: &McpManager, server: &str) -> Option<(StateKind, String)> {
    m.list()
        .into_iter()
        .find(|s| s.name == server)
        .map(|s| (s.state, s.reason))
}

pub async fn wait_ready(m: &McpManager, server: &str) {
    wait_until(Duration::from_secs(30), &format!("{server} ready"), || {
        matches!(state_of(m, server), Some((StateKind::Ready, _)))
    })
    .await;
}

pub fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

pub fn out(o: &McpCallOutput) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn err(o: &McpCallOutput) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Live processes whose command line contains `needle` (zombies excluded).
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.is_empty() || pid == std::process::id() {
            continue;
        }
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next();
            if state != Some('Z') {
                pids.push(pid);
            }
        }
    }
    pids
}

/// A unique tag for /proc searches.
pub fn unique_tag(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
