use super::*;
use serde_json::json;

fn u(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn the_bearer_challenge_is_read_among_others() {
    let c = Challenge::parse(
        r#"Basic realm="x", Bearer error="invalid_token", resource_metadata="https://a.example.com/.well-known/oauth-protected-resource/mcp", scope="read write""#,
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://a.example.com/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(c.scope.as_deref(), Some("read write"));
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
}

#[test]
fn odd_challenges_do_not_confuse_the_parser() {
    assert_eq!(Challenge::parse(""), Challenge::default());
    assert_eq!(Challenge::parse("Bearer"), Challenge::default());
    let basic_only = Challenge::parse(r#"Basic resource_metadata="https://evil.example.com/""#);
    assert_eq!(basic_only.resource_metadata, None);
    let token = Challenge::parse(r#"bearer scope=mcp,error="a \"quoted\" word""#);
    assert_eq!(token.scope.as_deref(), Some("mcp"));
    assert_eq!(token.error.as_deref(), Some("a \"quoted\" word"));
    let unterminated = Challenge::parse(r#"Bearer scope="open"#);
    assert_eq!(unterminated.scope.as_deref(), Some("open"));
}

#[test]
fn a_resource_is_accepted_for_this_server_or_a_path_above_it() {
    let server = u("https://mcp.example.com/v1/mcp");
    let doc = u("https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp");
    assert!(check_resource(&server, "https://mcp.example.com/v1/mcp", &doc).is_ok());
    assert!(check_resource(&server, "https://mcp.example.com/", &doc).is_ok());
    assert!(check_resource(&server, "https://mcp.example.com/v1", &doc).is_ok());
    for other in [
        "https://evil.example.com/v1/mcp",
        "https://mcp.example.com/v2/mcp",
        "https://mcp.example.com/v1/mc",
        "http://mcp.example.com/v1/mcp",
        "not a url",
    ] {
        assert!(check_resource(&server, other, &doc).is_err(), "{other}");
    }
}

fn metadata(issuer: &str) -> serde_json::Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["plain", "S256"],
    })
}

#[test]
fn metadata_must_name_its_issuer_and_offer_s256() {
    let issuer = u("https://as.example.com");
    let doc_url = u("https://as.example.com/.well-known/oauth-authorization-server");
    let ok = read_metadata(&issuer, &doc_url, &metadata("https://as.example.com")).unwrap();
    assert_eq!(ok.token_endpoint.as_str(), "https://as.example.com/token");
    assert!(ok.registration_endpoint.is_some());

    let other = read_metadata(&issuer, &doc_url, &metadata("https://evil.example.com"));
    assert!(other.unwrap_err().to_string().contains("its issuer is"));

    let mut plain = metadata("https://as.example.com");
    plain["code_challenge_methods_supported"] = json!(["plain"]);
    let e = read_metadata(&issuer, &doc_url, &plain).unwrap_err();
    assert!(matches!(e, OAuthError::NoPkce { .. }), "{e}");
    let mut absent = metadata("https://as.example.com");
    absent
        .as_object_mut()
        .unwrap()
        .remove("code_challenge_methods_supported");
    assert!(matches!(
        read_metadata(&issuer, &doc_url, &absent),
        Err(OAuthError::NoPkce { .. })
    ));
}

#[test]
fn endpoints_in_clear_text_are_refused() {
    let issuer = u("https://as.example.com");
    let doc_url = u("https://as.example.com/.well-known/oauth-authorization-server");
    let mut doc = metadata("https://as.example.com");
    doc["token_endpoint"] = json!("http://as.example.com/token");
    let e = read_metadata(&issuer, &doc_url, &doc).unwrap_err();
    assert!(matches!(e, OAuthError::Insecure { .. }), "{e}");
}
