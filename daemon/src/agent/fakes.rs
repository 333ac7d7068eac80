//! Test doubles for the agent core (unit tests only): [`ScriptedProvider`], an [`LlmProvider`]
//! that answers each model call with the next scripted list of events (or error), recording
//! every request; [`FakeExecutor`], a [`ToolExecutor`] that answers commands from a table,
//! records them, and can hang until cancelled. Together they run the runner and the session
//! logic in milliseconds with no daemon, socket or shell.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::executor::{BashCall, ToolExecutor, ToolFuture, ToolOutcome};
use synapse_llm::{
    EventStream, LlmError, LlmEvent, LlmProvider, LlmRequest, ProviderKind, StopReason, Usage,
};

/// What one scripted model call does.
#[derive(Debug, Clone)]
pub enum Step {
    /// These events, then the stream ends.
    Events(Vec<Result<LlmEvent, LlmError>>),
    /// Never answers (until the caller drops the stream).
    Hang,
}

/// A reply of plain text that ends the turn.
pub fn text(t: &str) -> Step {
    Step::Events(vec![
        Ok(LlmEvent::TextDelta(t.into())),
        Ok(LlmEvent::Usage(usage(10, 5))),
        Ok(LlmEvent::Done {
            stop_reason: StopReason::EndTurn,
        }),
    ])
}

/// A reply asking for one `Bash` call.
pub fn bash(id: &str, command: &str) -> Step {
    Step::Events(vec![
        Ok(LlmEvent::ToolCallDone {
            id: id.into(),
            name: "Bash".into(),
            input: json!({ "command": command }),
        }),
        Ok(LlmEvent::Usage(usage(20, 5))),
        Ok(LlmEvent::Done {
            stop_reason: StopReason::ToolUse,
        }),
    ])
}

/// A failed call.
pub fn fail(error: LlmError) -> Step {
    Step::Events(vec![Err(error)])
}

pub fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input,
        output,
        ..Usage::default()
    }
}

#[derive(Debug, Default)]
pub struct ScriptedProvider {
    steps: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<LlmRequest>>,
    /// Answers requests without tools (compaction summaries) with [`SCRIPTED_SUMMARY`],
    /// outside the script.
    summaries: bool,
}

/// What a provider made with [`ScriptedProvider::answering_summaries`] summarises.
pub const SCRIPTED_SUMMARY: &str = "SCRIPTED-SUMMARY of the earlier conversation";

impl ScriptedProvider {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(steps.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            summaries: false,
        })
    }

    /// Like [`Self::new`], answering every compaction summary request on its own, whenever it
    /// comes.
    pub fn answering_summaries(steps: impl IntoIterator<Item = Step>) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(steps.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            summaries: true,
        })
    }

    /// Every request the runner sent, in order.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().clone()
    }
}

impl LlmProvider for ScriptedProvider {
    fn stream(&self, request: LlmRequest) -> Result<EventStream, LlmError> {
        let summary = self.summaries && request.tools.is_empty();
        {
            let mut r = self.requests.lock();
            r.push(request);
        }
        let step = if summary {
            Some(text(SCRIPTED_SUMMARY))
        } else {
            self.steps.lock().pop_front()
        };
        Ok(match step {
            Some(Step::Events(events)) => Box::pin(futures::stream::iter(events)),
            Some(Step::Hang) => Box::pin(futures::stream::pending()),
            None => Box::pin(futures::stream::iter(vec![Err(LlmError::Protocol {
                provider: "scripted",
                message: "the script has no more replies".into(),
            })])),
        })
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        "scripted-model"
    }
}

/// Answers commands from a table (unknown commands exit 0 with `ran: <command>`); the command
/// `hang` waits until cancelled and then reports exit 130.
#[derive(Debug, Default)]
pub struct FakeExecutor {
    answers: Vec<(String, ToolOutcome)>,
    calls: Mutex<Vec<BashCall>>,
}

impl FakeExecutor {
    pub fn new(answers: &[(&str, &str, i32)]) -> Arc<Self> {
        Arc::new(Self {
            answers: answers
                .iter()
                .map(|(c, o, e)| {
                    (
                        c.to_string(),
                        ToolOutcome {
                            output: o.to_string(),
                            exit_code: *e,
                            images: Vec::new(),
                            changes: Vec::new(),
                        },
                    )
                })
                .collect(),
            calls: Mutex::new(Vec::new()),
        })
    }

    /// The commands run so far.
    pub fn commands(&self) -> Vec<String> {
        self.calls
            .lock()
            .iter()
            .map(|c| c.command.clone())
            .collect()
    }
}

impl ToolExecutor for FakeExecutor {
    fn execute(&self, call: BashCall, cancel: CancellationToken) -> ToolFuture<'_> {
        {
            let mut c = self.calls.lock();
            c.push(call.clone());
        }
        let answer = self
            .answers
            .iter()
            .find(|(c, _)| *c == call.command)
            .map(|(_, o)| o.clone());
        Box::pin(async move {
            if call.command == "hang" {
                cancel.cancelled().await;
                return ToolOutcome {
                    output: "[killed: cancelled]".into(),
                    exit_code: 130,
                    images: Vec::new(),
                    changes: Vec::new(),
                };
            }
            answer.unwrap_or(ToolOutcome {
                output: format!("ran: {}", call.command),
                exit_code: 0,
                images: Vec::new(),
                changes: Vec::new(),
            })
        })
    }
}

/// Hands every session the one scripted provider, whatever the configuration.
pub struct FakeProviders(pub Arc<ScriptedProvider>);

impl super::session::ProviderFactory for FakeProviders {
    fn build(&self, _: &synapse_llm::ProviderConfig) -> Result<Arc<dyn LlmProvider>, LlmError> {
        Ok(self.0.clone())
    }
}
