//! Dynamic client registration (RFC 7591): Synapse registers itself as a public client with the
//! login's loopback redirect URI, for the authorization code and refresh token grants. A server
//! that insists on a secret gets to choose how it is sent.

use serde_json::json;
use url::Url;

use super::OAuthError;
use super::endpoint::{self, description, str_field};
use super::store::ClientAuth;

/// The name an authorization server shows on its consent page.
pub const CLIENT_NAME: &str = "Synapse";

/// A registered client.
#[derive(Clone)]
pub struct Registered {
    pub client_id: String,
    pub client_secret: Option<String>,
    pub auth: ClientAuth,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("client_id", &self.client_id)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// Registers a client for `redirect_uri` at `endpoint`.
pub async fn register(
    http: &reqwest::Client,
    endpoint: &Url,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<Registered, OAuthError> {
    let mut doc = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(scope) = scope {
        doc["scope"] = json!(scope);
    }
    let answer = endpoint::post_json(http, endpoint, &doc).await?;
    let failed = |detail: String| OAuthError::Registration {
        url: endpoint.to_string(),
        detail,
    };
    if !(200..300).contains(&answer.status) {
        return Err(failed(match str_field(&answer.json, "error") {
            Some(e) => format!("{e}{}", description(&answer.json)),
            None => format!("HTTP {}", answer.status),
        }));
    }
    let client_id = str_field(&answer.json, "client_id")
        .ok_or_else(|| failed("the answer has no client_id".into()))?
        .to_string();
    let client_secret = str_field(&answer.json, "client_secret").map(str::to_string);
    let auth = match (
        client_secret.is_some(),
        str_field(&answer.json, "token_endpoint_auth_method"),
    ) {
        (false, _) | (true, Some("none")) => ClientAuth::None,
        (true, Some("client_secret_post")) => ClientAuth::ClientSecretPost,
        // RFC 7591 §2: client_secret_basic is the default.
        (true, _) => ClientAuth::ClientSecretBasic,
    };
    Ok(Registered {
        client_id,
        client_secret,
        auth,
    })
}
