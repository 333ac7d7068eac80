//! Driving `synapse chat` through a real terminal: each [`Screen`] is a private tmux server
//! (its own socket in the test's temp root) running the REPL in one pane of a fixed size.
//! Tests type into it and wait, with a deadline, until the pane shows what a user would see.
//! tmux is the terminal emulator, so what we read is the rendered screen, not raw bytes.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use synapse_tests::fake_llm::FakeLlm;
use synapse_tests::{DEADLINE, TestEnv, bin};

pub const COLUMNS: u32 = 110;
pub const ROWS: u32 = 40;

pub struct Screen {
    socket: PathBuf,
}

impl Screen {
    /// Starts `synapse <args>` in a new pane, with the env's home and the fake model.
    pub fn start(env: &TestEnv, fake: Option<&FakeLlm>, args: &[&str]) -> Self {
        Self::start_with(env, fake, args, &[])
    }

    pub fn start_with(
        env: &TestEnv,
        fake: Option<&FakeLlm>,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> Self {
        Self::start_named(env, fake, args, vars, "tmux")
    }

    /// A second (third…) terminal of the same installation: its own tmux server, `name`.
    pub fn start_named(
        env: &TestEnv,
        fake: Option<&FakeLlm>,
        args: &[&str],
        vars: &[(&str, &str)],
        name: &str,
    ) -> Self {
        let socket = env.root().join(format!("{name}.sock"));
        let config = env.root().join("tmux.conf");
        std::fs::write(
            &config,
            "set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n",
        )
        .unwrap();
        let mut line = vec![quote(&bin("synapse").display().to_string())];
        line.extend(args.iter().map(|a| quote(a)));
        let mut cmd = Command::new("tmux");
        env.apply_env(&mut cmd);
        cmd.env("TERM", "xterm-256color").env("SHELL", "/bin/bash");
        if let Some(fake) = fake {
            cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "sk-test-key");
        }
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.arg("-S")
            .arg(&socket)
            .arg("-f")
            .arg(&config)
            .args(["new-session", "-d", "-s", "repl"])
            .args(["-x", &COLUMNS.to_string(), "-y", &ROWS.to_string()])
            .arg(line.join(" "));
        let out = cmd.output().expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self { socket }
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The whole pane including scrollback, wrapped lines joined, trailing blanks trimmed.
    pub fn text(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "repl"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines[..end].join("\n")
    }

    /// The visible pane with its colours (SGR escapes kept), for what only colour shows.
    pub fn text_with_colours(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-e", "-J", "-t", "repl"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `text` literally, then Enter.
    pub fn line(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }

    pub fn type_text(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-t", "repl", "-l", text]);
        assert!(out.status.success());
    }

    /// Keys by tmux name: `Enter`, `C-c`, `C-d`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "repl"];
        args.extend_from_slice(keys);
        let out = self.tmux(&args);
        assert!(out.status.success());
    }

    /// Waits until the screen contains `needle`; returns the screen.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |s| s.contains(needle))
    }

    /// Waits until `needle` appears at least `count` times.
    pub fn wait_for_count(&self, needle: &str, count: usize) -> String {
        self.wait_until(&format!("{count}× {needle:?}"), |s| {
            s.matches(needle).count() >= count
        })
    }

    pub fn wait_until(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        self.wait_within(DEADLINE, what, cond)
    }

    pub fn wait_within(
        &self,
        timeout: Duration,
        what: &str,
        cond: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.text();
            if cond(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting for {what}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(15));
        }
    }

    /// Kills the REPL process with SIGKILL (a terminal closed, an OOM kill): no goodbye to the
    /// daemon, just a stream that ends.
    pub fn kill_client(&self) {
        let out = self.tmux(&["display-message", "-p", "-t", "repl", "#{pane_pid}"]);
        let pid: i32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("the pane has a process");
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        synapse_tests::wait_until(DEADLINE, "the REPL is gone", || self.exited());
    }

    /// True once the REPL process has exited (the pane is dead).
    pub fn exited(&self) -> bool {
        let out = self.tmux(&["display-message", "-p", "-t", "repl", "#{pane_dead}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The screen from the last occurrence of `marker` on (what the latest step printed).
pub fn after_last<'a>(screen: &'a str, marker: &str) -> &'a str {
    screen.rfind(marker).map_or(screen, |i| &screen[i..])
}

/// `screen` up to and including the first `prompt`, with the per-turn summary line's time and
/// token counts (which vary from run to run) replaced, for snapshots.
pub fn stable_turn(screen: &str, prompt: &str) -> String {
    let end = screen
        .find(prompt)
        .map_or(screen.len(), |i| i + prompt.len());
    screen[..end]
        .lines()
        .map(|l| {
            if l.starts_with("✓ ") && l.contains(" tokens in · ") {
                "✓ <time> · <tokens>".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
