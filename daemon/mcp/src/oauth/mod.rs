//! OAuth 2.1 for remote (Streamable HTTP) MCP servers, as the MCP authorization spec describes
//! it, written on `reqwest` (rmcp's optional `auth` feature would bring the `oauth2` crate and
//! its own discovery rules; this keeps the fail-closed rules below in one small place).
//!
//! Login (`synapse mcp login <server>`, [`login::login`]): probe the server for its 401
//! challenge → [`discovery`] (protected resource metadata, RFC 9728, then authorization server
//! metadata, RFC 8414 / OpenID, else the server origin's own metadata) → a client id from dynamic
//! registration ([`register`], RFC 7591) or the entry's `oauth.clientId` → PKCE S256 and a state
//! ([`pkce`]) → the browser is sent to the authorization URL ([`urls`]) while [`callback`]
//! listens on `127.0.0.1` for the redirect and checks the state → the code is exchanged with the
//! verifier ([`grant`]), with the RFC 8707 `resource` on every request → tokens saved by
//! [`store`] (0600, atomic) and held live by the [`vault`].
//!
//! Use: every HTTP connection talks through [`http::McpHttpClient`], which puts the vault's
//! bearer on requests to the server's own origin only, refreshes it before it expires and once
//! after a 401, and notes an unanswerable 401 so the connection reports "needs login" instead of
//! a failure. An `Authorization` header in the server's config wins: no OAuth then.
//!
//! Trust: the daemon alone holds the verifier, the state and the tokens; authorization servers
//! are accepted over https only (http on loopback, for local servers and tests); tokens never go
//! to another origin, into a log, or into an error message.

pub mod callback;
pub mod client_secret;
pub mod discovery;
pub mod endpoint;
pub mod grant;
pub mod http;
pub mod login;
pub mod pkce;
pub mod register;
pub mod settings;
pub mod store;
pub mod urls;
pub mod vault;

use std::path::PathBuf;
use std::time::Duration;

pub use settings::OAuthSettings;
pub use vault::{OAuthVault, TokenSource};

/// How long a login waits for the browser's redirect unless the client asks otherwise.
pub const LOGIN_TIMEOUT_DEFAULT: Duration = Duration::from_secs(300);
/// Longest login wait a client may ask for.
pub const LOGIN_TIMEOUT_MAX: Duration = Duration::from_secs(3600);
/// Timeout of one request to a metadata, registration or token endpoint.
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest metadata or token document read from an endpoint.
pub const DOCUMENT_MAX_BYTES: usize = 256 * 1024;

/// What went wrong in a login, a refresh or the token files. Messages never hold a token.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthError {
    #[error("no MCP server named {0:?} here (see `synapse mcp list`)")]
    UnknownServer(String),
    #[error("MCP server {server} cannot log in now: {reason}")]
    Unavailable { server: String, reason: String },
    #[error("{server} is a stdio server: OAuth login is for remote (http) servers")]
    NotRemote { server: String },
    #[error(
        "{server} sends the Authorization header from its entry in {source}, which wins over \
         OAuth: remove that header to log in with OAuth",
        source = .config_file.display()
    )]
    StaticAuthorization {
        server: String,
        config_file: PathBuf,
    },
    #[error("refused {url}: {why}")]
    Insecure { url: String, why: String },
    #[error("cannot reach {url}: {reason}")]
    Http { url: String, reason: String },
    #[error("{url} answered HTTP {status}{detail}")]
    Status {
        url: String,
        status: u16,
        detail: String,
    },
    #[error("{url}: unusable {what}: {reason}")]
    Document {
        url: String,
        what: &'static str,
        reason: String,
    },
    #[error(
        "{server} publishes no OAuth metadata (tried {tried}); if it needs a token, put it in \
         the entry's \"headers\" as \"Authorization\": \"Bearer ${{TOKEN}}\""
    )]
    NotOffered { server: String, tried: String },
    #[error(
        "the authorization server {issuer} does not advertise PKCE with S256 \
         (code_challenge_methods_supported); Synapse does not log in without it"
    )]
    NoPkce { issuer: String },
    #[error(
        "the authorization server {issuer} offers no dynamic client registration: register a \
         client for Synapse there (redirect URI http://127.0.0.1:<port>/callback) and set \
         \"oauth\": {{\"clientId\": \"…\", \"callbackPort\": <port>}} in {server}'s entry in {source}",
        source = .config_file.display()
    )]
    NoClient {
        server: String,
        issuer: String,
        config_file: PathBuf,
    },
    #[error("the client registration at {url} failed: {detail}")]
    Registration { url: String, detail: String },
    #[error("cannot listen for the browser's redirect on 127.0.0.1:{port}: {reason}")]
    Listen { port: u16, reason: String },
    #[error(
        "the login was not completed within {secs} s; run `synapse mcp login {server}` again and \
         finish it in the browser"
    )]
    TimedOut { server: String, secs: u64 },
    #[error(
        "the browser's redirect carried a state that does not match this login (a stale or forged \
         redirect); nothing was stored; run `synapse mcp login {server}` again"
    )]
    StateMismatch { server: String },
    #[error("the authorization server refused the login: {error}{description}")]
    Denied { error: String, description: String },
    #[error("the token endpoint {url} refused the {grant}: {error}{description}")]
    TokenRefused {
        url: String,
        grant: &'static str,
        error: String,
        description: String,
    },
    #[error("the token endpoint {url} answered an unusable token: {reason}")]
    BadToken { url: String, reason: String },
    #[error("no refresh token was issued, and the access token has expired")]
    NoRefreshToken,
    #[error("the tokens were removed (`synapse mcp logout`)")]
    LoggedOut,
    #[error("cannot {action} {path}: {reason}", path = .path.display())]
    Store {
        action: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{path} is not a valid token file ({reason}); run `synapse mcp login` again", path = .path.display())]
    Corrupt { path: PathBuf, reason: String },
    #[error("cannot draw random bytes from the operating system: {0}")]
    Random(String),
    #[error("the login was cancelled")]
    Cancelled,
}

/// `synapse mcp login <server>`, with the name quoted for a shell when it needs it.
pub fn login_command(server: &str) -> String {
    let quoted = shlex::try_quote(server).map_or_else(|_| server.into(), |q| q.into_owned());
    format!("synapse mcp login {quoted}")
}

/// The reason shown for a server that needs login: the command to run, then why.
pub fn needs_login_reason(server: &str, why: &str) -> String {
    format!("run `{}` ({why})", login_command(server))
}

/// Seconds since the Unix epoch, as token files record times.
pub(crate) fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
