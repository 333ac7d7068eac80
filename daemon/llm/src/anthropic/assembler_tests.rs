//! Tests of the Anthropic assembler: SSE split at any byte still yields the same text and tool
//! calls, error events and broken JSON are reported, unknown events are ignored.

use eventsource_stream::Eventsource;
use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

/// Parses SSE text delivered in `chunk`-byte pieces, the way a slow network splits it.
async fn sse_events(text: &str, chunk: usize) -> Vec<Event> {
    let pieces: Vec<Result<Vec<u8>, std::convert::Infallible>> = text
        .as_bytes()
        .chunks(chunk)
        .map(|c| Ok(c.to_vec()))
        .collect();
    futures::stream::iter(pieces)
        .eventsource()
        .map(|e| e.unwrap())
        .collect()
        .await
}

fn feed_all(events: &[Event]) -> Result<Vec<LlmEvent>, FeedError> {
    let mut a = AnthropicAssembler::new();
    let mut out = Vec::new();
    for e in events {
        out.extend(a.feed(e)?);
    }
    assert!(a.is_finished(), "message_stop was seen");
    Ok(out)
}

const TOOL_TURN: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":2000,"cache_read_input_tokens":30,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking at the café "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"menu 🍰."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comma"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"nd\": \"cat menu.txt | grep 'é'\""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":57}}

event: message_stop
data: {"type":"message_stop"}

"#;

#[tokio::test]
async fn text_and_tool_call_assemble_however_the_bytes_are_split() {
    let expected = vec![
        LlmEvent::TextDelta("Looking at the café ".into()),
        LlmEvent::TextDelta("menu 🍰.".into()),
        LlmEvent::ToolCallStart {
            id: "toolu_01".into(),
            name: "Bash".into(),
        },
        LlmEvent::ToolCallDone {
            id: "toolu_01".into(),
            name: "Bash".into(),
            input: json!({"command": "cat menu.txt | grep 'é'"}),
        },
        LlmEvent::Usage(Usage {
            input: 120,
            output: 57,
            cache_read: 30,
            cache_creation: 2000,
        }),
        LlmEvent::Done {
            stop_reason: StopReason::ToolUse,
        },
    ];
    for chunk in [1, 3, 7, 64, TOOL_TURN.len()] {
        let events = sse_events(TOOL_TURN, chunk).await;
        assert_eq!(feed_all(&events).unwrap(), expected, "chunk size {chunk}");
    }
}

#[tokio::test]
async fn tool_call_without_deltas_takes_the_start_input() {
    let text = r#"event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

"#;
    let out = feed_all(&sse_events(text, 16).await).unwrap();
    assert_eq!(
        out[1],
        LlmEvent::ToolCallDone {
            id: "t".into(),
            name: "Bash".into(),
            input: json!({"command": "ls"})
        }
    );
}

#[tokio::test]
async fn error_event_and_broken_json_are_reported() {
    let text = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let events = sse_events(text, 5).await;
    let mut a = AnthropicAssembler::new();
    assert_eq!(
        a.feed(&events[0]),
        Err(FeedError::Api {
            kind: "overloaded_error".into(),
            message: "Overloaded".into()
        })
    );

    let mut a = AnthropicAssembler::new();
    let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}"#;
    let delta = r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": "}}"#;
    let stop = r#"{"type":"content_block_stop","index":0}"#;
    for data in [start, delta] {
        a.feed(&Event {
            data: data.into(),
            ..Event::default()
        })
        .unwrap();
    }
    // A call cut off mid-arguments keeps its raw text, so the agent can tell it was cut.
    let events = a
        .feed(&Event {
            data: stop.into(),
            ..Event::default()
        })
        .unwrap();
    assert_eq!(
        events,
        vec![LlmEvent::ToolCallDone {
            id: "t".into(),
            name: "Bash".into(),
            input: Value::String("{\"command\": ".into()),
        }]
    );
}

#[test]
fn unknown_events_and_blocks_are_ignored() {
    let mut a = AnthropicAssembler::new();
    for data in [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"brand_new_event"}"#,
    ] {
        assert_eq!(
            a.feed(&Event {
                data: data.into(),
                ..Event::default()
            })
            .unwrap(),
            vec![]
        );
    }
}
