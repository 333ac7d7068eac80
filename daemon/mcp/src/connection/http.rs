//! The transport of a Streamable HTTP server: rmcp's, over [`McpHttpClient`] with the server's
//! OAuth tokens (none when the entry sets its own `Authorization` header, which wins), and the
//! entry's headers. [`Auth`] turns what the client learned about authorization into the
//! connection's error.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::ConnectionError;
use crate::oauth::http::{AuthRefusal, AuthWatch, McpHttpClient};
use crate::oauth::{OAuthError, OAuthVault};

/// What one HTTP connection knows about its authorization.
pub(super) struct Auth {
    server: String,
    watch: Arc<AuthWatch>,
}

impl Auth {
    /// The connection's error when its requests were refused for want of authorization.
    pub(super) fn refused(&self) -> Option<ConnectionError> {
        Some(match self.watch.refusal()? {
            AuthRefusal::NeedsLogin(why) => ConnectionError::NeedsLogin {
                server: self.server.clone(),
                why,
            },
            AuthRefusal::ConfiguredHeader(status) => ConnectionError::Unauthorized(format!(
                "the server refused the Authorization header of this entry's \"headers\" \
                 (HTTP {status}): check its value"
            )),
            AuthRefusal::RefreshFailed(why) => {
                ConnectionError::Unauthorized(format!("cannot refresh the OAuth token: {why}"))
            }
        })
    }
}

/// The transport of `server` at `url` with `headers`, carrying its OAuth tokens if it has any.
pub(super) async fn transport(
    server: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    vault: &OAuthVault,
) -> Result<(StreamableHttpClientTransport<McpHttpClient>, Auth), ConnectionError> {
    let configured = headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"));
    let tokens = if configured {
        None
    } else {
        match vault.source(server, url).await {
            Ok(tokens) => tokens,
            Err(e @ OAuthError::Corrupt { .. }) => {
                return Err(ConnectionError::NeedsLogin {
                    server: server.to_string(),
                    why: e.to_string(),
                });
            }
            Err(e) => return Err(ConnectionError::Unauthorized(e.to_string())),
        }
    };
    let client = McpHttpClient::new(tokens, configured)
        .map_err(|e| ConnectionError::Initialize(crate::error_words::in_words(&e, Some(url))))?;
    let auth = Auth {
        server: server.to_string(),
        watch: client.watch(),
    };
    let transport = StreamableHttpClientTransport::with_client(client, http_config(url, headers)?);
    Ok((transport, auth))
}

fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, ConnectionError> {
    let mut custom = HashMap::new();
    let mut auth = None;
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            // rmcp sends a bearer token itself (without the prefix); other schemes pass through.
            if let Some(token) = value.strip_prefix("Bearer ") {
                auth = Some(token.to_string());
                continue;
            }
        }
        let bad = |reason: String| ConnectionError::Header {
            name: name.clone(),
            reason,
        };
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(e.to_string()))?;
        let v = HeaderValue::from_str(value).map_err(|e| bad(e.to_string()))?;
        custom.insert(n, v);
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(Arc::<str>::from(url)).custom_headers(custom);
    if let Some(token) = auth {
        config = config.auth_header(token);
    }
    Ok(config)
}
