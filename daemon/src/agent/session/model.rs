//! [`SessionModel`]: which model a session's turns use and what that model can take. The choice
//! is the session's override (`/model`, `--model`), or for one turn a custom command's `model`
//! ([`SessionModel::for_turn`]), before the client's environment and settings.json
//! (`resolve_config` in `session.rs`). Its limits — the context window (and where that figure
//! came from) and the output budget — are resolved by [`synapse_llm::ModelLimits::resolve`] from
//! settings.json, the server's own report ([`synapse_llm::discover`]) and known model names:
//! found once per provider configuration, when a turn or a compaction first needs them, and
//! kept readable without the conversation lock so `/context` and the output cap can ask at any
//! time.

use parking_lot::Mutex;

use synapse_llm::{LimitSource, ModelLimits, ProviderConfig};

/// A session's model choice and the limits of the model in use.
#[derive(Debug, Default)]
pub(super) struct SessionModel {
    /// Set by `/model` (or the opening client); `None`: the environment's or settings.json's.
    chosen: Mutex<Option<String>>,
    /// The running turn's own model (a custom command's `model`), before the override.
    turn: Mutex<Option<String>>,
    /// The limits found for a provider configuration.
    limits: Mutex<Option<(ProviderConfig, ModelLimits)>>,
}

/// Puts the session's turn model back to none when the turn ends.
pub(super) struct TurnModel<'a>(&'a Mutex<Option<String>>);

impl Drop for TurnModel<'_> {
    fn drop(&mut self) {
        *self.0.lock() = None;
    }
}

impl SessionModel {
    /// A session whose override is `chosen`.
    pub(super) fn new(chosen: Option<String>) -> Self {
        Self {
            chosen: Mutex::new(chosen),
            ..Self::default()
        }
    }

    /// The model a request uses now, when the session says: the turn's, else the override.
    pub(super) fn in_force(&self) -> Option<String> {
        let turn = self.turn.lock().clone();
        turn.or_else(|| self.chosen.lock().clone())
    }

    /// The session's override.
    pub(super) fn chosen(&self) -> Option<String> {
        self.chosen.lock().clone()
    }

    /// Changes the override for the following turns.
    pub(super) fn choose(&self, model: Option<String>) {
        *self.chosen.lock() = model;
    }

    /// Uses `model` (when set) for the running turn only, until the returned guard drops.
    pub(super) fn for_turn(&self, model: Option<String>) -> TurnModel<'_> {
        *self.turn.lock() = model;
        TurnModel(&self.turn)
    }

    /// The limits of the model `config` names, discovering them when the configuration changed
    /// since the last time (`session` names the session in the log).
    pub(super) async fn limits(&self, config: &ProviderConfig, session: &str) -> ModelLimits {
        if let Some((cached_config, limits)) = self.limits.lock().as_ref()
            && cached_config == config
        {
            return *limits;
        }
        let discovered = synapse_llm::discover::discover_context_window(config).await;
        let limits = ModelLimits::resolve(
            &config.model,
            &config.llm.for_model(&config.model),
            discovered,
        );
        tracing::info!(
            %session,
            model = %config.model,
            context_window = limits.context_window,
            source = limits.context_source.describe(),
            max_output_tokens = limits.max_output_tokens,
            "model limits"
        );
        *self.limits.lock() = Some((config.clone(), limits));
        limits
    }

    /// The context window in tokens and where the figure came from, once a turn has resolved
    /// it (`None` before).
    pub(super) fn context_window(&self) -> Option<(u64, LimitSource)> {
        self.limits
            .lock()
            .as_ref()
            .map(|(_, l)| (l.context_window, l.context_source))
    }
}
