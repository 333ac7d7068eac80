//! Web search providers: a SearXNG instance (its JSON API), Brave Search and Tavily, each
//! turned into the same list of [`SearchHit`]s. Which one, where and with which key comes from
//! [`ResolvedProvider::resolve`]: settings first, then the environment.
//!
//! Keys travel only in request headers, never in URLs, and any text a provider sends back is
//! scrubbed of the key before it reaches an error message.

use std::time::Duration;

use reqwest::{Client, Url, header};
use serde_json::Value;

use super::fetch::error_chain;
use super::settings::{ApiKey, ProviderKind, SearchSettings};

/// Default API endpoints of the commercial providers.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
pub const TAVILY_ENDPOINT: &str = "https://api.tavily.com/search";
/// How long one search may take (the command's own timeout may be shorter).
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);
/// Characters of a snippet shown.
const SNIPPET_MAX_CHARS: usize = 300;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// A provider ready to be asked: endpoint and key settled.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub kind: ProviderKind,
    pub endpoint: Url,
    pub key: Option<ApiKey>,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("no search provider is configured")]
    NotConfigured,
    #[error(
        "{provider} needs an API key: set \"web\": {{\"search\": {{\"apiKey\": \"…\"}}}} in \
         settings.json or the {var} environment variable"
    )]
    MissingKey {
        provider: &'static str,
        var: &'static str,
    },
    #[error("{provider}: invalid endpoint {url:?}: {message}")]
    Endpoint {
        provider: &'static str,
        url: String,
        message: String,
    },
    #[error("{provider}: {message}")]
    Request {
        provider: &'static str,
        message: String,
    },
    #[error("{provider} answered {status}: {body}")]
    Status {
        provider: &'static str,
        status: u16,
        body: String,
    },
    #[error("{provider}: unexpected answer: {message}")]
    Decode {
        provider: &'static str,
        message: String,
    },
}

impl ResolvedProvider {
    /// The provider from settings, else one whose key is in the environment. `env` looks a
    /// variable up (session environment, then settings.json `env`, then the daemon's).
    pub fn resolve(
        settings: Option<&SearchSettings>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SearchError> {
        let key_from_env =
            |kind: ProviderKind| kind.key_variable().and_then(env).and_then(ApiKey::new);
        let (kind, url, key) = match settings {
            Some(s) => (
                s.provider,
                s.url.clone(),
                s.api_key.clone().or_else(|| key_from_env(s.provider)),
            ),
            None => [ProviderKind::Brave, ProviderKind::Tavily]
                .into_iter()
                .find_map(|kind| key_from_env(kind).map(|key| (kind, None, Some(key))))
                .ok_or(SearchError::NotConfigured)?,
        };
        let endpoint_text = match (kind, url) {
            (ProviderKind::Searxng, Some(u)) => searxng_endpoint(&u),
            (ProviderKind::Searxng, None) => return Err(SearchError::NotConfigured),
            (_, Some(u)) => u,
            (ProviderKind::Brave, None) => BRAVE_ENDPOINT.to_string(),
            (ProviderKind::Tavily, None) => TAVILY_ENDPOINT.to_string(),
        };
        let endpoint = Url::parse(&endpoint_text).map_err(|e| SearchError::Endpoint {
            provider: kind.name(),
            url: endpoint_text.clone(),
            message: e.to_string(),
        })?;
        if let (Some(var), None) = (kind.key_variable(), &key) {
            return Err(SearchError::MissingKey {
                provider: kind.name(),
                var,
            });
        }
        Ok(Self {
            kind,
            endpoint,
            key,
        })
    }

    /// Asks the provider for up to `max` results.
    pub async fn search(
        &self,
        client: &Client,
        query: &str,
        max: usize,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let provider = self.kind.name();
        let key = self.key.as_ref().map(ApiKey::expose).unwrap_or("");
        let with_query = |pairs: &[(&str, &str)]| {
            let mut url = self.endpoint.clone();
            url.query_pairs_mut().extend_pairs(pairs);
            url
        };
        let request = match self.kind {
            ProviderKind::Searxng => client.get(with_query(&[("q", query), ("format", "json")])),
            ProviderKind::Brave => client
                .get(with_query(&[("q", query), ("count", &max.to_string())]))
                .header("X-Subscription-Token", key),
            ProviderKind::Tavily => {
                client
                    .post(self.endpoint.clone())
                    .bearer_auth(key)
                    .json(&serde_json::json!({
                        "query": query,
                        "max_results": max,
                        "search_depth": "basic",
                    }))
            }
        };
        let response = request
            .header(header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| SearchError::Request {
                provider,
                message: self.scrub(&error_chain(&e)),
            })?;
        let status = response.status();
        let body = response.text().await.map_err(|e| SearchError::Request {
            provider,
            message: self.scrub(&error_chain(&e)),
        })?;
        if !status.is_success() {
            let excerpt: String = body.chars().take(300).collect();
            return Err(SearchError::Status {
                provider,
                status: status.as_u16(),
                body: self.scrub(excerpt.trim()),
            });
        }
        let json: Value = serde_json::from_str(&body).map_err(|e| SearchError::Decode {
            provider,
            message: format!("not JSON ({e})"),
        })?;
        let (list, snippet_field) = match self.kind {
            ProviderKind::Searxng | ProviderKind::Tavily => (&json["results"], "content"),
            ProviderKind::Brave => (&json["web"]["results"], "description"),
        };
        let Some(items) = list.as_array() else {
            // Brave leaves `web` out when nothing matched.
            if self.kind == ProviderKind::Brave && json.get("web").is_none() {
                return Ok(Vec::new());
            }
            return Err(SearchError::Decode {
                provider,
                message: "no results list".into(),
            });
        };
        Ok(items
            .iter()
            .filter_map(|item| {
                let url = item["url"].as_str()?.trim().to_string();
                Some(SearchHit {
                    title: clean(item["title"].as_str().unwrap_or(&url), usize::MAX),
                    snippet: clean(
                        item[snippet_field].as_str().unwrap_or(""),
                        SNIPPET_MAX_CHARS,
                    ),
                    url,
                })
            })
            .take(max)
            .collect())
    }

    fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(k) => k.scrub(text),
            None => text.to_string(),
        }
    }
}

/// `http://host:8888` or `http://host:8888/` → `http://host:8888/search`.
fn searxng_endpoint(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.ends_with("/search") {
        base.to_string()
    } else {
        format!("{base}/search")
    }
}

/// Tags dropped, common entities decoded, whitespace collapsed, cut to `max` characters.
fn clean(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let decoded = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    let collapsed = decoded.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > max {
        let cut: String = collapsed.chars().take(max).collect();
        format!("{}…", cut.trim_end())
    } else {
        collapsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn provider_comes_from_settings_then_environment() {
        assert!(matches!(
            ResolvedProvider::resolve(None, &no_env),
            Err(SearchError::NotConfigured)
        ));
        let env = |k: &str| (k == "TAVILY_API_KEY").then(|| "tvly-1".to_string());
        let p = ResolvedProvider::resolve(None, &env).unwrap();
        assert_eq!(p.kind, ProviderKind::Tavily);
        assert_eq!(p.endpoint.as_str(), TAVILY_ENDPOINT);
        let brave = SearchSettings {
            provider: ProviderKind::Brave,
            url: None,
            api_key: None,
        };
        let e = ResolvedProvider::resolve(Some(&brave), &no_env).unwrap_err();
        assert!(e.to_string().contains("BRAVE_API_KEY"), "{e}");
        let searx = SearchSettings {
            provider: ProviderKind::Searxng,
            url: Some("http://127.0.0.1:8888/".into()),
            api_key: None,
        };
        let p = ResolvedProvider::resolve(Some(&searx), &no_env).unwrap();
        assert_eq!(p.endpoint.as_str(), "http://127.0.0.1:8888/search");
    }

    #[test]
    fn snippets_are_plain_text() {
        assert_eq!(
            clean(
                "The <strong>Rust</strong> &amp; \n  the book &quot;x&quot;",
                100
            ),
            "The Rust & the book \"x\""
        );
        assert_eq!(clean("abcdef", 3), "abc…");
    }

    #[test]
    fn keys_are_scrubbed_from_messages() {
        let p = ResolvedProvider {
            kind: ProviderKind::Brave,
            endpoint: Url::parse(BRAVE_ENDPOINT).unwrap(),
            key: ApiKey::new("sk-very-secret"),
        };
        assert_eq!(p.scrub("bad token sk-very-secret"), "bad token [redacted]");
        assert!(!format!("{p:?}").contains("sk-very-secret"));
    }
}
