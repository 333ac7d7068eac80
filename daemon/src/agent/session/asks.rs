//! What MCP servers ask a session's user while its tool calls run: each turn hands its calls a
//! [`TurnAsker`] (the session's forms and approvals, the turn's model and output limit), and a
//! client's answer to a form comes back through [`ChatSession::answer_elicitation`].

use std::sync::Arc;

use super::ChatSession;
use crate::agent::asker::TurnAsker;
use crate::shell::AskerHandle;
use synapse_llm::LlmProvider;

impl ChatSession {
    /// A client's answer to a form: "accept" with its values as a JSON object, "decline" or
    /// "cancel". `Err` says why it was not taken (the form then stays open, if it was).
    pub fn answer_elicitation(
        &self,
        request_id: &str,
        action: &str,
        content_json: &str,
    ) -> Result<(), crate::agent::forms::FormAnswerError> {
        self.forms.answer(request_id, action, content_json)
    }

    /// The asker of a turn's tool calls: sampling uses `provider`, bounded by
    /// `max_output_tokens`.
    pub(super) fn turn_asker(
        &self,
        provider: Arc<dyn LlmProvider>,
        max_output_tokens: u32,
    ) -> AskerHandle {
        let secret = self
            .resolve_config()
            .ok()
            .and_then(|c| c.api_key.as_ref().map(|k| k.expose().to_string()));
        AskerHandle(Arc::new(TurnAsker {
            session_id: self.id.clone(),
            forms: self.forms.clone(),
            approver: self.approver.clone(),
            provider,
            max_output_tokens,
            secret,
        }))
    }
}
