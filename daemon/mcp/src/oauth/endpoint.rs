//! HTTP to authorization servers: one client that follows no redirects (a code, a secret or a
//! token is never re-sent somewhere the server points to) with a timeout, and bounded reads of
//! JSON documents. Response bodies are never quoted in errors: a token endpoint's body holds
//! tokens.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use url::Url;

use super::{DOCUMENT_MAX_BYTES, ENDPOINT_TIMEOUT, OAuthError};

/// The client for metadata, registration and token requests.
pub fn client() -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(ENDPOINT_TIMEOUT)
        .user_agent(concat!("synapse/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| OAuthError::Http {
            url: String::new(),
            reason: crate::error_words::in_words(&e, None),
        })
}

/// An answer: its status and its body parsed as JSON (`Null` when empty or not JSON).
pub struct Answer {
    pub status: u16,
    pub json: Value,
    pub www_authenticate: Option<String>,
}

fn http_error(url: &Url, e: &reqwest::Error) -> OAuthError {
    OAuthError::Http {
        url: url.to_string(),
        reason: crate::error_words::in_words(e, Some(url.as_str())),
    }
}

/// Sends `request` and reads at most [`DOCUMENT_MAX_BYTES`] of its answer.
pub async fn send(url: &Url, request: reqwest::RequestBuilder) -> Result<Answer, OAuthError> {
    let mut response = request
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| http_error(url, &e))?;
    let status = response.status().as_u16();
    let www_authenticate = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() + chunk.len() > DOCUMENT_MAX_BYTES {
            return Err(OAuthError::Document {
                url: url.to_string(),
                what: "answer",
                reason: format!("larger than {DOCUMENT_MAX_BYTES} bytes"),
            });
        }
        body.extend_from_slice(&chunk);
    }
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(Answer {
        status,
        json,
        www_authenticate,
    })
}

/// GETs a metadata document: `Ok(None)` when the server has none there (4xx).
pub async fn get_document(
    http: &reqwest::Client,
    url: &Url,
    what: &'static str,
) -> Result<Option<Value>, OAuthError> {
    let answer = send(url, http.get(url.clone())).await?;
    match answer.status {
        200..=299 if answer.json.is_object() => Ok(Some(answer.json)),
        200..=299 => Err(OAuthError::Document {
            url: url.to_string(),
            what,
            reason: "not a JSON object".into(),
        }),
        400..=499 => Ok(None),
        status => Err(OAuthError::Status {
            url: url.to_string(),
            status,
            detail: String::new(),
        }),
    }
}

/// POSTs a form body.
pub async fn post_form(
    http: &reqwest::Client,
    url: &Url,
    body: String,
    basic: Option<(&str, &str)>,
) -> Result<Answer, OAuthError> {
    let mut request = http
        .post(url.clone())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: both parts form-encoded before Basic.
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(enc(id), Some(enc(secret)));
    }
    send(url, request).await
}

/// POSTs a JSON document.
pub async fn post_json(
    http: &reqwest::Client,
    url: &Url,
    doc: &Value,
) -> Result<Answer, OAuthError> {
    let body = serde_json::to_vec(doc).map_err(|e| OAuthError::Document {
        url: url.to_string(),
        what: "request",
        reason: e.to_string(),
    })?;
    let request = http
        .post(url.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(body);
    send(url, request).await
}

/// A string field of a JSON object.
pub fn str_field<'a>(doc: &'a Value, key: &str) -> Option<&'a str> {
    doc.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A string-array field of a JSON object (missing: empty).
pub fn str_list(doc: &Value, key: &str) -> Vec<String> {
    doc.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `: <error_description>` of an OAuth error answer, bounded and on one line.
pub fn description(doc: &Value) -> String {
    match str_field(doc, "error_description") {
        Some(d) => {
            let line: String = d.chars().filter(|c| !c.is_control()).take(300).collect();
            format!(" ({line})")
        }
        None => String::new(),
    }
}
