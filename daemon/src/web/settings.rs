//! The `web` section of settings.json, typed: whether private networks may be fetched, the
//! fetch limits, and the search provider with its URL and key.
//!
//! `Settings` keeps keys it does not know in `other`; this module reads `other["web"]` each
//! time a command runs (so an edited settings.json applies without a restart of the command
//! layer) and says exactly which key is wrong when it cannot. API keys are wrapped in
//! [`ApiKey`], whose `Debug` never shows the secret.

use std::time::Duration;

use serde::Deserialize;
use synapse_shared::settings::Settings;

/// How long one fetch may take, unless settings or the command's own timeout say less.
pub const FETCH_TIMEOUT_DEFAULT: Duration = Duration::from_secs(30);
/// Bytes of a response body read before the rest is dropped.
pub const FETCH_MAX_BYTES_DEFAULT: usize = 5 * 1024 * 1024;
/// How long a fetched page is served from the session's cache.
pub const FETCH_CACHE_TTL_DEFAULT: Duration = Duration::from_secs(5 * 60);

/// The secret part of a search provider's configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into();
        let trimmed = key.trim();
        (!trimmed.is_empty()).then(|| Self(trimmed.to_string()))
    }

    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced, for error messages built from
    /// whatever a provider sent back.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, "[redacted]")
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// A search provider Synapse can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// A SearXNG instance's JSON API (`<url>/search?format=json`).
    Searxng,
    /// Brave Search API (key: `X-Subscription-Token`).
    Brave,
    /// Tavily Search API (key: bearer token).
    Tavily,
}

impl ProviderKind {
    /// Every search provider (what [`secret_variables`] is derived from).
    pub const ALL: [ProviderKind; 3] = [Self::Searxng, Self::Brave, Self::Tavily];

    pub fn name(self) -> &'static str {
        match self {
            Self::Searxng => "searxng",
            Self::Brave => "brave",
            Self::Tavily => "tavily",
        }
    }

    /// The environment variable the key may come from.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            Self::Searxng => None,
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
        }
    }
}

/// The variables that may hold a search provider's key: they stay with the daemon and are
/// removed from the environment of every command the model runs.
pub fn secret_variables() -> impl Iterator<Item = &'static str> {
    ProviderKind::ALL
        .into_iter()
        .filter_map(ProviderKind::key_variable)
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    pub provider: ProviderKind,
    /// SearXNG: the instance's base URL (required). Brave, Tavily: overrides the API endpoint.
    pub url: Option<String>,
    /// From settings; the environment is consulted when this is unset.
    pub api_key: Option<ApiKey>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WebSettings {
    /// Lets `web_fetch` reach loopback, private and link-local addresses.
    pub allow_private_networks: bool,
    pub fetch_timeout: Duration,
    pub fetch_max_bytes: usize,
    pub cache_ttl: Duration,
    pub search: Option<SearchSettings>,
}

impl Default for WebSettings {
    fn default() -> Self {
        Self {
            allow_private_networks: false,
            fetch_timeout: FETCH_TIMEOUT_DEFAULT,
            fetch_max_bytes: FETCH_MAX_BYTES_DEFAULT,
            cache_ttl: FETCH_CACHE_TTL_DEFAULT,
            search: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("settings.json: web{path}: {message}")]
pub struct WebSettingsError {
    /// `.search.provider`, empty for the section itself.
    path: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawWeb {
    #[serde(default)]
    allow_private_networks: bool,
    #[serde(default)]
    fetch: RawFetch,
    #[serde(default)]
    search: Option<RawSearch>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawFetch {
    timeout_seconds: Option<f64>,
    max_bytes: Option<usize>,
    cache_seconds: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSearch {
    provider: Option<ProviderKind>,
    url: Option<String>,
    api_key: Option<String>,
}

impl WebSettings {
    /// Reads `settings.other["web"]`; an absent section gives the defaults.
    pub fn from_settings(settings: &Settings) -> Result<Self, WebSettingsError> {
        let Some(value) = settings.other.get("web") else {
            return Ok(Self::default());
        };
        if value.is_null() {
            return Ok(Self::default());
        }
        let raw: RawWeb = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            WebSettingsError {
                path: if path == "." {
                    String::new()
                } else {
                    format!(".{path}")
                },
                message: e.into_inner().to_string(),
            }
        })?;
        let mut web = Self {
            allow_private_networks: raw.allow_private_networks,
            ..Self::default()
        };
        if let Some(secs) = raw.fetch.timeout_seconds {
            if !(secs.is_finite() && secs > 0.0 && secs <= 600.0) {
                return Err(WebSettingsError {
                    path: ".fetch.timeoutSeconds".into(),
                    message: format!("expected a number of seconds between 0 and 600 (got {secs})"),
                });
            }
            web.fetch_timeout = Duration::from_secs_f64(secs);
        }
        if let Some(bytes) = raw.fetch.max_bytes {
            if bytes == 0 {
                return Err(WebSettingsError {
                    path: ".fetch.maxBytes".into(),
                    message: "expected a positive number of bytes".into(),
                });
            }
            web.fetch_max_bytes = bytes;
        }
        if let Some(secs) = raw.fetch.cache_seconds {
            web.cache_ttl = Duration::from_secs(secs);
        }
        if let Some(search) = raw.search {
            web.search = search_settings(search)?;
        }
        Ok(web)
    }
}

fn search_settings(raw: RawSearch) -> Result<Option<SearchSettings>, WebSettingsError> {
    let Some(provider) = raw.provider else {
        if raw.url.is_some() || raw.api_key.is_some() {
            return Err(WebSettingsError {
                path: ".search.provider".into(),
                message: "missing: set it to \"searxng\", \"brave\" or \"tavily\"".into(),
            });
        }
        return Ok(None);
    };
    let url = raw.url.filter(|u| !u.trim().is_empty());
    if let Some(u) = &url {
        match reqwest::Url::parse(u) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
            Ok(parsed) => {
                return Err(WebSettingsError {
                    path: ".search.url".into(),
                    message: format!("expected an http(s) URL (got scheme {:?})", parsed.scheme()),
                });
            }
            Err(e) => {
                return Err(WebSettingsError {
                    path: ".search.url".into(),
                    message: format!("not a valid URL ({e}): {u:?}"),
                });
            }
        }
    }
    if provider == ProviderKind::Searxng && url.is_none() {
        return Err(WebSettingsError {
            path: ".search.url".into(),
            message:
                "missing: SearXNG needs the instance's address, e.g. \"http://localhost:8888\""
                    .into(),
        });
    }
    Ok(Some(SearchSettings {
        provider,
        url,
        api_key: raw.api_key.and_then(ApiKey::new),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_web(web: serde_json::Value) -> Settings {
        let mut s = Settings::default();
        s.other.insert("web".into(), web);
        s
    }

    #[test]
    fn absent_section_gives_defaults() {
        let web = WebSettings::from_settings(&Settings::default()).unwrap();
        assert_eq!(web, WebSettings::default());
        assert!(!web.allow_private_networks);
    }

    #[test]
    fn full_section_is_read() {
        let web = WebSettings::from_settings(&with_web(serde_json::json!({
            "allowPrivateNetworks": true,
            "fetch": {"timeoutSeconds": 2.5, "maxBytes": 1000, "cacheSeconds": 0},
            "search": {"provider": "brave", "apiKey": "secret-key"}
        })))
        .unwrap();
        assert!(web.allow_private_networks);
        assert_eq!(web.fetch_timeout, Duration::from_millis(2500));
        assert_eq!(web.fetch_max_bytes, 1000);
        assert_eq!(web.cache_ttl, Duration::ZERO);
        let search = web.search.unwrap();
        assert_eq!(search.provider, ProviderKind::Brave);
        assert_eq!(search.api_key.as_ref().unwrap().expose(), "secret-key");
        assert!(!format!("{search:?}").contains("secret-key"));
    }

    #[test]
    fn errors_name_the_key() {
        let e = WebSettings::from_settings(&with_web(serde_json::json!({
            "search": {"provider": "bing"}
        })))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("settings.json: web.search.provider: unknown variant `bing`"),
            "{e}"
        );
        let e = WebSettings::from_settings(&with_web(serde_json::json!({
            "allowPrivateNetwork": true
        })))
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `allowPrivateNetwork`"), "{e}");
        let e = WebSettings::from_settings(&with_web(serde_json::json!({
            "search": {"provider": "searxng"}
        })))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("settings.json: web.search.url: missing"),
            "{e}"
        );
    }
}
