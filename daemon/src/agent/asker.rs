//! What an MCP server asks while one of a turn's tool calls runs ([`TurnAsker`], the session's
//! [`SessionAsker`]): a form goes to the session's user ([`SessionForms`]); a sampling request
//! is first shown to the user as an approval request — the server, the model, the token limit,
//! the system prompt and every message — and, once allowed, answered by the turn's model with the
//! server's system prompt and messages, its length bounded by the session's own output limit
//! (`maxOutputTokens`). "session" allows the server's further requests for the rest of the
//! session. `synapse run` answers the approval "no" unless `--yes`.

use std::sync::Arc;

use futures::future::BoxFuture;
use synapse_llm::{ContentBlock, LlmProvider, LlmRequest, Message, Role, StopReason};

use super::approvals::SessionApprover;
use super::forms::SessionForms;
use synapse_command::asker::{
    FormAnswer, FormRequest, SampleRefusal, SampleReply, SampleRequest, SessionAsker,
};

/// Characters of one message shown in the approval request.
const SHOWN_MESSAGE_CHARS: usize = 600;
/// Messages shown in the approval request (the last ones; the rest are counted).
const SHOWN_MESSAGES: usize = 8;

pub struct TurnAsker {
    pub session_id: String,
    pub forms: Arc<SessionForms>,
    pub approver: Arc<SessionApprover>,
    pub provider: Arc<dyn LlmProvider>,
    /// The session model's output limit: a server never gets a longer reply.
    pub max_output_tokens: u32,
    /// The provider's key, kept out of anything a server or the log could see.
    pub secret: Option<String>,
}

impl SessionAsker for TurnAsker {
    fn session(&self) -> &str {
        &self.session_id
    }

    fn elicit(&self, request: FormRequest) -> BoxFuture<'_, FormAnswer> {
        Box::pin(self.forms.ask(request))
    }

    fn sample(&self, request: SampleRequest) -> BoxFuture<'_, Result<SampleReply, SampleRefusal>> {
        Box::pin(async move {
            let max_tokens = request.max_tokens.clamp(1, self.max_output_tokens.max(1));
            let model = self.provider.model().to_string();
            let title = format!(
                "Let MCP server `{}` use the model (sampling)?",
                request.server
            );
            let detail = describe(&request, &model, max_tokens);
            let decision = self
                .approver
                .request(title, detail, String::new(), String::new())
                .await;
            if decision == "no" {
                return Err(SampleRefusal::NotApproved {
                    server: request.server,
                    how: "answer y when `synapse chat` asks; `synapse run` allows it with --yes"
                        .into(),
                });
            }
            let llm_request = LlmRequest {
                model: model.clone(),
                system: request.system_prompt.unwrap_or_default(),
                messages: request
                    .messages
                    .into_iter()
                    .map(|m| Message {
                        role: if m.from_user {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        content: vec![ContentBlock::Text { text: m.text }],
                    })
                    .collect(),
                tools: Vec::new(),
                max_tokens,
            };
            let turn = match self.provider.stream(llm_request) {
                Ok(stream) => synapse_llm::collect_turn(stream).await,
                Err(e) => Err(e),
            };
            match turn {
                Ok(turn) => {
                    tracing::info!(
                        session = %self.session_id,
                        server = %request.server,
                        input_tokens = turn.usage.total_input(),
                        output_tokens = turn.usage.output,
                        "sampling request answered"
                    );
                    Ok(SampleReply {
                        model,
                        text: turn.message.text(),
                        truncated: turn.stop_reason == StopReason::MaxTokens,
                    })
                }
                Err(e) => {
                    let mut message = e.to_string();
                    if let Some(key) = self.secret.as_deref().filter(|k| !k.is_empty()) {
                        message = message.replace(key, "<redacted>");
                    }
                    tracing::warn!(session = %self.session_id, server = %request.server, error = %message, "sampling request failed");
                    // The server learns the class of failure, not what the model server said.
                    Err(SampleRefusal::ModelFailed(match e.status() {
                        Some(status) => format!("{} (HTTP {status})", e.kind()),
                        None => e.kind().to_string(),
                    }))
                }
            }
        })
    }
}

/// What the user is shown before allowing a sampling request.
fn describe(request: &SampleRequest, model: &str, max_tokens: u32) -> String {
    let mut limit = format!("max tokens: {max_tokens}");
    if request.max_tokens > max_tokens {
        limit.push_str(&format!(" (the server asked for {})", request.max_tokens));
    }
    let mut out = format!("model: {model} · {limit}\n");
    if let Some(system) = &request.system_prompt {
        out.push_str(&format!("system prompt: {}\n", shorten(system)));
    }
    let skipped = request.messages.len().saturating_sub(SHOWN_MESSAGES);
    if skipped > 0 {
        out.push_str(&format!("… {skipped} earlier messages\n"));
    }
    for m in request.messages.iter().skip(skipped) {
        let who = if m.from_user { "user" } else { "assistant" };
        out.push_str(&format!("{who}: {}\n", shorten(&m.text)));
    }
    out
}

/// One message on at most a few lines of the approval request.
fn shorten(text: &str) -> String {
    let text = text.trim();
    let mut shown: String = text.chars().take(SHOWN_MESSAGE_CHARS).collect();
    if shown.len() < text.len() {
        shown.push_str(&format!("… ({} characters)", text.chars().count()));
    }
    shown.replace('\n', "\n  ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::fakes::{ScriptedProvider, text};
    use crate::agent::session::SessionEvent;
    use synapse_command::asker::SampleMessage;
    use tokio::sync::broadcast;

    fn asker(
        provider: Arc<ScriptedProvider>,
    ) -> (
        TurnAsker,
        Arc<SessionApprover>,
        broadcast::Sender<SessionEvent>,
    ) {
        let (events, _) = broadcast::channel(8);
        let approver = Arc::new(SessionApprover::new("s".into(), events.clone()));
        let asker = TurnAsker {
            session_id: "s".into(),
            forms: Arc::new(SessionForms::new("s".into(), events.clone())),
            approver: approver.clone(),
            provider,
            max_output_tokens: 64,
            secret: None,
        };
        (asker, approver, events)
    }

    fn request(max_tokens: u32) -> SampleRequest {
        SampleRequest {
            server: "every".into(),
            system_prompt: Some("You are a helpful test server.".into()),
            messages: vec![SampleMessage {
                from_user: true,
                text: "context: hello".into(),
            }],
            max_tokens,
        }
    }

    #[tokio::test]
    async fn nobody_to_ask_refuses_without_calling_the_model() {
        let provider = ScriptedProvider::new([text("never")]);
        let (asker, _approver, _events) = asker(provider.clone());
        let refused = asker.sample(request(10)).await.unwrap_err();
        assert!(matches!(refused, SampleRefusal::NotApproved { .. }));
        assert!(refused.to_string().contains("--yes"), "{refused}");
        assert!(provider.requests().is_empty());
    }

    #[tokio::test]
    async fn an_allowed_request_is_shown_then_sent_to_the_model_within_its_limit() {
        let provider = ScriptedProvider::new([text("sampled answer")]);
        let (asker, approver, events) = asker(provider.clone());
        let mut client = events.subscribe();
        let answering = tokio::spawn(async move {
            loop {
                if let SessionEvent::Approval {
                    id, title, detail, ..
                } = client.recv().await.unwrap()
                {
                    approver.answer(&id, "yes");
                    return (title, detail);
                }
            }
        });
        let reply = asker.sample(request(1000)).await.unwrap();
        assert_eq!(reply.text, "sampled answer");
        assert!(!reply.truncated);
        let (title, detail) = answering.await.unwrap();
        assert_eq!(title, "Let MCP server `every` use the model (sampling)?");
        assert!(
            detail.contains("max tokens: 64 (the server asked for 1000)"),
            "{detail}"
        );
        assert!(detail.contains("user: context: hello"), "{detail}");
        let sent = &provider.requests()[0];
        assert_eq!(sent.max_tokens, 64);
        assert_eq!(sent.system, "You are a helpful test server.");
        assert!(sent.tools.is_empty());
        assert_eq!(sent.messages, vec![Message::user_text("context: hello")]);
    }
}
