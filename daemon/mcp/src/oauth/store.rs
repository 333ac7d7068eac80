//! Token files: `$SYNAPSE_HOME/mcp/oauth/<server>-<url hash>.json`, mode 0600 in a 0700 folder,
//! each rewritten atomically. The key holds a hash of the server's URL, so two projects' servers
//! of the same name never share tokens, and a changed URL starts without any. A file that does
//! not parse is reported, never rewritten behind the user's back (a new login replaces it).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::OAuthError;

/// Longest server-name part of a token file name.
const NAME_PART_MAX_CHARS: usize = 48;

/// How the client proves itself at the token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuth {
    /// A public client: `client_id` in the form.
    #[default]
    None,
    /// `client_id` and `client_secret` in the form.
    ClientSecretPost,
    /// HTTP Basic with the id and secret.
    ClientSecretBasic,
}

/// What a login leaves for one server: the tokens and what refreshing them needs.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredTokens {
    pub server: String,
    /// The MCP server URL the tokens were issued for (the bearer goes to its origin only).
    pub url: String,
    /// The RFC 8707 resource indicator sent with every grant.
    pub resource: String,
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub client_auth: ClientAuth,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix seconds when the access token was issued.
    pub obtained_at: f64,
    /// Unix seconds when it expires; unknown when the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// The token files of one Synapse home.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    pub fn new(dir: PathBuf) -> TokenStore {
        TokenStore { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<name>-<first 16 hex digits of SHA-256(url)>`, the name mapped to `[A-Za-z0-9_.-]`.
    pub fn key(server: &str, url: &str) -> String {
        let name: String = server
            .chars()
            .take(NAME_PART_MAX_CHARS)
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let digest = Sha256::digest(url.as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{}-{hash}", name.trim_start_matches('.'))
    }

    /// The file of `server` at `url`.
    pub fn path(&self, server: &str, url: &str) -> PathBuf {
        self.dir.join(format!("{}.json", Self::key(server, url)))
    }

    /// The stored tokens of `server` at `url`; `None` when there are none (or they were issued
    /// for another URL).
    pub fn load(&self, server: &str, url: &str) -> Result<Option<StoredTokens>, OAuthError> {
        let path = self.path(server, url);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(OAuthError::Store {
                    action: "read",
                    path,
                    reason: e.to_string(),
                });
            }
        };
        let tokens: StoredTokens =
            serde_json::from_str(&text).map_err(|e| OAuthError::Corrupt {
                path: path.clone(),
                reason: format!(
                    "line {}, column {}: {}",
                    e.line(),
                    e.column(),
                    strip_value(&e)
                ),
            })?;
        // The name holds only a hash: a file for another URL is not this server's.
        Ok((tokens.url == url).then_some(tokens))
    }

    /// Writes `tokens` (0600, atomically; the folder is created 0700).
    pub fn save(&self, tokens: &StoredTokens) -> Result<PathBuf, OAuthError> {
        let path = self.path(&tokens.server, &tokens.url);
        let fail = |action: &'static str, e: std::io::Error| OAuthError::Store {
            action,
            path: path.clone(),
            reason: e.to_string(),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| fail("create the folder of", e))?;
        // An older folder may be looser; the tokens' must not be.
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail("protect the folder of", e))?;
        let text = serde_json::to_string_pretty(tokens).map_err(|e| OAuthError::Store {
            action: "encode",
            path: path.clone(),
            reason: e.to_string(),
        })?;
        synapse_shared::atomic::write_atomic_mode(&path, text.as_bytes(), 0o600)
            .map_err(|e| fail("write", e))?;
        Ok(path)
    }

    /// Deletes the file of `server` at `url`; false when there was none.
    pub fn remove(&self, server: &str, url: &str) -> Result<bool, OAuthError> {
        let path = self.path(server, url);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(OAuthError::Store {
                action: "delete",
                path,
                reason: e.to_string(),
            }),
        }
    }
}

/// serde's message without any value it quotes (a token could be one).
fn strip_value(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = text.split(" at line ").next().unwrap_or_default();
    match text.find('`') {
        Some(i) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(server: &str, url: &str) -> StoredTokens {
        StoredTokens {
            server: server.into(),
            url: url.into(),
            resource: url.into(),
            issuer: "https://as.example.com".into(),
            token_endpoint: "https://as.example.com/token".into(),
            client_id: "c1".into(),
            client_secret: None,
            client_auth: ClientAuth::None,
            access_token: "AT-secret".into(),
            refresh_token: Some("RT-secret".into()),
            obtained_at: 1.0,
            expires_at: Some(3601.0),
            scope: None,
        }
    }

    #[test]
    fn keys_separate_urls_and_stay_file_names() {
        let a = TokenStore::key("docs", "https://a.example.com/mcp");
        let b = TokenStore::key("docs", "https://b.example.com/mcp");
        assert_ne!(a, b);
        assert!(
            a.starts_with("docs-") && a.len() == "docs-".len() + 16,
            "{a}"
        );
        let odd = TokenStore::key("../my server/x", "https://a.example.com/mcp");
        assert!(!odd.contains('/') && !odd.starts_with('.'), "{odd}");
    }

    #[test]
    fn saved_tokens_are_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path().join("oauth"));
        let t = tokens("docs", "https://a.example.com/mcp");
        let path = store.save(&t).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(
            store.load("docs", "https://a.example.com/mcp").unwrap(),
            Some(t.clone())
        );
        // Same name, other project's URL: nothing.
        assert_eq!(
            store.load("docs", "https://b.example.com/mcp").unwrap(),
            None
        );
        assert!(store.remove("docs", "https://a.example.com/mcp").unwrap());
        assert!(!store.remove("docs", "https://a.example.com/mcp").unwrap());
        assert_eq!(
            store.load("docs", "https://a.example.com/mcp").unwrap(),
            None
        );
    }

    #[test]
    fn a_corrupt_file_is_reported_without_its_content_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path().to_path_buf());
        let path = store.path("docs", "https://a.example.com/mcp");
        std::fs::write(&path, "{\"server\": \"docs\", \"accessToken\": 5}").unwrap();
        let e = store.load("docs", "https://a.example.com/mcp").unwrap_err();
        assert!(matches!(e, OAuthError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        assert!(path.exists());
    }

    #[test]
    fn debug_output_holds_no_token() {
        let t = tokens("docs", "https://a.example.com/mcp");
        let shown = format!("{t:?}");
        assert!(
            !shown.contains("AT-secret") && !shown.contains("RT-secret"),
            "{shown}"
        );
    }
}
