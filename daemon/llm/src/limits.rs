//! How long to wait for a model and how much it may read and write. [`LlmSettings`] is the
//! `"llm"` object of settings.json (timeouts, retry budget, per-model `contextWindow` and
//! `maxOutputTokens`); [`ModelLimits::resolve`] picks each model's limits from, in order, the
//! user's setting, what the server reported ([`crate::discover`]), the known defaults of known
//! model names, and a conservative fallback, and remembers which one it used for `/context`.
//!
//! ```json
//! "llm": {
//!   "firstByteTimeoutSecs": 60, "idleTimeoutSecs": 120, "retryBudgetSecs": 180,
//!   "models": { "smollm2": { "contextWindow": 4096, "maxOutputTokens": 1024 } }
//! }
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use synapse_shared::settings::Settings;

/// The settings.json key holding [`LlmSettings`].
pub const SETTINGS_KEY: &str = "llm";
/// Time allowed from sending a request to the first byte of the answer.
pub const FIRST_BYTE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// Time allowed between two chunks of a streaming answer.
pub const IDLE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);
/// Time allowed for one model call including all its retries.
pub const RETRY_BUDGET_DEFAULT: Duration = Duration::from_secs(180);
/// The context window assumed when neither the user, the server nor the model's name tells.
pub const CONTEXT_WINDOW_FALLBACK: u64 = 32_768;
/// Output budget per call when nothing else is known.
pub const MAX_OUTPUT_TOKENS_FALLBACK: u32 = 8_192;

/// Limits of one model as the user wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ModelLimitSettings {
    /// `contextWindow`: tokens the model can read in one call, prompt and reply together;
    /// `None` leaves it to the server's report or the known defaults.
    pub context_window: Option<u64>,
    /// `maxOutputTokens`: the most tokens one reply may contain; `None` picks a default no
    /// larger than a quarter of the context window.
    pub max_output_tokens: Option<u32>,
}

/// The `"llm"` object of settings.json. Every field is optional; seconds may be fractions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct LlmSettings {
    /// `firstByteTimeoutSecs`: seconds to wait for the first byte of an answer; `None` means
    /// [`FIRST_BYTE_TIMEOUT_DEFAULT`].
    pub first_byte_timeout_secs: Option<f64>,
    /// `idleTimeoutSecs`: seconds a streaming answer may go silent; `None` means
    /// [`IDLE_TIMEOUT_DEFAULT`].
    pub idle_timeout_secs: Option<f64>,
    /// `retryBudgetSecs`: seconds one model call may take with all its retries; `None` means
    /// [`RETRY_BUDGET_DEFAULT`].
    pub retry_budget_secs: Option<f64>,
    /// Per model name (exact, or a prefix of the configured model).
    pub models: BTreeMap<String, ModelLimitSettings>,
}

/// settings.json's `"llm"` object could not be read.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error(
    "settings.json \"llm\": {message}. Expected e.g. {{\"firstByteTimeoutSecs\": 60, \
     \"idleTimeoutSecs\": 120, \"retryBudgetSecs\": 180, \"models\": {{\"<model>\": \
     {{\"contextWindow\": 8192, \"maxOutputTokens\": 2048}}}}}}"
)]
pub struct LlmSettingsError {
    /// What is wrong: serde's parse error, or which timeout is not a positive number.
    pub message: String,
}

impl LlmSettings {
    /// Reads the `"llm"` object; absent means all defaults.
    pub fn from_settings(settings: &Settings) -> Result<Self, LlmSettingsError> {
        let Some(value) = settings.other.get(SETTINGS_KEY) else {
            return Ok(Self::default());
        };
        let parsed: Self = serde_json::from_value(value.clone()).map_err(|e| LlmSettingsError {
            message: e.to_string(),
        })?;
        for (name, secs) in [
            ("firstByteTimeoutSecs", parsed.first_byte_timeout_secs),
            ("idleTimeoutSecs", parsed.idle_timeout_secs),
            ("retryBudgetSecs", parsed.retry_budget_secs),
        ] {
            if let Some(s) = secs
                && !(s.is_finite() && s > 0.0 && s < 1e7)
            {
                return Err(LlmSettingsError {
                    message: format!("{name} must be a positive number of seconds (got {s})"),
                });
            }
        }
        Ok(parsed)
    }

    /// Time allowed from sending a request to the first byte of the answer.
    pub fn first_byte_timeout(&self) -> Duration {
        secs_or(self.first_byte_timeout_secs, FIRST_BYTE_TIMEOUT_DEFAULT)
    }

    /// Time allowed between two chunks of a streaming answer.
    pub fn idle_timeout(&self) -> Duration {
        secs_or(self.idle_timeout_secs, IDLE_TIMEOUT_DEFAULT)
    }

    /// Time allowed for one model call including all its retries and the waits between them.
    pub fn retry_budget(&self) -> Duration {
        secs_or(self.retry_budget_secs, RETRY_BUDGET_DEFAULT)
    }

    /// The user's limits for `model`: an exact entry, else the longest name that prefixes it.
    pub fn for_model(&self, model: &str) -> ModelLimitSettings {
        if let Some(exact) = self.models.get(model) {
            return exact.clone();
        }
        self.models
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

fn secs_or(value: Option<f64>, default: Duration) -> Duration {
    value.map(Duration::from_secs_f64).unwrap_or(default)
}

/// Where a context window figure came from (shown by `/context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// The user set it in settings.json (`llm.models.<model>.contextWindow`).
    Settings,
    /// The model server reported it ([`crate::discover`]).
    Server,
    /// The published limit of a well-known model family, matched by the model's name.
    KnownModel,
    /// Nothing told: [`CONTEXT_WINDOW_FALLBACK`].
    Fallback,
}

impl LimitSource {
    /// Where the figure came from, as `/context` shows it; the fallback says how to set it.
    pub fn describe(self) -> &'static str {
        match self {
            LimitSource::Settings => "settings.json",
            LimitSource::Server => "reported by the server",
            LimitSource::KnownModel => "known default for this model",
            LimitSource::Fallback => "conservative default; set llm.models.<model>.contextWindow",
        }
    }
}

/// The limits a session uses for its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelLimits {
    /// Tokens the model can read in one call (prompt and reply); compaction keeps the
    /// conversation below it.
    pub context_window: u64,
    /// Where `context_window` came from.
    pub context_source: LimitSource,
    /// The `max_tokens` sent with each call: the most tokens one reply may contain.
    pub max_output_tokens: u32,
}

impl ModelLimits {
    /// Picks the limits: the user's settings, then the server's report, then known model
    /// names, then the fallback. The output budget never exceeds a quarter of the window, so a
    /// small model cannot spend its whole window (or twenty minutes) on one looping reply.
    pub fn resolve(model: &str, user: &ModelLimitSettings, discovered: Option<u64>) -> Self {
        let known = known_model_limits(model);
        let (context_window, context_source) = if let Some(w) = user.context_window {
            (w, LimitSource::Settings)
        } else if let Some(w) = discovered.filter(|w| *w > 0) {
            (w, LimitSource::Server)
        } else if let Some((w, _)) = known {
            (w, LimitSource::KnownModel)
        } else {
            (CONTEXT_WINDOW_FALLBACK, LimitSource::Fallback)
        };
        let max_output_tokens = user.max_output_tokens.unwrap_or_else(|| {
            let by_name = known.map_or(MAX_OUTPUT_TOKENS_FALLBACK, |(_, out)| out);
            let quarter = u32::try_from(context_window / 4)
                .unwrap_or(u32::MAX)
                .max(256);
            by_name.min(quarter)
        });
        Self {
            context_window,
            context_source,
            max_output_tokens,
        }
    }
}

/// Published limits of well-known model families: (context window, output budget we use).
fn known_model_limits(model: &str) -> Option<(u64, u32)> {
    let m = model.to_ascii_lowercase();
    let table: &[(&str, u64, u32)] = &[
        ("claude-sonnet-4", 200_000, 16_384),
        ("claude-opus-4", 200_000, 16_384),
        ("claude-haiku-4", 200_000, 16_384),
        ("claude-3", 200_000, 8_192),
        ("gpt-4.1", 1_047_576, 16_384),
        ("gpt-4o", 128_000, 16_384),
        ("gpt-5", 400_000, 16_384),
        ("o3", 200_000, 16_384),
        ("o4-mini", 200_000, 16_384),
    ];
    table
        .iter()
        .find(|(prefix, _, _)| m.starts_with(prefix))
        .map(|(_, w, o)| (*w, *o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(llm: serde_json::Value) -> Settings {
        let mut s = Settings::default();
        s.other.insert(SETTINGS_KEY.into(), llm);
        s
    }

    #[test]
    fn limits_come_from_settings_then_server_then_name_then_fallback() {
        let user = ModelLimitSettings {
            context_window: Some(4096),
            max_output_tokens: None,
        };
        let l = ModelLimits::resolve("local", &user, Some(8192));
        assert_eq!(
            (l.context_window, l.context_source),
            (4096, LimitSource::Settings)
        );
        assert_eq!(l.max_output_tokens, 1024);
        let none = ModelLimitSettings::default();
        let l = ModelLimits::resolve("local", &none, Some(8192));
        assert_eq!(
            (l.context_window, l.context_source),
            (8192, LimitSource::Server)
        );
        let l = ModelLimits::resolve("claude-sonnet-4-6", &none, None);
        assert_eq!(l.context_source, LimitSource::KnownModel);
        assert_eq!(l.max_output_tokens, 16_384);
        let l = ModelLimits::resolve("mystery-7b", &none, None);
        assert_eq!(
            (l.context_window, l.context_source),
            (CONTEXT_WINDOW_FALLBACK, LimitSource::Fallback)
        );
    }

    #[test]
    fn settings_are_read_and_bad_values_named() {
        let s = settings(
            json!({"firstByteTimeoutSecs": 0.5, "models": {"smol": {"maxOutputTokens": 64}}}),
        );
        let llm = LlmSettings::from_settings(&s).unwrap();
        assert_eq!(llm.first_byte_timeout(), Duration::from_millis(500));
        assert_eq!(llm.idle_timeout(), IDLE_TIMEOUT_DEFAULT);
        assert_eq!(llm.for_model("smollm2-135m").max_output_tokens, Some(64));
        let err =
            LlmSettings::from_settings(&settings(json!({"idleTimeoutSecs": -1}))).unwrap_err();
        assert!(err.to_string().contains("idleTimeoutSecs"), "{err}");
        let err = LlmSettings::from_settings(&settings(json!({"idleTimeout": 5}))).unwrap_err();
        assert!(err.to_string().contains("idleTimeout"), "{err}");
    }
}
