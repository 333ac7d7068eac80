//! Which model to talk to and how: [`ProviderConfig::resolve`] reads settings.json and the process
//! environment (the environment wins) and yields the provider kind, model, base URL and key that
//! [`crate::build_provider`] turns into a provider. Keys are wrapped in [`ApiKey`], whose
//! `Debug` never shows them.

use std::fmt;
use std::time::Duration;

use synapse_shared::settings::Settings;

use super::limits::{LlmSettings, LlmSettingsError};
use super::retry::RetryPolicy;

/// The model used when neither `SYNAPSE_MODEL` nor settings.json names one (Anthropic).
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
/// The model used with the OpenAI API itself when none is named.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// Anthropic's API host, used when `ANTHROPIC_BASE_URL` is not set (`/v1/messages` is appended).
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// OpenAI's API, used when `OPENAI_BASE_URL` is not set (`/chat/completions` is appended).
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Output budget per model call unless the caller asks for another.
pub const MAX_OUTPUT_TOKENS_DEFAULT: u32 = 16_384;
/// Time allowed to open the TCP/TLS connection to the model server, per attempt.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

const LOCAL_SERVER_HINT: &str = "To use a local OpenAI-compatible server instead (Ollama, vLLM, \
llama.cpp), set SYNAPSE_PROVIDER=openai OPENAI_BASE_URL=http://localhost:11434/v1 SYNAPSE_MODEL=<model>.";

/// The wire format spoken to the model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter).
    OpenAi,
}

impl ProviderKind {
    /// Every provider kind (what [`secret_variables`] is derived from).
    pub const ALL: [ProviderKind; 2] = [ProviderKind::Anthropic, ProviderKind::OpenAi];

    /// The name users write in `provider` / `SYNAPSE_PROVIDER`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }

    /// The display name used in messages.
    pub fn display_name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "Anthropic",
            ProviderKind::OpenAi => "OpenAI-compatible server",
        }
    }

    /// The variable that holds this provider's key.
    pub fn key_variable(self) -> &'static str {
        self.credential_variables()[0]
    }

    /// Every variable that can hold this provider's credentials: its key first, then the other
    /// names the provider's own tools read (Claude Code's `ANTHROPIC_AUTH_TOKEN` bearer token).
    pub fn credential_variables(self) -> &'static [&'static str] {
        match self {
            ProviderKind::Anthropic => &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
            ProviderKind::OpenAi => &["OPENAI_API_KEY"],
        }
    }

    /// The variable that holds this provider's base URL.
    pub fn base_url_variable(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
            ProviderKind::OpenAi => "OPENAI_BASE_URL",
        }
    }
}

/// The variables holding any provider's credentials: they stay with the daemon and are removed
/// from the environment of every command the model runs.
pub fn secret_variables() -> impl Iterator<Item = &'static str> {
    ProviderKind::ALL
        .into_iter()
        .flat_map(|k| k.credential_variables().iter().copied())
}

/// An API key. `Debug` is redacted and there is no `Display`, so it cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key as read from the environment or settings.json (already trimmed by the caller).
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The secret itself, for the one place that puts it in a header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// The key as a header value marked sensitive, so even a header dump does not show it.
pub(crate) fn secret_header(
    key: &ApiKey,
    kind: ProviderKind,
) -> Result<reqwest::header::HeaderValue, super::error::LlmError> {
    let value = match kind {
        ProviderKind::Anthropic => reqwest::header::HeaderValue::from_str(key.expose()),
        ProviderKind::OpenAi => {
            reqwest::header::HeaderValue::from_str(&format!("Bearer {}", key.expose()))
        }
    };
    let mut value = value.map_err(|_| super::error::LlmError::Request {
        provider: kind.display_name(),
        message: format!(
            "{} contains characters that cannot be sent in an HTTP header",
            kind.key_variable()
        ),
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The user's settings.json as messages name it: its real path (`SYNAPSE_HOME` resolved as the
/// daemon resolves it), never the variable's name.
pub fn settings_file_shown() -> String {
    static SHOWN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SHOWN
        .get_or_init(|| match synapse_shared::paths::Paths::from_env() {
            Ok(paths) => paths.settings_file().display().to_string(),
            Err(_) => "settings.json in the Synapse home".to_string(),
        })
        .clone()
}

/// Why no usable provider configuration could be formed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// The provider needs a key and none is set (always for Anthropic; for OpenAI only at
    /// OpenAI's own API, since local servers usually take none).
    #[error(
        "no {provider} API key: set {variable} in the environment or \"env\": {{\"{variable}\": \
         \"...\"}} in {}. {hint}",
        settings_file_shown()
    )]
    MissingApiKey {
        /// The provider's display name ([`ProviderKind::display_name`]).
        provider: &'static str,
        /// The variable the key belongs in ([`ProviderKind::key_variable`]).
        variable: &'static str,
        /// A further sentence for the user: how to use a local server instead.
        hint: &'static str,
    },
    /// `SYNAPSE_PROVIDER` or settings.json's `provider` names no provider Synapse knows.
    #[error(
        "unknown provider {value:?} (from {source_name}): expected \"anthropic\" or \"openai\" \
         (any OpenAI-compatible server)"
    )]
    UnknownProvider {
        /// The value as the user wrote it.
        value: String,
        /// Where it was read: `SYNAPSE_PROVIDER` or settings.json's `"provider"`.
        source_name: &'static str,
    },
    /// An OpenAI-compatible server other than OpenAI's own, with no model named: there is no
    /// default that every server serves.
    #[error(
        "no model set for the OpenAI-compatible server at {base_url}: set SYNAPSE_MODEL in the \
         environment or \"model\" in {} to one of the server's models",
        settings_file_shown()
    )]
    MissingModel {
        /// The server's base URL, so the user knows which server needs a model.
        base_url: String,
    },
    /// A base URL that is not an absolute `http://` or `https://` URL with a host.
    #[error("{variable} must be an http:// or https:// URL (got {value:?})")]
    InvalidBaseUrl {
        /// The variable it came from (`ANTHROPIC_BASE_URL` or `OPENAI_BASE_URL`).
        variable: &'static str,
        /// The value as the user wrote it.
        value: String,
    },
    /// settings.json's `"llm"` object is malformed.
    #[error(transparent)]
    Settings(#[from] LlmSettingsError),
}

/// A resolved provider configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The wire format to speak.
    pub kind: ProviderKind,
    /// The model id sent with every request, trimmed.
    pub model: String,
    /// Without a trailing slash. Anthropic: the host (`/v1/messages` is appended); OpenAI: up to
    /// and including `/v1` (`/chat/completions` is appended), as each vendor's SDK expects.
    pub base_url: String,
    /// The key sent with every request; `None` only for an OpenAI-compatible server other than
    /// OpenAI's own, which then gets no `Authorization` header.
    pub api_key: Option<ApiKey>,
    /// Attempts, backoff and timeouts for each model call, derived from [`Self::llm`].
    pub retry: RetryPolicy,
    /// settings.json's `"llm"` object (timeouts, per-model limits).
    pub llm: LlmSettings,
}

impl ProviderConfig {
    /// Resolves the configuration from settings.json and an environment lookup (the daemon passes
    /// `|k| std::env::var(k).ok()`; tests pass a map). Environment values override settings.json's
    /// `model`, `provider` and `env.*`; empty values count as unset.
    pub fn resolve(
        settings: &Settings,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let llm = LlmSettings::from_settings(settings)?;
        let process = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let lookup = |name: &str| {
            process(name).or_else(|| {
                settings
                    .env
                    .get(name)
                    .filter(|v| !v.trim().is_empty())
                    .cloned()
            })
        };

        let explicit = match process("SYNAPSE_PROVIDER") {
            Some(v) => Some((v, "SYNAPSE_PROVIDER")),
            None => settings
                .provider
                .clone()
                .filter(|v| !v.trim().is_empty())
                .map(|v| (v, "settings.json \"provider\"")),
        };
        let kind = match explicit {
            Some((value, source_name)) => parse_kind(&value, source_name)?,
            // Without an explicit choice, a user who only configured an OpenAI-compatible server
            // gets it; everyone else gets Anthropic.
            None if lookup("ANTHROPIC_API_KEY").is_none()
                && (lookup("OPENAI_BASE_URL").is_some() || lookup("OPENAI_API_KEY").is_some()) =>
            {
                ProviderKind::OpenAi
            }
            None => ProviderKind::Anthropic,
        };

        let base_url = match lookup(kind.base_url_variable()) {
            Some(url) => validate_base_url(kind.base_url_variable(), &url)?,
            None => match kind {
                ProviderKind::Anthropic => DEFAULT_ANTHROPIC_BASE_URL.to_string(),
                ProviderKind::OpenAi => DEFAULT_OPENAI_BASE_URL.to_string(),
            },
        };
        let api_key = lookup(kind.key_variable()).map(|k| ApiKey::new(k.trim()));
        let is_official =
            base_url == DEFAULT_ANTHROPIC_BASE_URL || base_url == DEFAULT_OPENAI_BASE_URL;
        if api_key.is_none() && (kind == ProviderKind::Anthropic || is_official) {
            return Err(ConfigError::MissingApiKey {
                provider: kind.display_name(),
                variable: kind.key_variable(),
                hint: LOCAL_SERVER_HINT,
            });
        }

        let model = process("SYNAPSE_MODEL")
            .or_else(|| settings.model.clone().filter(|m| !m.trim().is_empty()));
        let model = match (model, kind) {
            (Some(m), _) => m.trim().to_string(),
            (None, ProviderKind::Anthropic) => DEFAULT_ANTHROPIC_MODEL.to_string(),
            (None, ProviderKind::OpenAi) if base_url == DEFAULT_OPENAI_BASE_URL => {
                DEFAULT_OPENAI_MODEL.to_string()
            }
            (None, ProviderKind::OpenAi) => return Err(ConfigError::MissingModel { base_url }),
        };

        Ok(Self {
            kind,
            model,
            base_url,
            api_key,
            retry: RetryPolicy::from_settings(&llm),
            llm,
        })
    }
}

fn parse_kind(value: &str, source_name: &'static str) -> Result<ProviderKind, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "anthropic" | "claude" => Ok(ProviderKind::Anthropic),
        "openai" | "openai-compatible" | "ollama" | "vllm" | "llama.cpp" | "openrouter" => {
            Ok(ProviderKind::OpenAi)
        }
        _ => Err(ConfigError::UnknownProvider {
            value: value.to_string(),
            source_name,
        }),
    }
}

fn validate_base_url(variable: &'static str, value: &str) -> Result<String, ConfigError> {
    let trimmed = value.trim().trim_end_matches('/');
    match reqwest::Url::parse(trimmed) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(trimmed.to_string())
        }
        _ => Err(ConfigError::InvalidBaseUrl {
            variable,
            value: value.to_string(),
        }),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
