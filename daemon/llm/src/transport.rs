//! One model call over HTTP with retries, shared by both providers. [`run`] sends the request,
//! classifies a failed response (auth → stop, retryable → wait and try again, other → stop),
//! and feeds a successful body through `eventsource-stream` into the provider's [`Assembler`],
//! emitting what it yields. A failure is retried only while nothing has been emitted yet, so a
//! tool call can never reach the caller twice.

use eventsource_stream::{Event, Eventsource};
use futures::StreamExt;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::config::ProviderKind;
use super::error::LlmError;
use super::event_stream::Emitter;
use super::retry::{RetryPolicy, is_retryable_status, server_retry_delay, server_should_retry};
use super::types::LlmEvent;

/// The most of an error body we read and show.
const ERROR_BODY_LIMIT_BYTES: usize = 64 * 1024;
const ERROR_MESSAGE_LIMIT_CHARS: usize = 500;

/// Turns one wire format's server-sent events into [`LlmEvent`]s.
pub(crate) trait Assembler: Send {
    /// Consumes one SSE event.
    fn feed(&mut self, event: &Event) -> Result<Vec<LlmEvent>, FeedError>;
    /// True once the final event (`message_stop`, `[DONE]`) has been seen.
    fn is_finished(&self) -> bool;
    /// The body ended before the final event: return the closing events when the reply is
    /// nevertheless complete (some servers omit the terminator), `None` when it broke off.
    fn finish_at_eof(&mut self) -> Option<Vec<LlmEvent>> {
        None
    }
}

/// Why an SSE event could not be consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FeedError {
    /// The API reported an error inside the stream (Anthropic's `error` event).
    Api { kind: String, message: String },
    /// The event did not follow the format.
    Protocol(String),
}

/// What one call needs besides the request itself.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub client: reqwest::Client,
    pub kind: ProviderKind,
    pub retry: RetryPolicy,
}

enum AttemptError {
    Fatal(LlmError),
    Retryable {
        reason: String,
        server_delay: Option<std::time::Duration>,
    },
}

/// Makes the call, retrying per the policy, and emits the reply's events.
pub(crate) async fn run<B, A, N>(
    transport: Transport,
    build: B,
    new_assembler: N,
    out: Emitter,
) -> Result<(), LlmError>
where
    B: Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send,
    A: Assembler,
    N: Fn() -> A + Send,
{
    let provider = transport.kind.display_name();
    let policy = transport.retry;
    let started = tokio::time::Instant::now();
    let mut attempt = 1;
    loop {
        let request = build(&transport.client);
        let (reason, server_delay) =
            match attempt_once(&transport, request, new_assembler(), &out).await {
                Ok(()) => return Ok(()),
                Err(AttemptError::Fatal(e)) => return Err(e),
                Err(AttemptError::Retryable {
                    reason,
                    server_delay,
                }) => (reason, server_delay),
            };
        if attempt >= policy.max_attempts {
            return Err(LlmError::RetriesExhausted {
                provider,
                attempts: attempt,
                last: reason,
            });
        }
        let delay = match server_delay {
            Some(wait) if wait > policy.max_server_delay => {
                return Err(LlmError::RateLimited { provider, wait });
            }
            Some(wait) => wait,
            None => policy.backoff(attempt),
        };
        // A retry that could not even start inside the budget is not worth waiting for.
        if started.elapsed() + delay >= policy.budget {
            return Err(LlmError::RetriesExhausted {
                provider,
                attempts: attempt,
                last: format!(
                    "{reason} (the retry budget of {} s is used up; raise llm.retryBudgetSecs \
                     in settings.json to wait longer)",
                    policy.budget.as_secs_f64()
                ),
            });
        }
        attempt += 1;
        tracing::warn!(provider, attempt, ?delay, %reason, "model call failed; retrying");
        out.emit(LlmEvent::Retrying {
            attempt,
            max_attempts: policy.max_attempts,
            delay,
            reason,
        })
        .await;
        tokio::time::sleep(delay).await;
    }
}

async fn attempt_once<A: Assembler>(
    transport: &Transport,
    request: reqwest::RequestBuilder,
    mut assembler: A,
    out: &Emitter,
) -> Result<(), AttemptError> {
    let provider = transport.kind.display_name();
    let policy = transport.retry;
    let first_byte = tokio::time::Instant::now() + policy.first_byte_timeout;
    let sent = match tokio::time::timeout_at(first_byte, request.send()).await {
        Ok(sent) => sent,
        Err(_) => {
            return Err(AttemptError::Retryable {
                reason: no_answer(policy.first_byte_timeout, "firstByteTimeoutSecs"),
                server_delay: None,
            });
        }
    };
    let response = match sent {
        Ok(r) => r,
        Err(e) if e.is_builder() => {
            return Err(AttemptError::Fatal(LlmError::Request {
                provider,
                message: e.to_string(),
            }));
        }
        Err(e) => {
            return Err(AttemptError::Retryable {
                reason: format!("connection failed: {}", error_chain(&e)),
                server_delay: None,
            });
        }
    };
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let headers = response.headers().clone();
        let body = read_limited(response).await;
        return Err(classify_error_response(
            transport.kind,
            status,
            &headers,
            &body,
        ));
    }
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        // A server that ignored `stream: true`, or a proxy that answered in its own way.
        let body = read_limited(response).await;
        return Err(AttemptError::Fatal(LlmError::Protocol {
            provider,
            message: format!("expected an event stream, got JSON: {}", truncate(&body)),
        }));
    }

    let mut events = response.bytes_stream().eventsource();
    let mut emitted_output = false;
    let broken = |emitted: bool, reason: String| {
        if emitted {
            AttemptError::Fatal(LlmError::StreamBroken { provider, reason })
        } else {
            AttemptError::Retryable {
                reason,
                server_delay: None,
            }
        }
    };
    let mut seen_any = false;
    loop {
        // Until the first event the first-byte deadline holds, then the idle timeout per chunk.
        let next = if seen_any {
            tokio::time::timeout(policy.idle_timeout, events.next()).await
        } else {
            tokio::time::timeout_at(first_byte, events.next()).await
        };
        let next = match next {
            Ok(next) => next,
            Err(_) => {
                let reason = if seen_any {
                    silent_stream(policy.idle_timeout)
                } else {
                    no_answer(policy.first_byte_timeout, "firstByteTimeoutSecs")
                };
                return Err(broken(emitted_output, reason));
            }
        };
        seen_any = true;
        let event = match next {
            Some(Ok(event)) => event,
            Some(Err(e)) => {
                let reason = match e {
                    eventsource_stream::EventStreamError::Transport(t) => {
                        format!("connection lost: {}", error_chain(&t))
                    }
                    other => format!("malformed event stream: {other}"),
                };
                return Err(broken(emitted_output, reason));
            }
            None if assembler.is_finished() => return Ok(()),
            None => {
                if let Some(closing) = assembler.finish_at_eof() {
                    for event in closing {
                        out.emit(event).await;
                    }
                    return Ok(());
                }
                let reason = "the response ended before the reply was complete".to_string();
                return Err(broken(emitted_output, reason));
            }
        };
        match assembler.feed(&event) {
            Ok(produced) => {
                for event in produced {
                    emitted_output |= !matches!(event, LlmEvent::Usage(_) | LlmEvent::Done { .. });
                    out.emit(event).await;
                }
                if assembler.is_finished() {
                    return Ok(());
                }
            }
            Err(FeedError::Api { kind, message }) => {
                let retryable = matches!(
                    kind.as_str(),
                    "overloaded_error" | "api_error" | "rate_limit_error" | "server_error"
                );
                if emitted_output || retryable {
                    return Err(broken(emitted_output, format!("{kind}: {message}")));
                }
                return Err(AttemptError::Fatal(LlmError::Api {
                    provider,
                    status: 200,
                    kind,
                    message,
                }));
            }
            Err(FeedError::Protocol(message)) => {
                return Err(AttemptError::Fatal(LlmError::Protocol {
                    provider,
                    message,
                }));
            }
        }
    }
}

fn no_answer(limit: std::time::Duration, setting: &str) -> String {
    format!(
        "no answer within {} s (raise llm.{setting} in settings.json for a slow server)",
        limit.as_secs_f64()
    )
}

fn silent_stream(limit: std::time::Duration) -> String {
    format!(
        "the server sent nothing for {} s in the middle of its answer (llm.idleTimeoutSecs in \
         settings.json)",
        limit.as_secs_f64()
    )
}

fn classify_error_response(
    kind: ProviderKind,
    status: u16,
    headers: &HeaderMap,
    body: &str,
) -> AttemptError {
    let provider = kind.display_name();
    let (error_kind, message) = parse_error_body(body, status);
    if status == 401 || status == 403 {
        return AttemptError::Fatal(LlmError::Auth {
            provider,
            status,
            kind: error_kind,
            message,
            variable: kind.key_variable(),
        });
    }
    if server_should_retry(headers).unwrap_or_else(|| is_retryable_status(status)) {
        return AttemptError::Retryable {
            reason: format!("{status} {error_kind}: {message}"),
            server_delay: server_retry_delay(headers),
        };
    }
    AttemptError::Fatal(LlmError::Api {
        provider,
        status,
        kind: error_kind,
        message,
    })
}

/// Reads `(type, message)` from the error bodies the APIs send: Anthropic
/// `{"type":"error","error":{"type","message"}}`, OpenAI `{"error":{"message","type","code"}}`,
/// Ollama `{"error":"..."}`; anything else is shown as text.
pub(crate) fn parse_error_body(body: &str, status: u16) -> (String, String) {
    let fallback_kind = || {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error")
            .to_ascii_lowercase()
            .replace(' ', "_")
    };
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        let text = body.trim();
        let message = if text.is_empty() {
            "(empty body)".to_string()
        } else {
            truncate(text)
        };
        return (fallback_kind(), message);
    };
    match json.get("error") {
        Some(Value::Object(err)) => {
            let kind = ["type", "code"]
                .iter()
                .find_map(|k| err.get(*k).and_then(Value::as_str))
                .map(str::to_string)
                .unwrap_or_else(fallback_kind);
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(truncate)
                .unwrap_or_else(|| truncate(body));
            (kind, message)
        }
        Some(Value::String(message)) => (fallback_kind(), truncate(message)),
        _ => (fallback_kind(), truncate(body)),
    }
}

async fn read_limited(response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(Ok(chunk)) = body.next().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() >= ERROR_BODY_LIMIT_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(ERROR_MESSAGE_LIMIT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// reqwest's `Display` hides the cause ("error sending request"); the chain says what happened.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_of_each_api_are_understood() {
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            parse_error_body(anthropic, 529),
            ("overloaded_error".into(), "Overloaded".into())
        );
        let openai = r#"{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        assert_eq!(
            parse_error_body(openai, 401),
            ("invalid_request_error".into(), "Incorrect API key".into())
        );
        let ollama = r#"{"error":"model \"x\" not found, try pulling it first"}"#;
        assert_eq!(parse_error_body(ollama, 404).0, "not_found");
        assert_eq!(
            parse_error_body("<html>bad gateway</html>", 502).1,
            "<html>bad gateway</html>"
        );
        assert_eq!(parse_error_body("", 503).1, "(empty body)");
    }
}
