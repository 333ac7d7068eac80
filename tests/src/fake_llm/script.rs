//! What the fake model answers: a [`Script`] is a queue of [`Step`]s, one per incoming request.
//! A [`Reply`] is one assistant turn (text and/or `Bash` tool calls) with optional per-event
//! delays, an [`Ending`] that can cut, hang or fail the stream part-way, and an optional
//! [`StreamHold`] that stops it part-way until the test lets it go on; an [`ErrorReply`] is an
//! HTTP error in the API's own error format. The wire modules render these per API.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

/// The answers to successive requests, first to last.
#[derive(Debug, Clone, Default)]
pub struct Script {
    pub(crate) steps: VecDeque<Step>,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends any step.
    pub fn step(mut self, step: impl Into<Step>) -> Self {
        self.steps.push_back(step.into());
        self
    }

    /// Appends one assistant turn.
    pub fn reply(self, reply: Reply) -> Self {
        self.step(reply)
    }

    /// Appends a turn that only says `text` (streamed in word-sized deltas).
    pub fn text(self, text: impl Into<String>) -> Self {
        self.step(Reply::new().text(text))
    }

    /// Appends a turn that only calls `Bash` with `command`.
    pub fn tool_call(self, command: impl Into<String>) -> Self {
        self.step(Reply::new().tool_call(command))
    }

    /// Appends an HTTP error answer.
    pub fn error(self, error: ErrorReply) -> Self {
        self.step(error)
    }

    /// Appends Anthropic's `529 overloaded_error` (rendered in the requested API's error format).
    pub fn overloaded(self) -> Self {
        self.step(ErrorReply::overloaded())
    }

    /// Appends a request that is accepted and never answered.
    pub fn hang(self) -> Self {
        self.step(Step::Hang)
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// The answer to one request.
#[derive(Debug, Clone)]
pub enum Step {
    Reply(Reply),
    Error(ErrorReply),
    /// Read the request, then never answer (until the server is dropped).
    Hang,
}

impl From<Reply> for Step {
    fn from(r: Reply) -> Self {
        Step::Reply(r)
    }
}

impl From<ErrorReply> for Step {
    fn from(e: ErrorReply) -> Self {
        Step::Error(e)
    }
}

/// One part of an assistant turn.
#[derive(Debug, Clone)]
pub enum Part {
    /// Text streamed as these deltas.
    Text(Vec<String>),
    ToolCall(ToolCall),
}

/// A tool call in a reply; its input JSON is streamed in `pieces` fragments.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub id: Option<String>,
    pub name: String,
    pub input: Value,
    pub pieces: usize,
}

impl ToolCall {
    /// A `Bash` call with `{"command": command}`.
    pub fn bash(command: impl Into<String>) -> Self {
        Self {
            id: None,
            name: "Bash".into(),
            input: json!({"command": command.into()}),
            pieces: 3,
        }
    }

    /// Any tool name and input (to test how the agent handles calls it did not offer).
    pub fn raw(name: impl Into<String>, input: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            input,
            pieces: 3,
        }
    }

    /// Adds `"restart": true`.
    pub fn restart(mut self) -> Self {
        self.input["restart"] = Value::Bool(true);
        self
    }

    /// Uses this id instead of a generated one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Streams the input JSON in this many fragments (at least 1).
    pub fn pieces(mut self, pieces: usize) -> Self {
        self.pieces = pieces.max(1);
        self
    }
}

/// How a reply's stream ends. Event counts include every SSE event (Anthropic) or `data:` line
/// (OpenAI) from the first on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Ending {
    #[default]
    Complete,
    /// Send this many events, then drop the connection mid-body.
    CutAfter(usize),
    /// Send this many events, then keep the connection open without sending more.
    HangAfter(usize),
    /// Send this many events, then the API's in-stream error event, then end the body.
    ErrorAfter {
        events: usize,
        error_type: String,
        message: String,
    },
}

/// One assistant turn.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub parts: Vec<Part>,
    /// Wait before each event.
    pub delay: Duration,
    pub ending: Ending,
    /// Input tokens reported; default: request body bytes / 4.
    pub input_tokens: Option<u64>,
    /// Output tokens reported; default: a rough count of the reply.
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    /// The stop reason in the API's spelling; default `end_turn`/`stop` or `tool_use`/`tool_calls`.
    pub stop_reason: Option<String>,
    /// Stop after this many events until the hold is released ([`Reply::hold_after`]).
    pub hold: Option<(usize, StreamHold)>,
}

impl Reply {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds text, streamed as one delta per word (spaces kept).
    pub fn text(self, text: impl Into<String>) -> Self {
        let text = text.into();
        let chunks: Vec<String> = text.split_inclusive(' ').map(str::to_string).collect();
        self.text_chunks(if chunks.is_empty() {
            vec![text]
        } else {
            chunks
        })
    }

    /// Adds text streamed as exactly these deltas.
    pub fn text_chunks<S: Into<String>>(mut self, chunks: impl IntoIterator<Item = S>) -> Self {
        self.parts
            .push(Part::Text(chunks.into_iter().map(Into::into).collect()));
        self
    }

    /// Adds a `Bash` call with `command`.
    pub fn tool_call(self, command: impl Into<String>) -> Self {
        self.call(ToolCall::bash(command))
    }

    /// Adds a tool call built with [`ToolCall`].
    pub fn call(mut self, call: ToolCall) -> Self {
        self.parts.push(Part::ToolCall(call));
        self
    }

    /// Waits this long before each event.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn cut_after(mut self, events: usize) -> Self {
        self.ending = Ending::CutAfter(events);
        self
    }

    pub fn hang_after(mut self, events: usize) -> Self {
        self.ending = Ending::HangAfter(events);
        self
    }

    /// After `events` events, sends the API's error event (e.g. `overloaded_error`).
    pub fn error_after(
        mut self,
        events: usize,
        error_type: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        self.ending = Ending::ErrorAfter {
            events,
            error_type: error_type.into(),
            message: message.into(),
        };
        self
    }

    /// Sends `events` events, then waits until `hold` is released and sends the rest (the
    /// events are counted as for [`Ending`]).
    pub fn hold_after(mut self, events: usize, hold: &StreamHold) -> Self {
        self.hold = Some((events, hold.clone()));
        self
    }

    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.input_tokens = Some(input);
        self.output_tokens = Some(output);
        self
    }

    pub fn cache(mut self, read: u64, creation: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_creation_tokens = creation;
        self
    }

    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    pub(crate) fn has_tool_calls(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::ToolCall(_)))
    }

    pub(crate) fn rough_output_tokens(&self) -> u64 {
        let chars: usize = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(chunks) => chunks.iter().map(String::len).sum(),
                Part::ToolCall(c) => c.input.to_string().len() + c.name.len(),
            })
            .sum();
        (chars as u64 / 4).max(1)
    }
}

/// A point where a reply's stream stops until the test lets it go on: the test waits for the
/// stream to get there ([`StreamHold::reached`]), does what it needs done mid-answer, then
/// calls [`StreamHold::release`]. Cheap to clone (shared).
///
/// ```ignore
/// let hold = StreamHold::new();
/// let llm = FakeLlm::start(Script::new().reply(Reply::new().text("a b c").hold_after(4, &hold))).await?;
/// hold.reached(DEADLINE).await; // "a " has been sent, the rest waits
/// hold.release();
/// ```
#[derive(Debug, Clone)]
pub struct StreamHold {
    reached: Arc<watch::Sender<bool>>,
    released: Arc<watch::Sender<bool>>,
}

impl Default for StreamHold {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamHold {
    pub fn new() -> Self {
        Self {
            reached: Arc::new(watch::channel(false).0),
            released: Arc::new(watch::channel(false).0),
        }
    }

    /// Lets every stream stopped here go on (and any that gets here later pass at once).
    pub fn release(&self) {
        self.released.send_replace(true);
    }

    /// Waits until a stream has stopped here: every event before the hold has been handed to
    /// the connection.
    ///
    /// # Panics
    /// When `timeout` passes first. It is a test assertion.
    pub async fn reached(&self, timeout: Duration) {
        let mut reached = self.reached.subscribe();
        let got = tokio::time::timeout(timeout, reached.wait_for(|r| *r)).await;
        assert!(
            matches!(got, Ok(Ok(_))),
            "fake LLM: no stream reached its hold within {timeout:?}"
        );
    }

    /// The stream's side: notes it got here, then waits for the release.
    pub(crate) async fn wait(&self) {
        self.reached.send_replace(true);
        let mut released = self.released.subscribe();
        let _ = released.wait_for(|r| *r).await;
    }
}

/// An HTTP error answer, rendered as the API's error JSON unless `raw_body` is set.
#[derive(Debug, Clone)]
pub struct ErrorReply {
    pub status: u16,
    pub error_type: String,
    pub message: String,
    pub headers: Vec<(String, String)>,
    pub raw_body: Option<String>,
}

impl ErrorReply {
    pub fn new(status: u16, error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status,
            error_type: error_type.into(),
            message: message.into(),
            headers: Vec::new(),
            raw_body: None,
        }
    }

    /// 529 `overloaded_error`, as Anthropic sends under load.
    pub fn overloaded() -> Self {
        Self::new(529, "overloaded_error", "Overloaded")
    }

    /// 429 `rate_limit_error` without a retry hint; add one with [`ErrorReply::header`].
    pub fn rate_limited() -> Self {
        Self::new(
            429,
            "rate_limit_error",
            "This request would exceed your rate limit.",
        )
    }

    /// 429 with `retry-after: <seconds>`.
    pub fn rate_limited_for(seconds: u64) -> Self {
        Self::rate_limited().header("retry-after", seconds.to_string())
    }

    /// 401 `authentication_error`.
    pub fn unauthorized() -> Self {
        Self::new(401, "authentication_error", "invalid x-api-key")
    }

    /// 500 `api_error`.
    pub fn server_error() -> Self {
        Self::new(500, "api_error", "Internal server error")
    }

    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends exactly this body (e.g. an HTML page from a proxy).
    pub fn raw_body(mut self, body: impl Into<String>) -> Self {
        self.raw_body = Some(body.into());
        self
    }
}
