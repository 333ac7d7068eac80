//! One login, start to end (see the flow in [`super`]): everything secret — the PKCE verifier,
//! the state, the code and the tokens — stays in this function and the vault; the caller only
//! gets the authorization URL to show and, at the end, the token file's path.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use serde_json::json;
use url::Url;

use super::callback::CallbackListener;
use super::discovery::{self, Challenge};
use super::grant::{self, ClientCredentials};
use super::pkce::{Pkce, new_state};
use super::register::{self, Registered};
use super::store::{ClientAuth, StoredTokens};
use super::urls::{AuthorizationRequest, authorization_url, check_endpoint};
use super::{OAuthError, OAuthSettings, OAuthVault, endpoint};

/// A remote server to log in to, as configured.
#[derive(Debug, Clone)]
pub struct LoginTarget {
    pub server: String,
    pub url: String,
    /// The entry's other headers (an API gateway may want them on the first request too).
    pub headers: BTreeMap<String, String>,
    pub settings: OAuthSettings,
    /// The config file of the entry (named in advice).
    pub source: PathBuf,
}

/// Runs the login of `target`: `show` gets the authorization URL once it is ready; returns the
/// token file once the tokens are stored. Gives up after `timeout` without a redirect.
pub async fn login(
    vault: &OAuthVault,
    target: &LoginTarget,
    timeout: Duration,
    show: impl FnOnce(String) + Send,
) -> Result<PathBuf, OAuthError> {
    let server_url = check_endpoint(&target.url, "the MCP server's URL (tokens go there)")?;
    let http = endpoint::client()?;
    let challenge = probe(&http, &server_url, &target.headers).await?;
    let found = discovery::discover(&http, &target.server, &server_url, &challenge).await?;
    let scope = target.settings.scopes.clone().or(found.scope.clone());
    let listener = CallbackListener::bind(target.settings.callback_port).await?;
    let redirect = listener.redirect_uri();
    let client = match (
        &target.settings.client_id,
        &found.auth_server.registration_endpoint,
    ) {
        (Some(id), _) => {
            configured_client(id, &target.settings, &found.auth_server.token_auth_methods)
        }
        (None, Some(endpoint)) => {
            register::register(&http, endpoint, &redirect, scope.as_deref()).await?
        }
        (None, None) => {
            return Err(OAuthError::NoClient {
                server: target.server.clone(),
                issuer: found.auth_server.issuer.clone(),
                config_file: target.source.clone(),
            });
        }
    };
    let pkce = Pkce::new()?;
    let state = new_state()?;
    let url = authorization_url(
        &found.auth_server.authorization_endpoint,
        &AuthorizationRequest {
            client_id: &client.client_id,
            redirect_uri: &redirect,
            challenge: &pkce.challenge,
            state: &state,
            resource: &found.resource,
            scope: scope.as_deref(),
        },
    );
    tracing::info!(
        server = %target.server, issuer = %found.auth_server.issuer,
        "MCP OAuth login waiting for the browser's redirect"
    );
    show(url.to_string());
    let code = tokio::time::timeout(timeout, listener.wait(&target.server, &state))
        .await
        .map_err(|_| OAuthError::TimedOut {
            server: target.server.clone(),
            secs: timeout.as_secs(),
        })??;
    drop(listener);
    let credentials = ClientCredentials {
        id: &client.client_id,
        secret: client.client_secret.as_deref(),
        auth: client.auth,
    };
    let answer = grant::exchange_code(
        &http,
        &found.auth_server.token_endpoint,
        credentials,
        &code,
        &pkce.verifier,
        &redirect,
        &found.resource,
    )
    .await?;
    let tokens = StoredTokens {
        server: target.server.clone(),
        url: target.url.clone(),
        resource: found.resource.clone(),
        issuer: found.auth_server.issuer.clone(),
        token_endpoint: found.auth_server.token_endpoint.to_string(),
        client_id: client.client_id.clone(),
        client_secret: client.client_secret.clone(),
        client_auth: client.auth,
        access_token: answer.access_token,
        refresh_token: answer.refresh_token,
        obtained_at: answer.obtained_at,
        expires_at: answer.expires_at,
        scope: answer.scope.or(scope),
    };
    vault.install(tokens).await
}

/// A client registered by hand: a secret goes as the server prefers (Basic unless it lists only
/// the form).
fn configured_client(id: &str, settings: &OAuthSettings, methods: &[String]) -> Registered {
    let auth = match &settings.client_secret {
        None => ClientAuth::None,
        Some(_)
            if methods.iter().any(|m| m == "client_secret_post")
                && !methods.iter().any(|m| m == "client_secret_basic") =>
        {
            ClientAuth::ClientSecretPost
        }
        Some(_) => ClientAuth::ClientSecretBasic,
    };
    Registered {
        client_id: id.to_string(),
        client_secret: settings.client_secret.clone(),
        auth,
    }
}

/// Sends the MCP `initialize` without a token and reads the 401's challenge (none: the server
/// did not ask, or asked without one). Only the status line and headers are read: an open
/// server may answer with a stream.
async fn probe(
    http: &reqwest::Client,
    url: &Url,
    headers: &BTreeMap<String, String>,
) -> Result<Challenge, OAuthError> {
    let body = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "synapse", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let mut request = http
        .post(url.clone())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            request = request.header(n, v);
        }
    }
    let response = request.send().await.map_err(|e| OAuthError::Http {
        url: url.to_string(),
        reason: crate::error_words::in_words(&e, Some(url.as_str())),
    })?;
    if response.status().as_u16() != 401 {
        return Ok(Challenge::default());
    }
    Ok(response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(Challenge::parse)
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_secret_goes_the_way_the_server_prefers() {
        let settings = |secret: Option<&str>| OAuthSettings {
            client_id: Some("id".into()),
            client_secret: secret.map(str::to_string),
            ..OAuthSettings::default()
        };
        let post = vec!["client_secret_post".to_string()];
        let both = vec!["client_secret_post".into(), "client_secret_basic".into()];
        assert_eq!(
            configured_client("id", &settings(None), &post).auth,
            ClientAuth::None
        );
        assert_eq!(
            configured_client("id", &settings(Some("s")), &post).auth,
            ClientAuth::ClientSecretPost
        );
        assert_eq!(
            configured_client("id", &settings(Some("s")), &both).auth,
            ClientAuth::ClientSecretBasic
        );
        assert_eq!(
            configured_client("id", &settings(Some("s")), &[]).auth,
            ClientAuth::ClientSecretBasic
        );
    }
}
