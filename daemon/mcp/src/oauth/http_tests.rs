use super::*;
use rmcp::transport::streamable_http_client::InsufficientScopeError;

fn status(result: Result<(), HttpError>) -> Option<u16> {
    refusal(&result).map(|r| r.status)
}

#[test]
fn a_401_is_recognised_with_and_without_a_challenge() {
    let challenged = AuthRequiredError::new("Bearer realm=\"x\"".into());
    assert_eq!(
        status(Err(StreamableHttpError::AuthRequired(challenged))),
        Some(401)
    );
    let bare = StreamableHttpError::UnexpectedServerResponse("HTTP 401 Unauthorized: ".into());
    assert_eq!(status(Err(bare)), Some(401));
    let server_error =
        StreamableHttpError::UnexpectedServerResponse("HTTP 500 Internal Server Error: x".into());
    assert_eq!(status(Err(server_error)), None);
    assert_eq!(status(Ok(())), None);
}

#[test]
fn insufficient_scope_names_the_scope() {
    let e = InsufficientScopeError::new("Bearer scope=\"admin\"".into(), Some("admin".into()));
    let result: Result<(), HttpError> = Err(StreamableHttpError::InsufficientScope(e));
    let refused = refusal(&result).unwrap();
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.why("unused"),
        "the server wants more access: scope admin"
    );
}
