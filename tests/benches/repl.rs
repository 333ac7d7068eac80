//! Issue 7 benchmarks, whole processes in a real pseudo-terminal: `synapse chat` from spawn to
//! the prompt drawn with a warm daemon (goal ≤ 20 ms, status line on), and keystroke-to-echo
//! while a turn streams: during a turn the REPL reads keys itself (Esc cancels, the rest is
//! type-ahead) and draws what was typed on the spinner line, so the echo measured is that redraw.
//! Needs release binaries: `cargo build --release --bins`, then `cargo bench -p synapse-tests
//! --bench repl`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};

const RUNS: usize = 30;
const KEYSTROKES: usize = 30;
const PROMPT: &[u8] = b"You (1)>";
/// rustyline asks where the cursor is before drawing the prompt.
const CURSOR_QUERY: &[u8] = b"\x1b[6n";
const TIMEOUT: Duration = Duration::from_secs(20);

/// A `synapse chat` on the slave side of a fresh pty; output arrives through `rx`.
struct Repl {
    child: Child,
    master: File,
    rx: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
    answered_query: bool,
}

impl Repl {
    fn spawn(env: &TestEnv, fake: &FakeLlm) -> (Self, Instant) {
        let pty = nix::pty::openpty(None, None).unwrap();
        let slave = File::from(pty.slave);
        let mut cmd = env.synapse();
        cmd.arg("chat")
            .env("TERM", "xterm-256color")
            .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-bench")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let master = File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let started = Instant::now();
        let child = cmd.spawn().unwrap();
        (
            Self {
                child,
                master,
                rx,
                seen: Vec::new(),
                answered_query: false,
            },
            started,
        )
    }

    /// Reads until `needle` shows up after byte `from`; answers the cursor query on the way.
    fn wait_for(&mut self, needle: &[u8], from: usize) {
        let deadline = Instant::now() + TIMEOUT;
        while !contains(&self.seen[from.min(self.seen.len())..], needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = self.rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no {:?} within {TIMEOUT:?}; got {:?}",
                    String::from_utf8_lossy(needle),
                    String::from_utf8_lossy(&self.seen)
                )
            });
            self.seen.extend_from_slice(&chunk);
            if !self.answered_query && contains(&self.seen, CURSOR_QUERY) {
                self.answered_query = true;
                self.master.write_all(b"\x1b[1;1R").unwrap();
            }
        }
    }

    fn quit(mut self) {
        // Ctrl-U clears anything typed, Ctrl-D leaves.
        self.master.write_all(b"\x15\x04").unwrap();
        let deadline = Instant::now() + TIMEOUT;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "synapse chat did not exit");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn report(id: &str, name: &str, mut samples: Vec<Duration>, goal: Option<Duration>) {
    synapse_tests::report::samples(id, &samples);
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name}: n={} min {:.2} ms · median {:.2} ms · p90 {:.2} ms · max {:.2} ms{}",
        samples.len(),
        ms(samples[0]),
        ms(pick(0.5)),
        ms(pick(0.9)),
        ms(samples[samples.len() - 1]),
        goal.map(|g| format!(" (goal ≤ {:.0} ms)", ms(g)))
            .unwrap_or_default()
    );
}

fn start_to_prompt(env: &TestEnv, fake: &FakeLlm) {
    // Warm-up: the binaries are in the page cache, the daemon's first session is made.
    let (mut repl, _) = Repl::spawn(env, fake);
    repl.wait_for(PROMPT, 0);
    repl.quit();
    let runs = synapse_tests::report::size(RUNS, 3);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (mut repl, started) = Repl::spawn(env, fake);
        repl.wait_for(PROMPT, 0);
        samples.push(started.elapsed());
        repl.quit();
    }
    report(
        "repl.start_to_prompt",
        "synapse chat start → prompt drawn (warm daemon)",
        samples,
        Some(Duration::from_millis(20)),
    );
}

fn echo_while_streaming(env: &TestEnv, fake: &FakeLlm) {
    let (mut repl, _) = Repl::spawn(env, fake);
    repl.wait_for(PROMPT, 0);
    repl.master.write_all(b"stream please\r").unwrap();
    repl.wait_for(b"chunk-5\r\n", 0);
    let keystrokes = synapse_tests::report::size(KEYSTROKES, 3);
    let mut samples = Vec::with_capacity(keystrokes);
    let mut typed = String::new();
    for i in 0..keystrokes {
        let key = [b'a' + (i % 26) as u8];
        typed.push(key[0] as char);
        // The type-ahead is drawn as "› <everything typed so far>".
        let echo = format!("› {typed}");
        let from = repl.seen.len();
        let started = Instant::now();
        repl.master.write_all(&key).unwrap();
        repl.wait_for(echo.as_bytes(), from);
        samples.push(started.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    report(
        "repl.keystroke_echo",
        "keystroke → echo while a turn streams",
        samples,
        None,
    );
    // Keys typed during a turn wait for its end; quit from the next prompt.
    repl.wait_for(b"You (2)>", 0);
    repl.quit();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // One line per chunk, so the answer is rendered (and the spinner redrawn) while it streams.
    let chunks: Vec<String> = (0..400).map(|i| format!("chunk-{i}\n")).collect();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new().reply(
                Reply::new()
                    .text_chunks(chunks)
                    .delay(Duration::from_millis(10)),
            ),
        ))
        .unwrap();
    let env = TestEnv::new();
    env.start_daemon();
    start_to_prompt(&env, &fake);
    echo_while_streaming(&env, &fake);
}
