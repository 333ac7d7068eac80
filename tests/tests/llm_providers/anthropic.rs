//! The Anthropic Messages API provider: streaming, the request's shape, retries, broken streams
//! and bad keys (the last also for OpenAI, since the message matters to the user either way).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use synapse_llm::{LlmError, LlmEvent, Message, ProviderConfig, ProviderKind, StopReason};
use synapse_shared::settings::Settings;
use synapse_tests::fake_llm::{ErrorReply, FakeLlm, Reply, Script};

use super::common::{KEY, config, count, fast_retries, look_and_run, retries, run, text_of, turn};

#[tokio::test]
async fn anthropic_streams_text_and_assembles_the_tool_call() {
    let llm = FakeLlm::start(look_and_run()).await.unwrap();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("count")],
    )
    .await;
    assert_eq!(error, None);

    assert!(
        count(&events, |e| matches!(e, LlmEvent::TextDelta(_))) > 1,
        "text arrives in several deltas"
    );
    assert_eq!(text_of(&events), "Let me look at the file.");
    let starts = count(
        &events,
        |e| matches!(e, LlmEvent::ToolCallStart { name, .. } if name == "Bash"),
    );
    assert_eq!(starts, 1);
    let turn = turn(&events);
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = turn
        .message
        .tool_uses()
        .map(|(_, name, input)| (name.to_string(), input.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![(
            "Bash".to_string(),
            json!({"command": "cat 'a b.txt' | wc -l"})
        )]
    );
    assert!(
        turn.usage.input > 0 && turn.usage.output > 0,
        "{:?}",
        turn.usage
    );
    assert!(matches!(events.last(), Some(LlmEvent::Done { .. })));
}

#[tokio::test]
async fn anthropic_request_carries_exactly_one_cached_bash_tool() {
    let llm = FakeLlm::start(Script::new().text("hi")).await.unwrap();
    let (_, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("hello")],
    )
    .await;
    assert_eq!(error, None);

    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.tool_names(), vec!["Bash"]);
    let tool = &r.tools()[0];
    assert_eq!(tool["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(tool["input_schema"]["required"], json!(["command"]));
    assert_eq!(
        tool["input_schema"]["properties"]["restart"]["type"],
        "boolean"
    );
    assert_eq!(
        r.body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        r.system_text().as_deref(),
        Some("You are Synapse, under test.")
    );
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(r.last_user_text().as_deref(), Some("hello"));
}

#[tokio::test]
async fn overloaded_twice_then_success_shows_each_retry() {
    let script = Script::new().overloaded().overloaded().text("finally");
    let llm = FakeLlm::start(script).await.unwrap();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("go")],
    )
    .await;
    assert_eq!(error, None);

    let retries = retries(&events);
    assert_eq!(retries.iter().map(|r| r.0).collect::<Vec<_>>(), vec![2, 3]);
    assert!(
        retries
            .iter()
            .all(|r| r.2.contains("529") && r.2.contains("overloaded_error")),
        "{retries:?}"
    );
    assert_eq!(text_of(&events), "finally");
    assert_eq!(llm.requests().len(), 3);
    // Retries come first: nothing was shown before the call succeeded.
    let first_text = events
        .iter()
        .position(|e| matches!(e, LlmEvent::TextDelta(_)))
        .unwrap();
    let last_retry = events
        .iter()
        .rposition(|e| matches!(e, LlmEvent::Retrying { .. }))
        .unwrap();
    assert!(last_retry < first_text);
}

#[tokio::test]
async fn rate_limit_waits_as_long_as_retry_after_says() {
    let script = Script::new()
        .error(ErrorReply::rate_limited().header("retry-after-ms", "150"))
        .error(ErrorReply::rate_limited_for(1))
        .text("ok");
    let llm = FakeLlm::start(script).await.unwrap();
    let started = Instant::now();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("go")],
    )
    .await;
    assert_eq!(error, None);

    let delays: Vec<Duration> = retries(&events).iter().map(|r| r.1).collect();
    assert_eq!(
        delays,
        vec![Duration::from_millis(150), Duration::from_secs(1)]
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1150),
        "{:?}",
        started.elapsed()
    );
    assert!(retries(&events)[0].2.contains("rate_limit_error"));
    assert_eq!(text_of(&events), "ok");
}

#[tokio::test]
async fn too_many_failures_give_up_after_five_tries() {
    let mut script = Script::new();
    for _ in 0..6 {
        script = script.error(ErrorReply::server_error());
    }
    let llm = FakeLlm::start(script).await.unwrap();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("go")],
    )
    .await;

    assert_eq!(retries(&events).len(), 4);
    let error = error.expect("the call failed").to_string();
    assert!(
        error.contains("after 5 tries") && error.contains("Internal server error"),
        "{error}"
    );
    assert_eq!(llm.requests().len(), 5);
}

#[tokio::test]
async fn stream_cut_after_a_tool_call_starts_is_an_error_and_never_retried() {
    // Events: message_start, ping, text start, 2 deltas, text stop, tool start, 2 input pieces.
    let cut = Reply::new()
        .text("Cleaning up")
        .tool_call("rm -rf build")
        .cut_after(9);
    let script = Script::new().reply(cut).text("must never be requested");
    let llm = FakeLlm::start(script).await.unwrap();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("clean")],
    )
    .await;

    let error = error.unwrap_or_else(|| panic!("the turn failed: {events:#?}"));
    assert!(matches!(error, LlmError::StreamBroken { .. }), "{error:?}");
    assert!(error.to_string().contains("nothing was retried"), "{error}");
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallStart { .. })),
        1
    );
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallDone { .. })),
        0
    );
    assert_eq!(count(&events, |e| matches!(e, LlmEvent::Done { .. })), 0);
    assert!(retries(&events).is_empty());
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(llm.remaining_steps(), 1);
}

#[tokio::test]
async fn stream_cut_before_any_output_is_retried_and_the_tool_call_arrives_once() {
    let script = Script::new()
        .reply(Reply::new().tool_call("make").cut_after(2))
        .reply(
            Reply::new()
                .text("")
                .error_after(1, "overloaded_error", "Overloaded"),
        )
        .tool_call("make");
    let llm = FakeLlm::start(script).await.unwrap();
    let (events, error) = run(
        &config(ProviderKind::Anthropic, &llm),
        vec![Message::user_text("build")],
    )
    .await;
    assert_eq!(error, None);

    let reasons: Vec<String> = retries(&events).into_iter().map(|r| r.2).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[1].contains("overloaded_error"), "{reasons:?}");
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallStart { .. })),
        1
    );
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCallDone { .. })),
        1
    );
    assert_eq!(llm.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_names_the_key_variable_and_hides_the_key() {
    for kind in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
        let llm = FakeLlm::start(Script::new().error(ErrorReply::unauthorized()))
            .await
            .unwrap();
        let env: HashMap<&str, String> = HashMap::from([
            ("SYNAPSE_PROVIDER", kind.as_str().to_string()),
            ("SYNAPSE_MODEL", "test-model".to_string()),
            ("ANTHROPIC_API_KEY", KEY.to_string()),
            ("ANTHROPIC_BASE_URL", llm.anthropic_base_url()),
            ("OPENAI_API_KEY", KEY.to_string()),
            ("OPENAI_BASE_URL", llm.openai_base_url()),
        ]);
        let mut config =
            ProviderConfig::resolve(&Settings::default(), |k| env.get(k).cloned()).unwrap();
        config.retry = fast_retries();
        let (_, error) = run(&config, vec![Message::user_text("hi")]).await;

        let error = error.expect("the call failed");
        assert!(
            matches!(error, LlmError::Auth { status: 401, .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(kind.key_variable()), "{message}");
        assert!(
            message.contains(&format!("env.{}", kind.key_variable()))
                || message.contains("settings.json"),
            "{message}"
        );
        assert!(message.contains("invalid x-api-key"), "{message}");
        assert!(!message.contains(KEY), "{message}");
        assert!(!format!("{config:?}").contains(KEY));
        assert_eq!(llm.requests().len(), 1, "an auth error is not retried");
    }
}
