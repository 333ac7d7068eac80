//! The runner against a scripted model and a fake executor: results, limits, retries, cancel
//! and length cuts, each in milliseconds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::agent::fakes::{FakeExecutor, ScriptedProvider, Step, bash, fail, text, usage};
use synapse_llm::LlmError;

fn runner(provider: Arc<ScriptedProvider>, executor: Arc<FakeExecutor>) -> AgentRunner {
    AgentRunner {
        provider,
        executor,
        model: "scripted-model".into(),
        system: "system".into(),
        tools: vec![synapse_llm::bash_tool()],
        limits: RunnerLimits {
            max_iterations: 5,
            max_consecutive_failures: 2,
            max_tokens: 100,
            max_turns: None,
            offers_bash: true,
        },
        guard: None,
        context: None,
        hooks: None,
    }
}

async fn run(
    r: &AgentRunner,
    cancel: &CancellationToken,
) -> (TurnOutcome, Vec<Message>, Vec<AgentEvent>) {
    let mut history = Vec::new();
    let mut events = Vec::new();
    let outcome = r
        .run_turn(
            &mut history,
            Message::user_text("hello there"),
            cancel,
            &mut |e| events.push(e),
            &mut |_| {},
        )
        .await;
    (outcome, history, events)
}

fn cut(events: Vec<LlmEvent>) -> Step {
    let mut all: Vec<Result<LlmEvent, LlmError>> = events.into_iter().map(Ok).collect();
    all.push(Ok(LlmEvent::Usage(usage(5, 100))));
    all.push(Ok(LlmEvent::Done {
        stop_reason: StopReason::MaxTokens,
    }));
    Step::Events(all)
}

#[tokio::test]
async fn a_failed_call_ends_with_the_error_and_never_the_prompt() {
    let provider = ScriptedProvider::new([fail(LlmError::Api {
        provider: "Anthropic",
        status: 400,
        kind: "invalid_request_error".into(),
        message: "bad field".into(),
    })]);
    let r = runner(provider, FakeExecutor::new(&[]));
    let (outcome, history, _) = run(&r, &CancellationToken::new()).await;
    let TurnEnd::Error(failure) = &outcome.end else {
        panic!("{:?}", outcome.end)
    };
    assert_eq!((failure.kind.as_str(), failure.status), ("api", Some(400)));
    assert!(failure.message.contains("bad field"));
    assert_eq!(
        outcome.final_text, "",
        "the prompt must not become the result"
    );
    assert_eq!(history.len(), 1);
}

#[tokio::test]
async fn a_runner_that_offers_no_tool_sends_none_and_runs_no_call() {
    let provider = ScriptedProvider::new([bash("t1", "ls"), text("never asked")]);
    let executor = FakeExecutor::new(&[("ls", "a", 0)]);
    let mut r = runner(provider.clone(), executor.clone());
    r.limits.offers_bash = false;
    let (outcome, history, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    assert!(executor.commands().is_empty());
    assert_eq!(provider.requests().len(), 1);
    assert!(provider.requests()[0].tools.is_empty());
    assert!(history.iter().all(|m| m.tool_uses().next().is_none()));
}

#[tokio::test]
async fn a_tool_call_runs_and_the_final_text_is_the_answer() {
    let provider = ScriptedProvider::new([bash("t1", "ls"), text("two files")]);
    let executor = FakeExecutor::new(&[("ls", "a\nb", 0)]);
    let r = runner(provider.clone(), executor.clone());
    let (outcome, history, events) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(outcome.final_text, "two files");
    assert_eq!(executor.commands(), ["ls"]);
    assert_eq!(history.len(), 4);
    assert_eq!(outcome.total_usage.input, 30);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolFinished { output, .. } if output == "a\nb"))
    );
    // The second request carries the tool's output back to the model.
    let second = &provider.requests()[1];
    assert!(
        serde_json::to_string(&second.messages)
            .unwrap()
            .contains("a\\nb")
    );
    assert_eq!(second.max_tokens, 100);
}

#[tokio::test]
async fn the_iteration_limit_stops_a_model_that_never_ends() {
    let provider = ScriptedProvider::new((0..10).map(|i| bash(&format!("t{i}"), "true")));
    let r = runner(provider, FakeExecutor::new(&[]));
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::MaxIterations(5));
}

#[tokio::test]
async fn a_request_budget_ends_the_turn_as_max_turns_after_its_tools_ran() {
    let provider = ScriptedProvider::new([bash("t1", "ls"), text("never asked")]);
    let executor = FakeExecutor::new(&[("ls", "a", 0)]);
    let mut r = runner(provider.clone(), executor.clone());
    r.limits.max_turns = Some(1);
    let (outcome, _, events) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::MaxTurns(1));
    assert_eq!((outcome.requests, provider.requests().len()), (1, 1));
    assert_eq!(executor.commands(), ["ls"]);
    // The answer and its results are reported whole, in order, with the call's id.
    let assistant = events.iter().position(|e| {
        matches!(e, AgentEvent::AssistantMessage { stop_reason, content, .. }
            if stop_reason == "tool_use" && matches!(&content[..], [ContentBlock::ToolUse { id, .. }] if id == "t1"))
    });
    let results = events.iter().position(|e| {
        matches!(e, AgentEvent::ToolResults(blocks)
            if matches!(&blocks[..], [ContentBlock::ToolResult { tool_use_id, .. }] if tool_use_id == "t1"))
    });
    assert!(assistant.unwrap() < results.unwrap(), "{events:?}");
}

#[tokio::test]
async fn failing_tools_in_a_row_stop_the_turn() {
    let provider = ScriptedProvider::new([bash("a", "false"), bash("b", "false"), text("x")]);
    let r = runner(provider, FakeExecutor::new(&[("false", "", 1)]));
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::TooManyFailures(2));
}

#[tokio::test]
async fn retries_are_shown_with_their_reason() {
    let provider = ScriptedProvider::new([Step::Events(vec![
        Ok(LlmEvent::Retrying {
            attempt: 2,
            max_attempts: 5,
            delay: Duration::from_millis(1),
            reason: "529 overloaded_error: Overloaded".into(),
        }),
        Ok(LlmEvent::TextDelta("ok".into())),
        Ok(LlmEvent::Done {
            stop_reason: StopReason::EndTurn,
        }),
    ])]);
    let r = runner(provider, FakeExecutor::new(&[]));
    let (outcome, _, events) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.final_text, "ok");
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Retrying { reason, attempt: 2, .. } if reason.contains("overloaded"))
    ));
}

#[tokio::test]
async fn cancel_before_the_first_token_ends_with_an_empty_result() {
    let r = runner(ScriptedProvider::new([Step::Hang]), FakeExecutor::new(&[]));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        trigger.cancel();
    });
    let (outcome, history, _) = run(&r, &cancel).await;
    assert_eq!(outcome.end, TurnEnd::Cancelled);
    assert_eq!(outcome.final_text, "");
    assert_eq!(history.len(), 1);
}

#[tokio::test]
async fn cancel_stops_a_running_command() {
    let provider = ScriptedProvider::new([bash("t", "hang"), text("never")]);
    let executor = FakeExecutor::new(&[]);
    let r = runner(provider.clone(), executor.clone());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        trigger.cancel();
    });
    let (outcome, history, _) = run(&r, &cancel).await;
    assert_eq!(outcome.end, TurnEnd::Cancelled);
    assert_eq!(executor.commands(), ["hang"]);
    // The command's (cancelled) result is recorded, and the model is not asked again.
    assert_eq!(history.len(), 3);
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn a_text_reply_cut_at_the_output_limit_is_reported_as_truncated() {
    let provider = ScriptedProvider::new([cut(vec![LlmEvent::TextDelta("a long ans".into())])]);
    let r = runner(provider, FakeExecutor::new(&[]));
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::Truncated(100));
    assert_eq!(outcome.final_text, "a long ans");
    assert!(outcome.end.message().contains("maxOutputTokens"));
}

#[tokio::test]
async fn a_tool_call_cut_mid_arguments_is_asked_again_once_and_never_run() {
    let cut_call = || {
        cut(vec![LlmEvent::ToolCallDone {
            id: "c".into(),
            name: "Bash".into(),
            input: json!("{\"command\": \"write big.txt 'aaaa"),
        }])
    };
    let provider = ScriptedProvider::new([cut_call(), bash("d", "echo short"), text("done")]);
    let executor = FakeExecutor::new(&[]);
    let r = runner(provider.clone(), executor.clone());
    let (outcome, _, events) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(
        executor.commands(),
        ["echo short"],
        "the cut call never ran"
    );
    let second = serde_json::to_string(&provider.requests()[1].messages).unwrap();
    assert!(second.contains("output limit"), "{second}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Notice(n) if n.contains("cut")))
    );

    // Cut again after the note: the turn ends as truncated.
    let provider = ScriptedProvider::new([cut_call(), cut_call(), text("never")]);
    let executor = FakeExecutor::new(&[]);
    let r = runner(provider, executor.clone());
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.end, TurnEnd::Truncated(100));
    assert!(executor.commands().is_empty());
}

#[tokio::test]
async fn continue_turn_resumes_from_history_without_a_new_prompt() {
    let provider = ScriptedProvider::new([text("after compaction")]);
    let r = runner(provider.clone(), FakeExecutor::new(&[]));
    let mut history = vec![Message::user_text("hello there")];
    let outcome = r
        .continue_turn(
            &mut history,
            &CancellationToken::new(),
            &mut |_| {},
            &mut |_| {},
        )
        .await;
    assert_eq!(outcome.final_text, "after compaction");
    assert_eq!(provider.requests()[0].messages.len(), 1);
}

struct RemindOnce;

impl TurnGuard for RemindOnce {
    fn before_end(&self) -> Option<String> {
        Some("<system-reminder>todo left</system-reminder>".into())
    }
}

#[tokio::test]
async fn the_guard_reminds_once_and_then_the_end_stands() {
    let provider = ScriptedProvider::new([text("first"), text("second"), text("third")]);
    let mut r = runner(provider.clone(), FakeExecutor::new(&[]));
    r.guard = Some(Arc::new(RemindOnce));
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.final_text, "second");
    assert_eq!(provider.requests().len(), 2);
}

/// Records what the runner tells it and, once, replaces every tool result with a short note
/// (as a compaction would).
#[derive(Default)]
struct RecordingKeeper {
    asked_with: parking_lot::Mutex<Vec<usize>>,
    reported: parking_lot::Mutex<Vec<(u64, usize)>>,
}

impl ContextKeeper for RecordingKeeper {
    fn before_request<'a>(&'a self, history: &'a mut Vec<Message>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.asked_with.lock().push(history.len());
            let keep = history.len().saturating_sub(2);
            for m in &mut history[..keep] {
                for b in &mut m.content {
                    if let ContentBlock::ToolResult { content, .. } = b {
                        *content = "[compacted]".into();
                    }
                }
            }
        })
    }

    fn reported(&self, usage: Usage, messages: usize) {
        self.reported.lock().push((usage.input, messages));
    }
}

#[tokio::test]
async fn the_context_keeper_is_asked_before_every_request_of_a_turn() {
    let provider = ScriptedProvider::new([bash("t1", "one"), bash("t2", "two"), text("done")]);
    let executor = FakeExecutor::new(&[("one", "FIRST-OUTPUT", 0), ("two", "SECOND-OUTPUT", 0)]);
    let mut r = runner(provider.clone(), executor);
    let keeper = Arc::new(RecordingKeeper::default());
    r.context = Some(keeper.clone());
    let (outcome, _, _) = run(&r, &CancellationToken::new()).await;
    assert_eq!(outcome.final_text, "done");
    // Before the first request and between the tool calls, on the history as it then was.
    assert_eq!(*keeper.asked_with.lock(), vec![1, 3, 5]);
    // Each answer's usage, with the number of messages it covers (its own included).
    assert_eq!(*keeper.reported.lock(), vec![(20, 2), (20, 4), (10, 6)]);
    // What the keeper changed is what the next request carried; the latest result stayed.
    let last = serde_json::to_string(&provider.requests()[2].messages).unwrap();
    assert!(!last.contains("FIRST-OUTPUT"), "{last}");
    assert!(
        last.contains("[compacted]") && last.contains("SECOND-OUTPUT"),
        "{last}"
    );
}

#[test]
fn a_silent_success_reads_as_no_output_and_failures_stay_as_they_are() {
    assert_eq!(model_text(String::new(), 0), "(no output, exit 0)");
    assert_eq!(model_text("\n".into(), 0), "(no output, exit 0)");
    assert_eq!(model_text("hi\n".into(), 0), "hi\n");
    assert_eq!(model_text("[exit code: 1]".into(), 1), "[exit code: 1]");
    assert_eq!(model_text(String::new(), 1), "");
}
