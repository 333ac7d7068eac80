//! The OpenAI-compatible provider gives the same turn as Anthropic; plus the fake server's own
//! behaviour: callback scripts, incremental streaming and an exhausted script.

use std::time::Duration;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;
use synapse_llm::{
    AssistantTurn, LlmError, LlmEvent, Message, ProviderConfig, ProviderKind, StopReason,
    ToolResult, build_provider,
};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, Step};

use super::common::{KEY, WAIT, config, count, look_and_run, request, retries, run, text_of, turn};

#[tokio::test]
async fn openai_path_produces_the_same_turn() {
    let anthropic = FakeLlm::start(look_and_run()).await.unwrap();
    let openai = FakeLlm::start(look_and_run()).await.unwrap();
    let messages = vec![Message::user_text("count")];
    let (a_events, a_error) = run(
        &config(ProviderKind::Anthropic, &anthropic),
        messages.clone(),
    )
    .await;
    let (o_events, o_error) = run(&config(ProviderKind::OpenAi, &openai), messages).await;
    assert_eq!((a_error, o_error), (None, None));

    let kinds = |events: &[LlmEvent]| -> Vec<&'static str> {
        let mut kinds: Vec<&'static str> = events
            .iter()
            .map(|e| match e {
                LlmEvent::TextDelta(_) => "text",
                LlmEvent::ToolCallStart { .. } => "start",
                LlmEvent::ToolCallDone { .. } => "done",
                LlmEvent::Usage(_) => "usage",
                LlmEvent::Retrying { .. } => "retry",
                LlmEvent::Done { .. } => "end",
            })
            .collect();
        kinds.dedup();
        kinds
    };
    assert_eq!(kinds(&o_events), kinds(&a_events));
    assert_eq!(
        kinds(&o_events),
        vec!["text", "start", "done", "usage", "end"]
    );
    let (a_turn, o_turn) = (turn(&a_events), turn(&o_events));
    assert_eq!(o_turn.message.text(), a_turn.message.text());
    let inputs = |t: &AssistantTurn| -> Vec<serde_json::Value> {
        t.message
            .tool_uses()
            .map(|(_, _, input)| input.clone())
            .collect()
    };
    assert_eq!(inputs(&o_turn), inputs(&a_turn));
    assert_eq!(o_turn.stop_reason, StopReason::ToolUse);
    assert!(
        o_turn.usage.input > 0 && o_turn.usage.output > 0,
        "usage chunk was read: {:?}",
        o_turn.usage
    );

    let r = &openai.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.tool_names(), vec!["Bash"]);
    assert_eq!(
        r.tools()[0]["function"]["parameters"]["required"],
        json!(["command"])
    );
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        r.system_text().as_deref(),
        Some("You are Synapse, under test.")
    );
}

#[tokio::test]
async fn openai_local_server_without_key_sends_no_authorization_and_retries_too() {
    let llm = FakeLlm::start(Script::new().overloaded().text("local answer"))
        .await
        .unwrap();
    let config = ProviderConfig {
        api_key: None,
        ..config(ProviderKind::OpenAi, &llm)
    };
    let (events, error) = run(&config, vec![Message::user_text("hi")]).await;
    assert_eq!(error, None);
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(text_of(&events), "local answer");
    assert!(
        llm.requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
}

#[tokio::test]
async fn openai_stream_cut_after_tool_call_starts_is_not_retried() {
    // Chunks: role, 1 text delta, tool call head, 1 argument piece.
    let cut = Reply::new()
        .text("Deleting")
        .tool_call("rm -rf build")
        .cut_after(4);
    let llm = FakeLlm::start(Script::new().reply(cut).text("never"))
        .await
        .unwrap();
    let (events, error) = run(
        &config(ProviderKind::OpenAi, &llm),
        vec![Message::user_text("x")],
    )
    .await;
    assert!(
        matches!(error, Some(LlmError::StreamBroken { .. })),
        "{error:?}"
    );
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallStart { .. })),
        1
    );
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallDone { .. })),
        0
    );
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn callback_script_answers_from_the_conversation_in_both_formats() {
    for kind in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
        let llm = FakeLlm::start_with(|req| match req.last_tool_result() {
            None => Step::Reply(Reply::new().tool_call("echo hello")),
            Some(output) => {
                Step::Reply(Reply::new().text(format!("The command printed {}", output.trim())))
            }
        })
        .await
        .unwrap();
        let config = config(kind, &llm);

        let mut history = vec![Message::user_text("say hello")];
        let (events, error) = run(&config, history.clone()).await;
        assert_eq!(error, None);
        let first = turn(&events);
        let (id, _, _) = first.message.tool_uses().next().expect("a tool call");
        let result = ToolResult {
            tool_use_id: id.to_string(),
            content: "hello\n".into(),
            is_error: false,
            images: Vec::new(),
        };
        history.push(first.message.clone());
        history.push(Message::tool_results([result]));

        let (events, error) = run(&config, history).await;
        assert_eq!(error, None);
        assert_eq!(text_of(&events), "The command printed hello", "{kind:?}");
        let second = &llm.wait_for_requests(2, WAIT).await[1];
        assert_eq!(second.commands_so_far(), vec!["echo hello"], "{kind:?}");
        assert_eq!(second.tool_results()[0].0, id, "{kind:?}");
    }
}

#[tokio::test]
async fn events_arrive_while_the_reply_is_still_streaming() {
    let slow = Reply::new()
        .text("one two three")
        .delay(Duration::from_millis(20))
        .hang_after(5);
    let llm = FakeLlm::start(Script::new().reply(slow)).await.unwrap();
    let provider = build_provider(&config(ProviderKind::Anthropic, &llm)).unwrap();
    let mut stream = provider
        .stream(request(vec![Message::user_text("hi")]))
        .unwrap();
    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("a first event while the server hangs");
    assert_eq!(first.unwrap().unwrap(), LlmEvent::TextDelta("one ".into()));
    // Dropping the stream is how a turn is cancelled; the server sees the connection go.
    drop(stream);
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn exhausted_script_says_so() {
    let llm = FakeLlm::start(Script::new()).await.unwrap();
    let (_, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("hi")],
    )
    .await;
    let message = error.expect("an error").to_string();
    assert!(
        message.contains("script exhausted") && message.contains("400"),
        "{message}"
    );
}
