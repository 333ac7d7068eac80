//! The URLs of a login and the rules they must pass: which endpoints are acceptable (https, or
//! http on loopback only), where the well-known metadata documents live (RFC 8414 §3.1, RFC 9728
//! §3.1, OpenID Discovery), the loopback redirect URI, and the authorization URL itself.

use std::net::IpAddr;

use url::{Host, Url};

use super::OAuthError;

/// Path of the loopback redirect.
pub const CALLBACK_PATH: &str = "/callback";

/// Parses `raw` and accepts it as `what` only over https, or over http to a loopback address
/// (`127.0.0.0/8`, `::1`, `localhost`): a token, a code or a client secret must never cross a
/// network in clear text.
pub fn check_endpoint(raw: &str, what: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(raw).map_err(|e| OAuthError::Insecure {
        url: raw.to_string(),
        why: format!("{what} is not a valid URL ({e})"),
    })?;
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(OAuthError::Insecure {
            url: raw.to_string(),
            why: format!("{what} must use https (plain http only on 127.0.0.1, ::1 or localhost)"),
        }),
        other => Err(OAuthError::Insecure {
            url: raw.to_string(),
            why: format!("{what} must be an https URL (got scheme {other:?})"),
        }),
    }
}

/// True for a loopback host.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// True when both URLs have the same scheme, host and port.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// `base`'s origin with `/.well-known/<suffix>` inserted before its path (the RFC 8414 / 9728
/// form), then the origin's own `/.well-known/<suffix>` when `base` has a path.
pub fn well_known(base: &Url, suffix: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut out = Vec::new();
    let mut push = |p: String| {
        let mut u = base.clone();
        u.set_path(&p);
        u.set_query(None);
        u.set_fragment(None);
        if !out.contains(&u) {
            out.push(u);
        }
    };
    if !path.is_empty() {
        push(format!("/.well-known/{suffix}{path}"));
    }
    push(format!("/.well-known/{suffix}"));
    out
}

/// Where an authorization server's metadata may be, in the order the MCP authorization spec
/// gives: RFC 8414 and OpenID Discovery with the issuer's path inserted after the origin, then
/// OpenID with it appended (for an issuer without a path: the two documents at the origin).
pub fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut u = issuer.clone();
        u.set_path(&p);
        u.set_query(None);
        u.set_fragment(None);
        u
    };
    let mut out = vec![
        at(format!("/.well-known/oauth-authorization-server{path}")),
        at(format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        out.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    out
}

/// The RFC 8707 resource indicator of an MCP server: its URL without fragment.
pub fn canonical_resource(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    u.to_string()
}

/// `http://127.0.0.1:<port>/callback`.
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}{CALLBACK_PATH}")
}

/// What goes into an authorization request.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub challenge: &'a str,
    pub state: &'a str,
    pub resource: &'a str,
    pub scope: Option<&'a str>,
}

/// The authorization endpoint with the request's parameters added to any it already has.
pub fn authorization_url(endpoint: &Url, r: &AuthorizationRequest<'_>) -> Url {
    let mut url = endpoint.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", r.client_id)
            .append_pair("redirect_uri", r.redirect_uri)
            .append_pair("code_challenge", r.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", r.state)
            .append_pair("resource", r.resource);
        if let Some(scope) = r.scope.filter(|s| !s.is_empty()) {
            q.append_pair("scope", scope);
        }
    }
    url
}

/// `application/x-www-form-urlencoded` body of `pairs`.
pub fn form_body(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_https_or_loopback_http_is_accepted() {
        assert!(check_endpoint("https://auth.example.com/token", "x").is_ok());
        assert!(check_endpoint("http://127.0.0.1:9/token", "x").is_ok());
        assert!(check_endpoint("http://127.8.0.1/token", "x").is_ok());
        assert!(check_endpoint("http://[::1]:9/token", "x").is_ok());
        assert!(check_endpoint("http://localhost:9/token", "x").is_ok());
        for bad in [
            "http://auth.example.com/token",
            "http://10.0.0.1/token",
            "http://localhost.evil.com/token",
            "ftp://auth.example.com/",
            "javascript:alert(1)",
            "not a url",
        ] {
            let e = check_endpoint(bad, "the token endpoint").unwrap_err();
            assert!(matches!(e, OAuthError::Insecure { .. }), "{bad}: {e}");
        }
        let e = check_endpoint("http://auth.example.com/t", "the token endpoint").unwrap_err();
        assert!(e.to_string().contains("must use https"), "{e}");
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert!(same_origin(
            &u("https://a.com/mcp"),
            &u("https://a.com:443/x")
        ));
        assert!(!same_origin(
            &u("https://a.com/mcp"),
            &u("http://a.com/mcp")
        ));
        assert!(!same_origin(
            &u("https://a.com/mcp"),
            &u("https://a.com:8443/mcp")
        ));
        assert!(!same_origin(
            &u("https://a.com/mcp"),
            &u("https://b.a.com/mcp")
        ));
    }

    #[test]
    fn well_known_documents_are_path_inserted_first() {
        let prm = well_known(
            &u("https://mcp.example.com/v1/mcp?x=1"),
            "oauth-protected-resource",
        );
        let got: Vec<String> = prm.iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            vec![
                "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root: Vec<String> = metadata_urls(&u("https://as.example.com/"))
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            root,
            vec![
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
        let tenant: Vec<String> = metadata_urls(&u("https://as.example.com/tenant1"))
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            tenant,
            vec![
                "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.example.com/.well-known/openid-configuration/tenant1",
                "https://as.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn the_authorization_url_carries_pkce_state_and_resource() {
        let url = authorization_url(
            &u("https://as.example.com/authorize?tenant=a"),
            &AuthorizationRequest {
                client_id: "client 1",
                redirect_uri: &redirect_uri(4711),
                challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                state: "st&te",
                resource: "https://mcp.example.com/mcp",
                scope: Some("read write"),
            },
        );
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("{k} missing in {url}"))
        };
        assert_eq!(get("tenant"), "a");
        assert_eq!(get("response_type"), "code");
        assert_eq!(get("client_id"), "client 1");
        assert_eq!(get("redirect_uri"), "http://127.0.0.1:4711/callback");
        assert_eq!(get("code_challenge_method"), "S256");
        assert_eq!(get("state"), "st&te");
        assert_eq!(get("resource"), "https://mcp.example.com/mcp");
        assert_eq!(get("scope"), "read write");
        assert!(
            url.as_str()
                .starts_with("https://as.example.com/authorize?")
        );
        assert!(!url.as_str().contains("st&te"), "state not encoded: {url}");
    }

    #[test]
    fn the_resource_drops_only_the_fragment() {
        assert_eq!(
            canonical_resource(&u("https://MCP.example.com/mcp?x=1#frag")),
            "https://mcp.example.com/mcp?x=1"
        );
    }

    #[test]
    fn form_bodies_are_encoded() {
        assert_eq!(
            form_body(&[("grant_type", "refresh_token"), ("x", "a b&c")]),
            "grant_type=refresh_token&x=a+b%26c"
        );
    }
}
