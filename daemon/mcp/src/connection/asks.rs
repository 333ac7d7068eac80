//! A server's requests to the user during a tool call: `elicitation/create` (a form, or in URL
//! mode a page to open) and `sampling/createMessage` (a reply of the session's model).
//!
//! Every `tools/call` in flight is registered here with its caller's [`AskerHandle`] — none for
//! a call from a terminal, a pipeline or a sub-agent — for as long as it runs
//! ([`CallAskers::register`]). When the server asks, the request goes to the asker of the call
//! it belongs to: over Streamable HTTP rmcp tells which call's response stream it arrived on;
//! over stdio nothing does, so it goes to the session whose calls are in flight, and when calls
//! of several callers are, nobody can tell whose it is. No call in flight, a caller with nobody
//! to ask, or no telling whose: forms are declined and sampling is refused with a JSON-RPC
//! error saying how to allow it. A call that ends (answered, timed out, cancelled) withdraws
//! its questions.

// Sampling is deprecated from the 2026 protocol on (rmcp marks its types so), but servers of the
// 2025 revisions use it.
#![allow(deprecated)]

use parking_lot::Mutex;
use std::sync::Arc;

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, RequestId, Role, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::{InboundStreamOrigin, RequestContext};
use rmcp::{ErrorData, RoleClient};
use tokio_util::sync::CancellationToken;

use synapse_command::asker::AskerHandle;
use synapse_command::asker::{
    FormAnswer, FormRequest, SampleMessage, SampleRefusal, SampleRequest,
};

/// JSON-RPC error code the MCP specification uses for a sampling request the user rejected.
const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// The calls in flight on one connection, with their askers.
#[derive(Clone, Default)]
pub(crate) struct CallAskers(Arc<Mutex<Vec<Entry>>>);

struct Entry {
    seq: u64,
    /// The `tools/call` request id, for requests that arrive on its response stream (`None`
    /// when rmcp made the request without telling it).
    request: Option<RequestId>,
    /// `None`: the caller has nobody to ask.
    asker: Option<AskerHandle>,
    /// Cancelled when the call ends: its open questions are withdrawn.
    ended: CancellationToken,
}

/// Keeps a call registered until dropped.
pub(crate) struct Registered {
    askers: CallAskers,
    seq: u64,
    ended: CancellationToken,
}

impl Registered {
    /// Names the call's `tools/call` request id once rmcp has sent it. The call is registered
    /// before it is sent, since a server may ask before the send returns.
    pub(crate) fn set_request(&self, id: RequestId) {
        if let Some(entry) = self.askers.0.lock().iter_mut().find(|e| e.seq == self.seq) {
            entry.request = Some(id);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.ended.cancel();
        self.askers.0.lock().retain(|e| e.seq != self.seq);
    }
}

impl CallAskers {
    /// Registers a call in flight (every call, so that a question during a call whose caller
    /// has nobody to ask is never put to another session) while the returned guard lives.
    pub(crate) fn register(
        &self,
        request: Option<RequestId>,
        asker: Option<AskerHandle>,
    ) -> Registered {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ended = CancellationToken::new();
        self.0.lock().push(Entry {
            seq,
            request,
            asker,
            ended: ended.clone(),
        });
        Registered {
            askers: self.clone(),
            seq,
            ended,
        }
    }

    /// The asker a server request belongs to, with the token of its call's end. `origin` is
    /// the response stream the request arrived on, when the transport knows it (HTTP).
    fn find(
        &self,
        origin: Option<&InboundStreamOrigin>,
    ) -> Result<(AskerHandle, CancellationToken), NoAsker> {
        let entries = self.0.lock();
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin
            && let Some(call) = entries.iter().find(|e| e.request.as_ref() == Some(id))
        {
            let asker = call.asker.clone().ok_or(NoAsker::NoCall)?;
            return Ok((asker, call.ended.clone()));
        }
        // Nothing says which call it is (or its call's id is not known yet, the request having
        // overtaken the send's return): only when every call in flight is one session's.
        let session = |e: &Entry| e.asker.as_ref().map(|a| a.0.session().to_string());
        let last = entries.last().ok_or(NoAsker::NoCall)?;
        match &last.asker {
            Some(asker) if entries.iter().all(|e| session(e) == session(last)) => {
                Ok((asker.clone(), last.ended.clone()))
            }
            _ if entries.iter().all(|e| e.asker.is_none()) => Err(NoAsker::NoCall),
            _ => Err(NoAsker::Ambiguous),
        }
    }
}

/// Why a server request has nobody to answer it.
#[derive(Debug, Clone, Copy)]
enum NoAsker {
    /// No call with someone to ask is in flight.
    NoCall,
    /// Calls of several sessions are in flight and the transport cannot tell whose it is.
    Ambiguous,
}

impl NoAsker {
    fn why(self) -> &'static str {
        match self {
            NoAsker::NoCall => {
                "no tool call of a chat session is running on this server (a call from \
                 `synapse exec`, `synapse mcp call`, a pipeline or a sub-agent has nobody to ask)"
            }
            NoAsker::Ambiguous => {
                "calls of several callers are running on this server and the request does not \
                 say which one it belongs to"
            }
        }
    }
}

/// `elicitation/create`: a form — or, in URL mode, a page to open — goes to the user of the
/// call it belongs to; otherwise declined.
pub(super) async fn elicit(
    server: &str,
    askers: &CallAskers,
    request: ElicitRequestParams,
    context: RequestContext<RoleClient>,
) -> ElicitResult {
    let (message, requested_schema, url) = match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => match serde_json::to_value(&requested_schema) {
            Ok(schema) => (message, schema, None),
            Err(e) => {
                tracing::warn!(%server, "declined an elicitation whose schema cannot be shown: {e}");
                return ElicitResult::new(ElicitationAction::Decline);
            }
        },
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            let nothing = serde_json::json!({"type": "object", "properties": {}});
            (message, nothing, Some(url))
        }
        _ => {
            tracing::info!(%server, "declined an elicitation of a mode Synapse does not know");
            return ElicitResult::new(ElicitationAction::Decline);
        }
    };
    let (asker, ended) = match askers.find(context.extensions.get()) {
        Ok(found) => found,
        Err(no) => {
            tracing::info!(%server, %message, "declined an elicitation: {}", no.why());
            return ElicitResult::new(ElicitationAction::Decline);
        }
    };
    let url_mode = url.is_some();
    let form = FormRequest {
        server: server.to_string(),
        message,
        schema: requested_schema,
        url,
    };
    let answer = tokio::select! {
        answer = asker.0.elicit(form) => answer,
        _ = ended.cancelled() => FormAnswer::Cancel,
        _ = context.ct.cancelled() => FormAnswer::Cancel,
    };
    match answer {
        // URL mode: accepting says the user went to the page; there is no content.
        FormAnswer::Accept(_) if url_mode => ElicitResult::new(ElicitationAction::Accept),
        FormAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::Value::Object(content)),
        FormAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        FormAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// `sampling/createMessage`: shown to the user of the call it belongs to and, once allowed,
/// answered by the session's model; otherwise refused.
pub(super) async fn sample(
    server: &str,
    askers: &CallAskers,
    params: CreateMessageRequestParams,
    context: RequestContext<RoleClient>,
) -> Result<CreateMessageResult, ErrorData> {
    if params.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(ErrorData::invalid_params(
            "Synapse does not offer tools in sampling requests (its sampling capability does not \
             declare `tools`)",
            None,
        ));
    }
    let (asker, ended) = askers.find(context.extensions.get()).map_err(|no| {
        tracing::info!(%server, "refused a sampling request: {}", no.why());
        rejected(format!(
            "the user was not asked: {}. Call the tool from `synapse chat` (or `synapse run \
             --yes`) to let the server use the model",
            no.why()
        ))
    })?;
    let request = SampleRequest {
        server: server.to_string(),
        system_prompt: params.system_prompt.filter(|s| !s.trim().is_empty()),
        messages: messages(params.messages)?,
        max_tokens: params.max_tokens,
    };
    let ended_why = tokio::select! {
        reply = asker.0.sample(request) => Ok(reply),
        _ = ended.cancelled() => Err("the tool call that asked has ended"),
        _ = context.ct.cancelled() => Err("the server cancelled the request"),
    };
    let reply = ended_why.map_err(|why| rejected(why.to_string()))?;
    match reply {
        Ok(reply) => {
            let message = SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(reply.text),
            );
            let stop = if reply.truncated {
                CreateMessageResult::STOP_REASON_END_MAX_TOKEN
            } else {
                CreateMessageResult::STOP_REASON_END_TURN
            };
            Ok(CreateMessageResult::new(message, reply.model).with_stop_reason(stop))
        }
        Err(e @ SampleRefusal::NotApproved { .. }) => Err(rejected(e.to_string())),
        Err(e @ SampleRefusal::ModelFailed(_)) => {
            Err(ErrorData::internal_error(e.to_string(), None))
        }
    }
}

fn rejected(why: String) -> ErrorData {
    ErrorData::new(
        USER_REJECTED,
        format!("User rejected sampling request: {why}"),
        None,
    )
}

/// The server's messages as text; Synapse sends the model text only.
fn messages(messages: Vec<SamplingMessage>) -> Result<Vec<SampleMessage>, ErrorData> {
    messages
        .into_iter()
        .map(|m| {
            let mut text = Vec::new();
            for block in m.content.into_vec() {
                match block {
                    SamplingMessageContentBlock::Text(t) => text.push(t.text),
                    _ => {
                        return Err(ErrorData::invalid_params(
                            "Synapse sends the model text only: this sampling request holds \
                             image, audio or tool content",
                            None,
                        ));
                    }
                }
            }
            Ok(SampleMessage {
                from_user: m.role == Role::User,
                text: text.join("\n"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::BoxFuture;
    use synapse_command::asker::{FormAnswer, SampleReply, SampleRequest, SessionAsker};

    struct Named(&'static str);

    impl SessionAsker for Named {
        fn session(&self) -> &str {
            self.0
        }
        fn elicit(&self, _: FormRequest) -> BoxFuture<'_, FormAnswer> {
            Box::pin(async { FormAnswer::Decline })
        }
        fn sample(&self, _: SampleRequest) -> BoxFuture<'_, Result<SampleReply, SampleRefusal>> {
            Box::pin(async { Err(SampleRefusal::ModelFailed("unused".into())) })
        }
    }

    fn asker(session: &'static str) -> Option<AskerHandle> {
        Some(AskerHandle(Arc::new(Named(session))))
    }

    fn found(askers: &CallAskers, origin: Option<&InboundStreamOrigin>) -> Result<String, String> {
        askers
            .find(origin)
            .map(|(a, _)| a.0.session().to_string())
            .map_err(|no| format!("{no:?}"))
    }

    #[test]
    fn a_question_goes_to_the_session_whose_call_it_serves_or_to_nobody() {
        let askers = CallAskers::default();
        assert_eq!(found(&askers, None), Err("NoCall".into()));
        let a1 = askers.register(Some(RequestId::Number(1)), asker("a"));
        let a2 = askers.register(Some(RequestId::Number(2)), asker("a"));
        assert_eq!(found(&askers, None), Ok("a".into()));
        // Another session's call: over stdio nobody can tell whose question it is.
        let b = askers.register(Some(RequestId::Number(3)), asker("b"));
        assert_eq!(found(&askers, None), Err("Ambiguous".into()));
        // Over HTTP the response stream tells.
        let on = |n| InboundStreamOrigin::OutboundRequest(RequestId::Number(n));
        assert_eq!(found(&askers, Some(&on(3))), Ok("b".into()));
        assert_eq!(found(&askers, Some(&on(1))), Ok("a".into()));
        // An id no call has (yet): only the calls in flight can tell.
        assert_eq!(found(&askers, Some(&on(9))), Err("Ambiguous".into()));
        drop(b);
        // A terminal's call has nobody to ask, and makes the others' questions ambiguous.
        let terminal = askers.register(None, None);
        assert_eq!(found(&askers, None), Err("Ambiguous".into()));
        drop((a1, a2));
        assert_eq!(found(&askers, None), Err("NoCall".into()));
        drop(terminal);
        assert_eq!(found(&askers, None), Err("NoCall".into()));
    }

    #[test]
    fn a_question_that_overtakes_its_calls_send_still_reaches_the_session() {
        let askers = CallAskers::default();
        let on = |n| InboundStreamOrigin::OutboundRequest(RequestId::Number(n));
        // Registered before the send; the server asks before rmcp returned the request id.
        let call = askers.register(None, asker("a"));
        assert_eq!(found(&askers, Some(&on(4))), Ok("a".into()));
        assert_eq!(found(&askers, None), Ok("a".into()));
        call.set_request(RequestId::Number(4));
        let other = askers.register(Some(RequestId::Number(5)), asker("b"));
        assert_eq!(found(&askers, Some(&on(4))), Ok("a".into()));
        drop((call, other));
        assert_eq!(found(&askers, Some(&on(4))), Err("NoCall".into()));
    }

    #[test]
    fn an_ended_call_withdraws_its_questions() {
        let askers = CallAskers::default();
        let call = askers.register(Some(RequestId::Number(1)), asker("a"));
        let (_, ended) = askers.find(None).unwrap();
        assert!(!ended.is_cancelled());
        drop(call);
        assert!(ended.is_cancelled());
    }
}
