//! Tests of the OpenAI-compatible assembler: streamed text, tool calls and usage, the quirks of
//! local servers (reused index 0, missing ids, no `[DONE]`), and early end and error chunks.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn data(s: &str) -> Event {
    Event {
        data: s.to_string(),
        ..Event::default()
    }
}

fn feed_all(a: &mut OpenAiAssembler, chunks: &[&str]) -> Vec<LlmEvent> {
    chunks
        .iter()
        .flat_map(|c| a.feed(&data(c)).unwrap())
        .collect()
}

#[test]
fn streamed_text_and_tool_calls_with_usage() {
    let mut a = OpenAiAssembler::new();
    let out = feed_all(
        &mut a,
        &[
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Let me "},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"look."},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Bash","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"ls -la\"}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"pwd\",\"restart\":true}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}}}"#,
        ],
    );
    assert!(!a.is_finished());
    let done = a.feed(&data("[DONE]")).unwrap();
    assert!(a.is_finished());
    assert_eq!(
        out,
        vec![
            LlmEvent::TextDelta("Let me ".into()),
            LlmEvent::TextDelta("look.".into()),
            LlmEvent::ToolCallStart {
                id: "call_a".into(),
                name: "Bash".into()
            },
            LlmEvent::ToolCallStart {
                id: "call_b".into(),
                name: "Bash".into()
            },
            LlmEvent::ToolCallDone {
                id: "call_a".into(),
                name: "Bash".into(),
                input: json!({"command": "ls -la"})
            },
            LlmEvent::ToolCallDone {
                id: "call_b".into(),
                name: "Bash".into(),
                input: json!({"command": "pwd", "restart": true}),
            },
        ]
    );
    assert_eq!(
        done,
        vec![
            LlmEvent::Usage(Usage {
                input: 36,
                output: 20,
                cache_read: 64,
                cache_creation: 0
            }),
            LlmEvent::Done {
                stop_reason: StopReason::ToolUse
            },
        ]
    );
}

#[test]
fn servers_that_reuse_index_zero_and_omit_ids_and_done() {
    let mut a = OpenAiAssembler::new();
    let out = feed_all(
        &mut a,
        &[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"x1","function":{"name":"Bash","arguments":"{\"command\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"x2","function":{"name":"Bash","arguments":"{\"command\":\"b\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"Bash","arguments":"not json"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ],
    );
    let done: Vec<_> = out
        .iter()
        .filter(|e| matches!(e, LlmEvent::ToolCallDone { .. }))
        .collect();
    assert_eq!(done.len(), 3, "{out:#?}");
    assert!(
        matches!(done[0], LlmEvent::ToolCallDone { id, input, .. } if id == "x1" && input["command"] == "a")
    );
    assert!(
        matches!(done[1], LlmEvent::ToolCallDone { id, input, .. } if id == "x2" && input["command"] == "b")
    );
    assert!(matches!(done[2], LlmEvent::ToolCallDone { input, .. } if *input == json!("not json")));
    let closing = a.finish_at_eof().unwrap();
    assert_eq!(
        closing.last(),
        Some(&LlmEvent::Done {
            stop_reason: StopReason::ToolUse
        })
    );
}

#[test]
fn eof_before_finish_is_broken_and_error_chunks_are_reported() {
    let mut a = OpenAiAssembler::new();
    feed_all(&mut a, &[r#"{"choices":[{"delta":{"content":"hal"}}]}"#]);
    assert_eq!(a.finish_at_eof(), None);

    let mut a = OpenAiAssembler::new();
    let err = a
        .feed(&data(
            r#"{"error":{"message":"model overloaded","type":"server_error"}}"#,
        ))
        .unwrap_err();
    assert_eq!(
        err,
        FeedError::Api {
            kind: "server_error".into(),
            message: "model overloaded".into()
        }
    );
}
