//! Finding a server's authorization server: the 401's `WWW-Authenticate` challenge
//! ([`Challenge`]) may name the protected resource metadata (RFC 9728); otherwise its well-known
//! URLs are tried. Its first `authorization_servers` entry (or, without any metadata, the server's
//! own origin, as the 2025-03-26 spec had it) is looked up per RFC 8414 / OpenID Discovery. Every
//! URL met must pass [`check_endpoint`]; the metadata must name the issuer it was fetched for
//! and offer PKCE with S256.

use serde_json::Value;
use url::Url;

use super::OAuthError;
use super::endpoint::{get_document, str_field, str_list};
use super::urls::{canonical_resource, check_endpoint, metadata_urls, same_origin, well_known};

/// The parts of a `WWW-Authenticate: Bearer …` challenge a login uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Reads the `Bearer` challenge's parameters from a header value that may hold several
    /// challenges (`Basic realm="a", Bearer resource_metadata="…", scope="x y"`).
    pub fn parse(header: &str) -> Challenge {
        let mut out = Challenge::default();
        let mut in_bearer = false;
        let mut rest = header.trim();
        while !rest.is_empty() {
            rest = rest.trim_start_matches([',', ' ', '\t']);
            let name_end = rest.find(['=', ',', ' ', '\t']).unwrap_or(rest.len());
            let name = &rest[..name_end];
            let after = rest[name_end..].trim_start_matches([' ', '\t']);
            if !after.starts_with('=') {
                // A bare word starts a new challenge: its scheme.
                in_bearer = name.eq_ignore_ascii_case("bearer");
                rest = after;
                continue;
            }
            let (value, tail) = param_value(after[1..].trim_start_matches([' ', '\t']));
            if in_bearer {
                let slot = match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut out.resource_metadata),
                    "scope" => Some(&mut out.scope),
                    "error" => Some(&mut out.error),
                    _ => None,
                };
                if let Some(slot) = slot {
                    *slot = Some(value).filter(|v| !v.is_empty());
                }
            }
            rest = tail;
        }
        out
    }
}

/// A token or a quoted string (with `\` escapes), and what follows it.
fn param_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(n);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = s.find([',', ' ', '\t']).unwrap_or(s.len());
        (s[..end].to_string(), &s[end..])
    }
}

/// An authorization server's endpoints, each checked.
#[derive(Debug, Clone)]
pub struct AuthServer {
    pub issuer: String,
    pub authorization_endpoint: Url,
    pub token_endpoint: Url,
    pub registration_endpoint: Option<Url>,
    pub token_auth_methods: Vec<String>,
}

/// What a login needs to know about a server.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The RFC 8707 resource indicator.
    pub resource: String,
    pub auth_server: AuthServer,
    /// The scopes to ask for: the challenge's, else the resource's `scopes_supported`.
    pub scope: Option<String>,
}

/// Discovers the authorization server of `server` at `server_url`.
pub async fn discover(
    http: &reqwest::Client,
    server: &str,
    server_url: &Url,
    challenge: &Challenge,
) -> Result<Discovery, OAuthError> {
    let mut tried: Vec<String> = Vec::new();
    let prm_urls = match &challenge.resource_metadata {
        Some(u) => vec![check_endpoint(u, "the resource metadata URL")?],
        None => well_known(server_url, "oauth-protected-resource"),
    };
    let mut prm = None;
    for u in prm_urls {
        tried.push(u.to_string());
        if let Some(doc) = get_document(http, &u, "protected resource metadata").await? {
            prm = Some((u, doc));
            break;
        }
    }
    let (issuer_url, resource, resource_scopes) = match prm {
        Some((u, doc)) => {
            let resource = match str_field(&doc, "resource") {
                Some(r) => check_resource(server_url, r, &u)?,
                None => canonical_resource(server_url),
            };
            let Some(first) = str_list(&doc, "authorization_servers").into_iter().next() else {
                return Err(OAuthError::Document {
                    url: u.to_string(),
                    what: "protected resource metadata",
                    reason: "it lists no authorization_servers".into(),
                });
            };
            let issuer = check_endpoint(&first, "the authorization server")?;
            (issuer, resource, str_list(&doc, "scopes_supported"))
        }
        None => {
            let mut origin = server_url.clone();
            origin.set_path("/");
            origin.set_query(None);
            origin.set_fragment(None);
            (origin, canonical_resource(server_url), Vec::new())
        }
    };
    // A document that is not this issuer's (wrong issuer, no PKCE) does not end the search,
    // but is the answer when nothing else fits.
    let mut unusable = None;
    let mut found = None;
    for u in metadata_urls(&issuer_url) {
        tried.push(u.to_string());
        if let Some(doc) = get_document(http, &u, "authorization server metadata").await? {
            match read_metadata(&issuer_url, &u, &doc) {
                Ok(server) => {
                    found = Some(server);
                    break;
                }
                Err(e) => {
                    unusable.get_or_insert(e);
                }
            }
        }
    }
    let auth_server = match (found, unusable) {
        (Some(server), _) => server,
        (None, Some(e)) => return Err(e),
        (None, None) => {
            return Err(OAuthError::NotOffered {
                server: server.to_string(),
                tried: tried.join(", "),
            });
        }
    };
    let scope = challenge
        .scope
        .clone()
        .or_else(|| (!resource_scopes.is_empty()).then(|| resource_scopes.join(" ")));
    Ok(Discovery {
        resource,
        auth_server,
        scope,
    })
}

/// The resource a metadata document names, accepted when it is this server or a path above it
/// on the same origin.
pub fn check_resource(server_url: &Url, named: &str, doc_url: &Url) -> Result<String, OAuthError> {
    let mismatch = || OAuthError::Document {
        url: doc_url.to_string(),
        what: "protected resource metadata",
        reason: format!("it is for {named}, not for {server_url}"),
    };
    let resource = Url::parse(named).map_err(|_| mismatch())?;
    let base = resource.path().trim_end_matches('/');
    let path = server_url.path();
    let under = path == base || path.starts_with(&format!("{base}/")) || base.is_empty();
    if same_origin(&resource, server_url) && under {
        Ok(named.to_string())
    } else {
        Err(mismatch())
    }
}

/// Checks and reads an authorization server's metadata fetched from `doc_url` for `issuer`.
pub fn read_metadata(issuer: &Url, doc_url: &Url, doc: &Value) -> Result<AuthServer, OAuthError> {
    let bad = |reason: String| OAuthError::Document {
        url: doc_url.to_string(),
        what: "authorization server metadata",
        reason,
    };
    let expected = issuer.as_str().trim_end_matches('/');
    let named = str_field(doc, "issuer").unwrap_or(expected);
    if named.trim_end_matches('/') != expected {
        return Err(bad(format!("its issuer is {named}, not {expected}")));
    }
    let endpoint = |key: &str, what: &str| -> Result<Option<Url>, OAuthError> {
        str_field(doc, key)
            .map(|u| check_endpoint(u, what))
            .transpose()
    };
    let authorization_endpoint = endpoint("authorization_endpoint", "the authorization endpoint")?
        .ok_or_else(|| bad("no authorization_endpoint".into()))?;
    let token_endpoint = endpoint("token_endpoint", "the token endpoint")?
        .ok_or_else(|| bad("no token_endpoint".into()))?;
    let registration_endpoint = endpoint("registration_endpoint", "the registration endpoint")?;
    // The MCP authorization spec: without S256 in code_challenge_methods_supported, refuse.
    if !str_list(doc, "code_challenge_methods_supported")
        .iter()
        .any(|m| m == "S256")
    {
        return Err(OAuthError::NoPkce {
            issuer: named.to_string(),
        });
    }
    let types = str_list(doc, "response_types_supported");
    if !types.is_empty() && !types.iter().any(|t| t == "code") {
        return Err(bad("it does not offer the authorization code flow".into()));
    }
    Ok(AuthServer {
        issuer: named.to_string(),
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        token_auth_methods: str_list(doc, "token_endpoint_auth_methods_supported"),
    })
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
