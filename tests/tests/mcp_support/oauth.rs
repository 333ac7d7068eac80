//! Helpers of the `mcp_oauth` tests: the OAuth fixture process (`tests/fixtures/oauth_server.py`,
//! an authorization server and a Streamable HTTP MCP server in one), a `$BROWSER` that plays the
//! user's browser (`oauth_browser.py`), and small readers of what Synapse left behind.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use synapse_tests::{Run, TestEnv, run};

use super::{fixtures_dir, venv_python};

/// The fixture process; killed when dropped.
pub struct Fixture {
    child: Child,
    port: u16,
}

impl Fixture {
    pub fn start(token_lifetime_secs: &str) -> Fixture {
        let mut child = Command::new(venv_python())
            .arg(fixtures_dir().join("oauth_server.py"))
            .args(["--token-lifetime", token_lifetime_secs])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the fixture did not say its port: {line:?}"));
        Fixture { child, port }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn request(&self, method: &str, path: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default()
    }

    /// The fixture's counters and every token it issued.
    pub fn state(&self) -> Value {
        serde_json::from_str(&self.request("GET", "/_state")).unwrap()
    }

    pub fn count(&self, pointer: &str) -> u64 {
        self.state()
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap()
    }

    pub fn tokens(&self) -> Vec<String> {
        let state = self.state();
        ["/access_tokens", "/refresh_tokens"]
            .iter()
            .flat_map(|p| {
                state
                    .pointer(p)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `$BROWSER` that runs `oauth_browser.py` (its mode from `FAKE_BROWSER_MODE`).
pub fn browser(env: &TestEnv) -> PathBuf {
    let path = env.root().join("browser.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            venv_python().display(),
            fixtures_dir().join("oauth_browser.py").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

pub fn configure(env: &TestEnv, servers: Value) {
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
}

/// `synapse mcp login <server>` with the fake browser in `mode`.
pub fn login(env: &TestEnv, server: &str, mode: &str, extra: &[&str]) -> Run {
    let log = env.root().join(format!("browser-{mode}.log"));
    let mut cmd = env.synapse();
    cmd.env("BROWSER", browser(env))
        .env("FAKE_BROWSER_MODE", mode)
        .env("FAKE_BROWSER_LOG", &log)
        .args(["mcp", "login", server])
        .args(extra);
    run(&mut cmd)
}

/// What the stand-in browser got back from the callback. The browser may still be writing it
/// when `synapse mcp login` has already ended: wait for it, with a deadline.
pub fn browser_log(env: &TestEnv, mode: &str) -> String {
    let path = env.root().join(format!("browser-{mode}.log"));
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    synapse_tests::wait_until(synapse_tests::DEADLINE, "the browser's log", || {
        !read().trim().is_empty()
    });
    read()
}

pub fn token_files(env: &TestEnv) -> Vec<PathBuf> {
    match std::fs::read_dir(env.home().join("mcp/oauth")) {
        Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// The line of `server` in `synapse mcp list`.
pub fn list_line(env: &TestEnv, server: &str) -> String {
    let listed = env.cli(&["mcp", "list"]).stdout;
    listed
        .lines()
        .find(|l| l.starts_with(&format!("{server} ")))
        .unwrap_or_default()
        .to_string()
}

pub fn echo(env: &TestEnv, text: &str) -> Run {
    env.cli(&["mcp", "call", "srv", "echo", "--text", text])
}

/// Every file below `dir` except the token folder.
pub fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.ends_with("mcp/oauth") {
            continue;
        }
        if path.is_dir() {
            files_below(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}
