//! The HTTP side of `web_fetch`: one GET with redirects followed by hand, so that every hop is
//! checked against the address policy ([`super::policy`]) before it is requested, and a body
//! read up to a byte cap. Binary responses are not downloaded at all: their type and declared
//! size are enough to refuse them.
//!
//! The caller bounds the whole fetch (DNS, connect, redirects, body) with its timeout and its
//! cancellation token; this module only knows bytes and hops.

use std::sync::OnceLock;

use reqwest::{Client, StatusCode, Url, header};

use super::policy::{self, GuardedResolver, PolicyError};
use super::render::{self, Kind};

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

const USER_AGENT: &str = concat!("synapse/", env!("CARGO_PKG_VERSION"), " (web_fetch)");
const ACCEPT: &str = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,\
                      application/json;q=0.9,*/*;q=0.5";

/// One redirect that was followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub status: u16,
    pub to: Url,
}

/// What came back for the final URL.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: Url,
    pub redirects: Vec<Hop>,
    pub status: StatusCode,
    pub content_type: Option<String>,
    /// `Content-Length`, when the server sent it.
    pub declared_len: Option<u64>,
    /// The body as received (decompressed), at most the byte cap; empty for refused binary.
    pub body: Vec<u8>,
    /// The body went on past the cap and was cut.
    pub cut: bool,
    /// The header said binary, so the body was never read.
    pub binary: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Policy(#[from] PolicyError),
    #[error("not a valid URL ({message}): {url}")]
    InvalidUrl { url: String, message: String },
    #[error("{from} redirected to an invalid address {location:?}")]
    BadRedirect { from: Url, location: String },
    #[error("more than {MAX_REDIRECTS} redirects, the last to {0}")]
    TooManyRedirects(Url),
    #[error("cannot fetch {url}: {message}")]
    Http { url: Url, message: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

/// Parses what the model wrote; a missing scheme means https, as browsers do.
pub fn parse_url(text: &str) -> Result<Url, FetchError> {
    let text = text.trim();
    let parsed = if text.contains("://") || has_scheme(text) {
        Url::parse(text)
    } else {
        Url::parse(&format!("https://{text}"))
    };
    parsed.map_err(|e| FetchError::InvalidUrl {
        url: text.to_string(),
        message: e.to_string(),
    })
}

/// `mailto:x`, `data:…`, `file:/x` have a scheme; `localhost:8080/x` (a port) does not.
fn has_scheme(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let valid = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid && !rest.starts_with(|c: char| c.is_ascii_digit())
}

/// The two HTTP clients (guarded and open), built once and reused for their connection pools.
#[derive(Default)]
pub struct WebClients {
    guarded: OnceLock<Client>,
    open: OnceLock<Client>,
}

impl WebClients {
    fn get(&self, allow_private: bool) -> Result<Client, FetchError> {
        let cell = if allow_private {
            &self.open
        } else {
            &self.guarded
        };
        if let Some(c) = cell.get() {
            return Ok(c.clone());
        }
        let mut builder = Client::builder()
            .user_agent(USER_AGENT)
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve names for us and so bypass the address policy.
            .no_proxy();
        if !allow_private {
            builder = builder.dns_resolver(GuardedResolver);
        }
        let client = builder
            .build()
            .map_err(|e| FetchError::Client(error_chain(&e)))?;
        Ok(cell.get_or_init(|| client).clone())
    }
}

/// Fetches `url`, following redirects, reading at most `max_bytes` of the body.
pub async fn fetch(
    clients: &WebClients,
    url: Url,
    allow_private: bool,
    max_bytes: usize,
) -> Result<Fetched, FetchError> {
    let client = clients.get(allow_private)?;
    let mut url = url;
    let mut redirects: Vec<Hop> = Vec::new();
    loop {
        policy::check_url(&url, allow_private).await?;
        let response = client
            .get(url.clone())
            .header(header::ACCEPT, ACCEPT)
            .send()
            .await
            .map_err(|e| FetchError::Http {
                url: url.clone(),
                message: error_chain(&e),
            })?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(header::LOCATION)
        {
            let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
            let next = url.join(&location).map_err(|_| FetchError::BadRedirect {
                from: url.clone(),
                location: location.clone(),
            })?;
            if redirects.len() >= MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects(next));
            }
            redirects.push(Hop {
                status: status.as_u16(),
                to: next.clone(),
            });
            url = next;
            continue;
        }
        return read_body(url, redirects, response, max_bytes).await;
    }
}

async fn read_body(
    url: Url,
    redirects: Vec<Hop>,
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Fetched, FetchError> {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
        .filter(|v| !v.is_empty());
    let declared_len = response.content_length();
    let mut fetched = Fetched {
        url,
        redirects,
        status: response.status(),
        content_type,
        declared_len,
        body: Vec::new(),
        cut: false,
        binary: false,
    };
    if render::kind_from_header(fetched.content_type.as_deref()) == Some(Kind::Binary) {
        fetched.binary = true;
        return Ok(fetched);
    }
    loop {
        let chunk = response.chunk().await.map_err(|e| FetchError::Http {
            url: fetched.url.clone(),
            message: error_chain(&e),
        })?;
        let Some(chunk) = chunk else { break };
        let room = max_bytes.saturating_sub(fetched.body.len());
        if chunk.len() > room {
            fetched.body.extend_from_slice(&chunk[..room]);
            fetched.cut = true;
            break;
        }
        fetched.body.extend_from_slice(&chunk);
    }
    Ok(fetched)
}

/// An error and its causes on one line: reqwest's own message hides the useful part.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
