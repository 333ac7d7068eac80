//! Whether the configured model server answers, for `synapse doctor`: one cheap request that
//! costs no tokens — `GET /v1/models` on Anthropic's API (with its key and version headers),
//! `GET <base>/models` on an OpenAI-compatible server — under a short deadline. The answer says
//! what happened (the HTTP status, or why no connection was made) and, when something is wrong,
//! what to change.

use std::time::Duration;

use serde_json::Value;

use super::anthropic::ANTHROPIC_VERSION;
use super::config::{ProviderConfig, ProviderKind, secret_header};

/// What the server said to the probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It answered 2xx. `missing_model`: an OpenAI-compatible server listed its models and the
    /// configured one is not among them (the names it listed, a few).
    Answered {
        /// The models-list URL that was asked.
        url: String,
        /// The HTTP status (2xx).
        status: u16,
        /// `Some(listed ids, at most 8)` when the configured model is not served; `None` when it
        /// is, when the list could not be read, or for Anthropic.
        missing_model: Option<Vec<String>>,
    },
    /// It answered, but does not serve the models list (404/405): reachable, the list unknown.
    NoModelsList {
        /// The models-list URL that was asked.
        url: String,
        /// The HTTP status (404 or 405).
        status: u16,
    },
    /// It refused the key (401/403).
    KeyRefused {
        /// The models-list URL that was asked.
        url: String,
        /// The HTTP status (401 or 403); 0 when the key could not even be put in a header.
        status: u16,
        /// The server's own words from the error body (at most 200 characters), or why the key
        /// cannot be sent.
        message: String,
    },
    /// Any other HTTP error.
    Failed {
        /// The models-list URL that was asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The server's own words from the error body (at most 200 characters).
        message: String,
    },
    /// No answer: no connection, TLS failure, or the deadline passed.
    Unreachable {
        /// The models-list URL that was asked.
        url: String,
        /// Why no answer came, in the deepest cause's words ("Connection refused (os error 111)").
        error: String,
    },
}

/// Asks the server of `config` for its models, giving up after `deadline`.
pub async fn probe(config: &ProviderConfig, deadline: Duration) -> Reach {
    let url = models_url(config);
    let client = match reqwest::Client::builder()
        .timeout(deadline)
        .connect_timeout(deadline)
        .user_agent(concat!("synapse/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            return Reach::Unreachable {
                url,
                error: e.to_string(),
            };
        }
    };
    let mut request = client.get(&url);
    if let Some(key) = &config.api_key {
        match (config.kind, secret_header(key, config.kind)) {
            (_, Err(e)) => {
                return Reach::KeyRefused {
                    url,
                    status: 0,
                    message: e.to_string(),
                };
            }
            (ProviderKind::Anthropic, Ok(value)) => request = request.header("x-api-key", value),
            (ProviderKind::OpenAi, Ok(value)) => {
                request = request.header(reqwest::header::AUTHORIZATION, value);
            }
        }
    }
    if config.kind == ProviderKind::Anthropic {
        request = request.header("anthropic-version", ANTHROPIC_VERSION);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return Reach::Unreachable {
                url,
                error: error_chain(&e),
            };
        }
    };
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    match status {
        200..=299 => Reach::Answered {
            missing_model: (config.kind == ProviderKind::OpenAi)
                .then(|| missing_model(&body, &config.model))
                .flatten(),
            url,
            status,
        },
        401 | 403 => Reach::KeyRefused {
            url,
            status,
            message: error_message(&body),
        },
        404 | 405 => Reach::NoModelsList { url, status },
        _ => Reach::Failed {
            url,
            status,
            message: error_message(&body),
        },
    }
}

/// The models list of the provider's API.
fn models_url(config: &ProviderConfig) -> String {
    match config.kind {
        ProviderKind::Anthropic => format!("{}/v1/models", config.base_url),
        ProviderKind::OpenAi => format!("{}/models", config.base_url),
    }
}

/// The listed model ids (a few) when `model` is not among them; `None` when it is, or when the
/// answer lists nothing readable.
fn missing_model(body: &str, model: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(body).ok()?;
    let ids: Vec<String> = value["data"]
        .as_array()?
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    (!ids.is_empty() && !ids.iter().any(|id| id == model))
        .then(|| ids.into_iter().take(8).collect())
}

/// The server's own words from an error body (`error.message`, `message`, or the start of it).
fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["message"].as_str())
            .or_else(|| v["error"].as_str())
            .map(str::to_string)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_string());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// Why a request got no answer, in the words of its deepest cause ("Connection refused (os
/// error 111)", "dns error: …"), which says more than reqwest's outer layers.
fn error_chain(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "no answer before the deadline".to_string();
    }
    let mut deepest = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        deepest = s.to_string();
        source = s.source();
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_missing_from_the_list_is_named_with_what_is_there() {
        let body = r#"{"data":[{"id":"a"},{"id":"b"}]}"#;
        assert_eq!(missing_model(body, "a"), None);
        assert_eq!(missing_model(body, "c"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(missing_model(r#"{"data":[]}"#, "c"), None);
        assert_eq!(missing_model("not json", "c"), None);
    }

    #[test]
    fn error_bodies_give_the_servers_words() {
        assert_eq!(
            error_message(r#"{"error":{"type":"x","message":"invalid x-api-key"}}"#),
            "invalid x-api-key"
        );
        assert_eq!(error_message("  Bad\n gateway "), "Bad gateway");
    }
}
