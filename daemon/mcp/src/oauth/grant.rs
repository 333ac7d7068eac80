//! The token endpoint: the authorization code exchanged with the PKCE verifier, and the
//! refresh_token grant; both send the RFC 8707 `resource`. Answers become a [`TokenAnswer`] or an
//! error naming the OAuth error code, never the body.

use serde_json::Value;
use url::Url;

use super::endpoint::{self, description, str_field};
use super::store::ClientAuth;
use super::urls::form_body;
use super::{OAuthError, now_unix};

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy)]
pub struct ClientCredentials<'a> {
    pub id: &'a str,
    pub secret: Option<&'a str>,
    pub auth: ClientAuth,
}

/// A successful token answer.
#[derive(Clone)]
pub struct TokenAnswer {
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Unix seconds when the access token expires, if the server said.
    pub expires_at: Option<f64>,
    pub obtained_at: f64,
    pub scope: Option<String>,
}

impl std::fmt::Debug for TokenAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAnswer")
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// `authorization_code` grant with the PKCE verifier.
pub async fn exchange_code(
    http: &reqwest::Client,
    token_endpoint: &Url,
    client: ClientCredentials<'_>,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
    resource: &str,
) -> Result<TokenAnswer, OAuthError> {
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("resource", resource),
    ];
    request(http, token_endpoint, client, &pairs, "authorization code").await
}

/// `refresh_token` grant.
pub async fn refresh(
    http: &reqwest::Client,
    token_endpoint: &Url,
    client: ClientCredentials<'_>,
    refresh_token: &str,
    resource: &str,
) -> Result<TokenAnswer, OAuthError> {
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("resource", resource),
    ];
    request(http, token_endpoint, client, &pairs, "refresh token").await
}

async fn request(
    http: &reqwest::Client,
    url: &Url,
    client: ClientCredentials<'_>,
    pairs: &[(&str, &str)],
    grant: &'static str,
) -> Result<TokenAnswer, OAuthError> {
    let mut all: Vec<(&str, &str)> = pairs.to_vec();
    let basic = match (client.auth, client.secret) {
        (ClientAuth::ClientSecretBasic, Some(secret)) => Some((client.id, secret)),
        (ClientAuth::ClientSecretPost, Some(secret)) => {
            all.push(("client_id", client.id));
            all.push(("client_secret", secret));
            None
        }
        _ => {
            all.push(("client_id", client.id));
            None
        }
    };
    let answer = endpoint::post_form(http, url, form_body(&all), basic).await?;
    if (200..300).contains(&answer.status) {
        return parse_answer(url, &answer.json);
    }
    match str_field(&answer.json, "error") {
        Some(error) => Err(OAuthError::TokenRefused {
            url: url.to_string(),
            grant,
            error: error.chars().take(80).collect(),
            description: description(&answer.json),
        }),
        None => Err(OAuthError::Status {
            url: url.to_string(),
            status: answer.status,
            detail: format!(" to the {grant}"),
        }),
    }
}

/// Reads a token answer (RFC 6749 §5.1): a bearer access token, its lifetime, and maybe a
/// refresh token and the granted scope.
pub fn parse_answer(url: &Url, doc: &Value) -> Result<TokenAnswer, OAuthError> {
    let bad = |reason: &str| OAuthError::BadToken {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let access_token = str_field(doc, "access_token").ok_or_else(|| bad("no access_token"))?;
    match str_field(doc, "token_type") {
        Some(t) if t.eq_ignore_ascii_case("bearer") => {}
        Some(_) => return Err(bad("token_type is not Bearer")),
        None => return Err(bad("no token_type")),
    }
    if access_token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(bad("the access token is not a header value"));
    }
    let lifetime = match doc.get("expires_in") {
        Some(Value::Number(n)) => n.as_f64(),
        // Some servers send it as a string.
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|s| s.is_finite() && *s > 0.0);
    let obtained_at = now_unix();
    Ok(TokenAnswer {
        access_token: access_token.to_string(),
        refresh_token: str_field(doc, "refresh_token").map(str::to_string),
        expires_at: lifetime.map(|s| obtained_at + s),
        obtained_at,
        scope: str_field(doc, "scope").map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url() -> Url {
        Url::parse("https://as.example.com/token").unwrap()
    }

    #[test]
    fn a_bearer_answer_is_read_with_its_lifetime() {
        let a = parse_answer(
            &url(),
            &json!({"access_token": "AT", "token_type": "bearer", "expires_in": "60",
                    "refresh_token": "RT", "scope": "mcp"}),
        )
        .unwrap();
        assert_eq!(a.access_token, "AT");
        assert_eq!(a.refresh_token.as_deref(), Some("RT"));
        let lifetime = a.expires_at.unwrap() - a.obtained_at;
        assert!((lifetime - 60.0).abs() < 0.01, "{lifetime}");
        let open = parse_answer(
            &url(),
            &json!({"access_token": "AT", "token_type": "Bearer"}),
        )
        .unwrap();
        assert_eq!(open.expires_at, None);
    }

    #[test]
    fn unusable_answers_are_refused_without_the_token() {
        for doc in [
            json!({"token_type": "Bearer"}),
            json!({"access_token": "SECRET-AT", "token_type": "mac"}),
            json!({"access_token": "SECRET-AT"}),
            json!({"access_token": "SECRET AT", "token_type": "Bearer"}),
        ] {
            let e = parse_answer(&url(), &doc).unwrap_err();
            assert!(matches!(e, OAuthError::BadToken { .. }), "{e}");
            assert!(!e.to_string().contains("SECRET"), "{e}");
        }
    }
}
