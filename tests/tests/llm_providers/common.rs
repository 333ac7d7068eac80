//! Shared helpers: a provider configuration pointing at a [`FakeLlm`], a standard request, and
//! running a call to its end.

use std::time::Duration;

use futures::StreamExt;
use synapse_llm::{
    ApiKey, AssistantTurn, LlmError, LlmEvent, LlmRequest, Message, ProviderConfig, ProviderKind,
    RetryPolicy, TurnBuilder, bash_tool, build_provider,
};
use synapse_tests::fake_llm::{FakeLlm, Reply, Script};

pub(crate) const KEY: &str = "sk-test-very-secret";
pub(crate) const STREAM_DEADLINE: Duration = Duration::from_secs(20);
pub(crate) const WAIT: Duration = Duration::from_secs(10);

pub(crate) fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(40),
        ..RetryPolicy::default()
    }
}

pub(crate) fn config(kind: ProviderKind, llm: &FakeLlm) -> ProviderConfig {
    let base_url = match kind {
        ProviderKind::Anthropic => llm.anthropic_base_url(),
        ProviderKind::OpenAi => llm.openai_base_url(),
    };
    ProviderConfig {
        kind,
        model: "test-model".into(),
        base_url,
        api_key: Some(ApiKey::new(KEY)),
        retry: fast_retries(),
        llm: Default::default(),
    }
}

pub(crate) fn request(messages: Vec<Message>) -> LlmRequest {
    LlmRequest {
        model: "test-model".into(),
        system: "You are Synapse, under test.".into(),
        messages,
        tools: vec![bash_tool()],
        max_tokens: 1024,
    }
}

/// Runs one call to the end: every event, and the error that ended it, if any.
pub(crate) async fn run(
    config: &ProviderConfig,
    messages: Vec<Message>,
) -> (Vec<LlmEvent>, Option<LlmError>) {
    let provider = build_provider(config).unwrap();
    let mut stream = provider.stream(request(messages)).unwrap();
    let mut events = Vec::new();
    let drained = tokio::time::timeout(STREAM_DEADLINE, async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => return Some(error),
            }
        }
        None
    })
    .await;
    let error = drained.expect("the stream finished before the deadline");
    (events, error)
}

pub(crate) fn text_of(events: &[LlmEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub(crate) fn count(events: &[LlmEvent], pred: impl Fn(&LlmEvent) -> bool) -> usize {
    events.iter().filter(|e| pred(e)).count()
}

pub(crate) fn retries(events: &[LlmEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Retrying {
                attempt,
                delay,
                reason,
                ..
            } => Some((*attempt, *delay, reason.clone())),
            _ => None,
        })
        .collect()
}

pub(crate) fn turn(events: &[LlmEvent]) -> AssistantTurn {
    let mut builder = TurnBuilder::new();
    events.iter().for_each(|e| builder.push(e));
    builder.finish().expect("the turn completed")
}

pub(crate) fn look_and_run() -> Script {
    Script::new().reply(
        Reply::new()
            .text("Let me look at the file.")
            .tool_call("cat 'a b.txt' | wc -l"),
    )
}
