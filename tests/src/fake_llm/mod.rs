//! The scripted fake LLM: a real HTTP server on 127.0.0.1 that speaks the Anthropic Messages SSE
//! and OpenAI Chat Completions streaming formats, so the real providers (and a real `synapsed`)
//! can be driven end to end. Each request pops the next [`Step`] of a [`Script`] (or asks a
//! callback), is recorded for assertions, and is answered in the format its path asks for.
//!
//! ```ignore
//! let llm = FakeLlm::start(Script::new().tool_call("cat a.txt").text("done")).await?;
//! // point ANTHROPIC_BASE_URL at llm.anthropic_base_url(), or OPENAI_BASE_URL at llm.openai_base_url()
//! let requests = llm.wait_for_requests(2, Duration::from_secs(10)).await;
//! ```
//!
//! Modules: [`script`] (steps and builders), [`request`] (what was received), `wire` (rendering
//! per API) and `server` (HTTP, delays, cuts, hangs, holds). For latency benches the server
//! notes when it handed each answer's first text chunk to the connection
//! ([`FakeLlm::first_text_sent`]).

pub mod request;
pub mod script;
mod server;
mod wire;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use request::{Api, RecordedRequest};
pub use script::{Ending, ErrorReply, Part, Reply, Script, Step, StreamHold, ToolCall};

use server::{Shared, Source};

/// The models `GET /v1/models` lists (as a local OpenAI-compatible server would), for setup tests.
pub const FAKE_MODELS: &[&str] = &["fake-coder-7b", "fake-chat-1b"];

/// A running fake model server; it stops when dropped.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl FakeLlm {
    /// Serves `script`, one step per request; once it is exhausted every request gets a 400
    /// whose message says so.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        let scripted = script.len();
        Self::start_source(Source::Script(Mutex::new(script.steps)), scripted).await
    }

    /// Answers each request with `respond(request)`, for tests that react to the conversation.
    pub async fn start_with<F>(respond: F) -> std::io::Result<Self>
    where
        F: Fn(&RecordedRequest) -> Step + Send + Sync + 'static,
    {
        Self::start_source(Source::Callback(Box::new(respond)), 0).await
    }

    async fn start_source(source: Source, scripted: usize) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (received, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            source,
            requests: Mutex::new(Vec::new()),
            side_requests: Mutex::new(Vec::new()),
            received,
            scripted,
            open_connections: Default::default(),
            first_text: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn(server::serve(listener, shared.clone()));
        Ok(Self { addr, shared, task })
    }

    /// Client connections open right now (a killed or cancelled caller closes its own).
    pub fn open_connections(&self) -> usize {
        self.shared
            .open_connections
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The value for `ANTHROPIC_BASE_URL` (the SDK appends `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// The value for `OPENAI_BASE_URL` (the SDK appends `/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Appends a step to a running script (no effect in callback mode).
    pub fn push(&self, step: impl Into<Step>) {
        if let Source::Script(steps) = &self.shared.source
            && let Ok(mut steps) = steps.lock()
        {
            steps.push_back(step.into());
        }
    }

    /// Steps not yet used.
    pub fn remaining_steps(&self) -> usize {
        match &self.shared.source {
            Source::Script(steps) => steps.lock().map(|s| s.len()).unwrap_or(0),
            Source::Callback(_) => 0,
        }
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Requests that were not model calls (`GET …/models`, context-window probes such as
    /// `/props` and `/api/show`), each as "METHOD /path", oldest first.
    pub fn side_requests(&self) -> Vec<String> {
        self.shared
            .side_requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// When the first text chunk of the answer to request `index` (0-based, as
    /// [`RecordedRequest::index`]) was handed to its connection — the moment a real model's first
    /// token leaves it; `None` while it has not been (or the answer has no text). A bench compares
    /// it with when a front end shows that text.
    pub fn first_text_sent(&self, index: usize) -> Option<Instant> {
        let sent = self.shared.first_text.lock().ok()?;
        sent.iter().find(|(i, _)| *i == index).map(|(_, at)| *at)
    }

    /// Waits until at least `count` requests have arrived and returns them all.
    ///
    /// # Panics
    /// When `timeout` passes first; the message lists what did arrive. It is a test assertion.
    pub async fn wait_for_requests(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let mut received = self.shared.received.subscribe();
        let reached = tokio::time::timeout(timeout, received.wait_for(|n| *n >= count)).await;
        if !matches!(reached, Ok(Ok(_))) {
            let got: Vec<String> = self
                .requests()
                .iter()
                .map(|r| format!("#{} {} {}", r.index, r.method, r.path))
                .collect();
            panic!(
                "fake LLM: waited {timeout:?} for {count} request(s), got {}: {got:?}",
                got.len()
            );
        }
        self.requests()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLlm")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}
