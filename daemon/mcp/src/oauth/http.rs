//! The HTTP client of every Streamable HTTP connection: rmcp's reqwest client with the server's
//! OAuth bearer put on each request (to the origin the tokens were issued for, and only when the
//! config sets no `Authorization` header of its own), refreshed before it expires and once more
//! after a 401 before the request is retried. A refusal that a refresh cannot answer is written
//! to the connection's [`AuthWatch`], which turns rmcp's transport error into "needs login".
//!
//! Redirects: like rmcp's own client, only same-origin 307/308 are followed, so neither a bearer
//! nor a custom header reaches another host.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::Sse;

use super::{OAuthError, TokenSource};

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// Most same-origin redirects followed for one request.
const REDIRECTS_MAX: usize = 10;

/// Why a connection's requests were refused, as far as authorization goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthRefusal {
    /// An OAuth login would help; says why it is needed.
    NeedsLogin(String),
    /// The server refused the `Authorization` header of the config (HTTP status).
    ConfiguredHeader(u16),
    /// The token could not be refreshed for a reason that may pass (network, server error).
    RefreshFailed(String),
}

/// What one connection learned about its authorization.
#[derive(Debug, Default)]
pub struct AuthWatch {
    refusal: Mutex<Option<AuthRefusal>>,
}

impl AuthWatch {
    pub fn refusal(&self) -> Option<AuthRefusal> {
        self.refusal.lock().clone()
    }

    fn note(&self, refusal: AuthRefusal) {
        tracing::debug!(?refusal, "MCP HTTP authorization refused");
        *self.refusal.lock() = Some(refusal);
    }

    /// A request went through: an earlier refusal no longer explains what fails next.
    fn passed(&self) {
        let mut refusal = self.refusal.lock();
        if refusal.is_some() {
            *refusal = None;
        }
    }
}

/// rmcp's HTTP client for one server, with its OAuth tokens.
#[derive(Clone)]
pub struct McpHttpClient {
    http: reqwest::Client,
    tokens: Option<Arc<TokenSource>>,
    /// The entry sets its own `Authorization` header (any scheme): a refusal is about it.
    configured_header: bool,
    watch: Arc<AuthWatch>,
}

impl McpHttpClient {
    /// A client sending `tokens`; `configured_header` when the entry has its own
    /// `Authorization` header (then `tokens` is None: the entry's header wins).
    pub fn new(
        tokens: Option<Arc<TokenSource>>,
        configured_header: bool,
    ) -> Result<McpHttpClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            // rmcp's choice: no idle pooling (Linux delayed-ACK stalls on reuse).
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()?;
        Ok(McpHttpClient {
            http,
            tokens: tokens.filter(|_| !configured_header),
            configured_header,
            watch: Arc::default(),
        })
    }

    pub fn watch(&self) -> Arc<AuthWatch> {
        self.watch.clone()
    }

    /// The bearer for a request to `uri`: the configured one, else the OAuth access token.
    async fn bearer(
        &self,
        uri: &str,
        configured: Option<String>,
    ) -> Result<Option<String>, HttpError> {
        if configured.is_some() {
            return Ok(configured);
        }
        let Some(tokens) = &self.tokens else {
            return Ok(None);
        };
        if !tokens.allows(uri) {
            tracing::warn!(
                "MCP OAuth: a request to another origin than the tokens' goes without them"
            );
            return Ok(None);
        }
        tokens
            .access_token()
            .await
            .map(Some)
            .map_err(|e| self.refresh_failed(e))
    }

    fn refresh_failed(&self, e: OAuthError) -> HttpError {
        let transient = matches!(
            e,
            OAuthError::Http { .. } | OAuthError::Status { .. } | OAuthError::Store { .. }
        );
        if transient {
            let why = e.to_string();
            self.watch.note(AuthRefusal::RefreshFailed(why.clone()));
            StreamableHttpError::UnexpectedServerResponse(
                format!("cannot refresh the OAuth token: {why}").into(),
            )
        } else {
            self.watch.note(AuthRefusal::NeedsLogin(format!(
                "the token could not be refreshed: {e}"
            )));
            StreamableHttpError::AuthRequired(AuthRequiredError::new(String::new()))
        }
    }

    /// Sends with the bearer; after a 401 with OAuth tokens, refreshes and sends once more.
    async fn send<T, F, Fut>(
        &self,
        uri: &str,
        configured: Option<String>,
        send: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let from_config = configured.is_some() || self.configured_header;
        let bearer = self.bearer(uri, configured).await?;
        let first = send(bearer.clone()).await;
        let Some(refused) = refusal(&first) else {
            if first.is_ok() {
                self.watch.passed();
            }
            return first;
        };
        if from_config {
            self.watch
                .note(AuthRefusal::ConfiguredHeader(refused.status));
            return first;
        }
        match (&self.tokens, &bearer) {
            (Some(tokens), Some(used)) if refused.status == 401 => {
                let fresh = tokens
                    .refresh_after(used)
                    .await
                    .map_err(|e| self.refresh_failed(e))?;
                let again = send(Some(fresh)).await;
                match refusal(&again) {
                    Some(still) => self.watch.note(AuthRefusal::NeedsLogin(
                        still.why("the server refused a fresh token"),
                    )),
                    None if again.is_ok() => self.watch.passed(),
                    None => {}
                }
                again
            }
            (_, Some(_)) => {
                self.watch.note(AuthRefusal::NeedsLogin(
                    refused.why("the server refused the token"),
                ));
                first
            }
            (_, None) => {
                self.watch.note(AuthRefusal::NeedsLogin(
                    refused.why("the server answered 401 Unauthorized"),
                ));
                first
            }
        }
    }
}

/// An authorization refusal in an answer.
struct Refused {
    status: u16,
    scope: Option<String>,
}

impl Refused {
    fn why(&self, for_401: &str) -> String {
        match (self.status, &self.scope) {
            (403, Some(scope)) => format!("the server wants more access: scope {scope}"),
            (403, None) => "the server wants more access (403 insufficient scope)".into(),
            _ => for_401.into(),
        }
    }
}

fn refusal<T>(result: &Result<T, HttpError>) -> Option<Refused> {
    match result {
        Err(StreamableHttpError::AuthRequired(_)) => Some(Refused {
            status: 401,
            scope: None,
        }),
        Err(StreamableHttpError::InsufficientScope(e)) => Some(Refused {
            status: 403,
            scope: e.get_required_scope().map(str::to_string),
        }),
        // A 401 without `WWW-Authenticate`: rmcp reports it by its status line (POST) or as
        // reqwest's status error (GET).
        Err(StreamableHttpError::UnexpectedServerResponse(text))
            if text.starts_with("HTTP 401 ") =>
        {
            Some(Refused {
                status: 401,
                scope: None,
            })
        }
        Err(StreamableHttpError::Client(e)) if e.status().is_some_and(|s| s.as_u16() == 401) => {
            Some(Refused {
                status: 401,
                scope: None,
            })
        }
        _ => None,
    }
}

/// Follows only 307/308 (which keep the body) within the first URL's origin.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same {
            attempt.stop()
        } else if attempt.previous().len() > REDIRECTS_MAX {
            attempt.error(format!("more than {REDIRECTS_MAX} redirects"))
        } else {
            attempt.follow()
        }
    })
}

impl StreamableHttpClient for McpHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(&uri, auth, |bearer| {
            self.http.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(&uri, auth, |bearer| {
            self.http.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        self.send(&uri, auth, |bearer| {
            self.http
                .delete_session(uri.clone(), session_id.clone(), bearer, headers.clone())
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.send(&uri, auth, |bearer| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                bearer,
                headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.send(&uri, auth, |bearer| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                bearer,
                headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
