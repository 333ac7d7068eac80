//! Folding one call's [`LlmEvent`]s into the assistant [`Message`] the conversation keeps: text
//! deltas join into text blocks, completed tool calls become `tool_use` blocks in stream order.
//! The agent loop feeds every event it forwards to the client through a [`TurnBuilder`];
//! [`collect_turn`] does the whole job for callers that only want the result (summaries,
//! silent sub-agents).

use futures::StreamExt;

use super::error::LlmError;
use super::event_stream::EventStream;
use super::types::{ContentBlock, LlmEvent, Message, Role, StopReason, Usage};

/// A finished assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    /// The assistant message to append to the conversation: text and tool calls in stream order.
    pub message: Message,
    /// Token counts of the call that produced it.
    pub usage: Usage,
    /// Why the model stopped; [`StopReason::ToolUse`] means its tool calls should be run.
    pub stop_reason: StopReason,
}

/// Accumulates the assistant message while events stream by.
#[derive(Debug, Default)]
pub struct TurnBuilder {
    blocks: Vec<ContentBlock>,
    usage: Usage,
    stop_reason: Option<StopReason>,
}

impl TurnBuilder {
    /// An empty builder, for one model call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next event of the stream, in order: text deltas join the last text block,
    /// finished tool calls become `tool_use` blocks; `ToolCallStart` and `Retrying` are ignored.
    pub fn push(&mut self, event: &LlmEvent) {
        match event {
            LlmEvent::TextDelta(delta) => match self.blocks.last_mut() {
                Some(ContentBlock::Text { text }) => text.push_str(delta),
                _ => self.blocks.push(ContentBlock::Text {
                    text: delta.clone(),
                }),
            },
            LlmEvent::ToolCallDone { id, name, input } => self.blocks.push(ContentBlock::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }),
            LlmEvent::Usage(usage) => self.usage = *usage,
            LlmEvent::Done { stop_reason } => self.stop_reason = Some(stop_reason.clone()),
            LlmEvent::ToolCallStart { .. } | LlmEvent::Retrying { .. } => {}
        }
    }

    /// True once `Done` has been seen: only then may tool calls run.
    pub fn is_complete(&self) -> bool {
        self.stop_reason.is_some()
    }

    /// The assistant message so far (after an error: what was streamed before it, tool calls
    /// included only if they completed).
    pub fn message(&self) -> Message {
        Message {
            role: Role::Assistant,
            content: self.blocks.clone(),
        }
    }

    /// Why the model stopped, once `Done` has arrived.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop_reason.as_ref()
    }

    /// Token usage reported so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The finished turn, or `None` when `Done` never arrived.
    pub fn finish(self) -> Option<AssistantTurn> {
        let stop_reason = self.stop_reason?;
        Some(AssistantTurn {
            message: Message {
                role: Role::Assistant,
                content: self.blocks,
            },
            usage: self.usage,
            stop_reason,
        })
    }
}

/// Drains a stream into the finished turn.
pub async fn collect_turn(mut stream: EventStream) -> Result<AssistantTurn, LlmError> {
    let mut builder = TurnBuilder::new();
    while let Some(event) = stream.next().await {
        builder.push(&event?);
    }
    builder.finish().ok_or_else(|| LlmError::StreamBroken {
        provider: "the model server",
        reason: "the stream ended without a final event".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deltas_join_and_tool_calls_keep_their_order() {
        let mut b = TurnBuilder::new();
        for e in [
            LlmEvent::TextDelta("a".into()),
            LlmEvent::TextDelta("b".into()),
            LlmEvent::ToolCallStart {
                id: "1".into(),
                name: "Bash".into(),
            },
            LlmEvent::ToolCallDone {
                id: "1".into(),
                name: "Bash".into(),
                input: json!({"command": "ls"}),
            },
            LlmEvent::TextDelta("c".into()),
        ] {
            b.push(&e);
        }
        assert!(!b.is_complete());
        b.push(&LlmEvent::Done {
            stop_reason: StopReason::ToolUse,
        });
        let turn = b.finish().unwrap();
        assert_eq!(turn.message.content.len(), 3);
        assert_eq!(turn.message.text(), "abc");
        assert_eq!(turn.message.tool_uses().count(), 1);
    }
}
