//! The session's model limits: its context window (and where that figure came from) and its
//! output budget, resolved by [`synapse_llm::ModelLimits::resolve`] from settings.json, the
//! server's own report ([`synapse_llm::discover`]) and known model names. Found once per
//! provider configuration, when a turn or a compaction first needs them, and kept readable
//! without the conversation lock so `/context` and the output cap can ask at any time.

use super::ChatSession;
use synapse_llm::{LimitSource, ModelLimits};

impl ChatSession {
    /// The limits of the session's current model, discovering them if the configuration
    /// changed since the last time.
    pub(super) async fn current_limits(&self) -> ModelLimits {
        let config = match self.resolve_config() {
            Ok(c) => c,
            Err(_) => return ModelLimits::resolve("", &Default::default(), None),
        };
        if let Some((cached_config, limits)) = self.model_limits.lock().as_ref()
            && *cached_config == config
        {
            return *limits;
        }
        let discovered = synapse_llm::discover::discover_context_window(&config).await;
        let limits = ModelLimits::resolve(
            &config.model,
            &config.llm.for_model(&config.model),
            discovered,
        );
        tracing::info!(
            session = %self.id,
            model = %config.model,
            context_window = limits.context_window,
            source = limits.context_source.describe(),
            max_output_tokens = limits.max_output_tokens,
            "model limits"
        );
        {
            let mut cached = self.model_limits.lock();
            *cached = Some((config, limits));
        }
        limits
    }

    /// The model's context window in tokens and where the figure came from, once a turn has
    /// resolved it (`None` before). The output cap sizes tool output from it; `/context`
    /// shows it.
    pub fn context_window(&self) -> Option<(u64, LimitSource)> {
        self.model_limits
            .lock()
            .as_ref()
            .map(|(_, l)| (l.context_window, l.context_source))
    }
}
