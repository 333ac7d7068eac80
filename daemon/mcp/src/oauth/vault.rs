//! The daemon's live OAuth tokens: one [`TokenSource`] per server key, shared by every manager
//! (the user's and each workspace's), read from its file on first use. A source hands out the
//! access token, refreshing it (one refresh at a time, the rotated refresh token saved) when it
//! is within a quarter of its lifetime (at most a minute) of expiring, or after the server
//! refused it. `logout` revokes the live source before deleting its file, so no refresh in flight
//! can write it back.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use url::Url;

use super::grant::{self, ClientCredentials};
use super::store::{StoredTokens, TokenStore};
use super::urls::check_endpoint;
use super::{OAuthError, endpoint, now_unix};

/// Longest time before expiry at which a token is refreshed.
const REFRESH_MARGIN_MAX_SECS: f64 = 60.0;

/// The live tokens of one server.
pub struct TokenSource {
    store: TokenStore,
    tokens: Mutex<StoredTokens>,
    url: Url,
    refresh_lock: tokio::sync::Mutex<()>,
    revoked: AtomicBool,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource")
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    fn new(store: TokenStore, tokens: StoredTokens) -> Result<TokenSource, OAuthError> {
        let url = Url::parse(&tokens.url).map_err(|e| OAuthError::Corrupt {
            path: store.path(&tokens.server, &tokens.url),
            reason: format!("url: {e}"),
        })?;
        Ok(TokenSource {
            store,
            tokens: Mutex::new(tokens),
            url,
            refresh_lock: tokio::sync::Mutex::new(()),
            revoked: AtomicBool::new(false),
        })
    }

    /// True when a request to `uri` may carry these tokens: the origin they were issued for.
    pub fn allows(&self, uri: &str) -> bool {
        Url::parse(uri).is_ok_and(|u| super::urls::same_origin(&u, &self.url))
    }

    /// The access token, refreshed first when it is about to expire.
    pub async fn access_token(&self) -> Result<String, OAuthError> {
        if self.revoked.load(Ordering::Acquire) {
            return Err(OAuthError::LoggedOut);
        }
        let (token, due) = {
            let t = self.tokens.lock();
            (t.access_token.clone(), refresh_due(&t, now_unix()))
        };
        if due {
            self.refresh_after(&token).await
        } else {
            Ok(token)
        }
    }

    /// Refreshes the tokens after `used` was refused or found due, unless someone else already
    /// did; returns the access token to use now.
    pub async fn refresh_after(&self, used: &str) -> Result<String, OAuthError> {
        let _one_at_a_time = self.refresh_lock.lock().await;
        if self.revoked.load(Ordering::Acquire) {
            return Err(OAuthError::LoggedOut);
        }
        let current = self.tokens.lock().clone();
        if current.access_token != used && !refresh_due(&current, now_unix()) {
            return Ok(current.access_token);
        }
        let refresh_token = current
            .refresh_token
            .clone()
            .ok_or(OAuthError::NoRefreshToken)?;
        let token_endpoint = check_endpoint(&current.token_endpoint, "the token endpoint")?;
        let http = endpoint::client()?;
        let client = ClientCredentials {
            id: &current.client_id,
            secret: current.client_secret.as_deref(),
            auth: current.client_auth,
        };
        let answer = grant::refresh(
            &http,
            &token_endpoint,
            client,
            &refresh_token,
            &current.resource,
        )
        .await?;
        let mut next = current.clone();
        next.access_token = answer.access_token;
        next.refresh_token = answer.refresh_token.or(current.refresh_token);
        next.obtained_at = answer.obtained_at;
        next.expires_at = answer.expires_at;
        next.scope = answer.scope.or(current.scope);
        let (store, copy) = (self.store.clone(), next.clone());
        tokio::task::spawn_blocking(move || store.save(&copy))
            .await
            .map_err(|e| OAuthError::Store {
                action: "save",
                path: self.store.path(&next.server, &next.url),
                reason: e.to_string(),
            })??;
        tracing::info!(server = %next.server, "MCP OAuth access token refreshed");
        let token = next.access_token.clone();
        *self.tokens.lock() = next;
        Ok(token)
    }
}

/// Whether `t` should be refreshed at `now` (unix seconds).
pub fn refresh_due(t: &StoredTokens, now: f64) -> bool {
    match t.expires_at {
        None => false,
        Some(expires) => {
            let lifetime = (expires - t.obtained_at).max(0.0);
            now >= expires - (lifetime / 4.0).min(REFRESH_MARGIN_MAX_SECS)
        }
    }
}

struct VaultInner {
    store: TokenStore,
    live: Mutex<HashMap<String, Arc<TokenSource>>>,
}

/// Every server's tokens. Cheap to clone; clones share the live sources.
#[derive(Clone)]
pub struct OAuthVault {
    inner: Arc<VaultInner>,
}

impl OAuthVault {
    /// The vault of the token files in `dir` (`$SYNAPSE_HOME/mcp/oauth`).
    pub fn new(dir: PathBuf) -> OAuthVault {
        OAuthVault {
            inner: Arc::new(VaultInner {
                store: TokenStore::new(dir),
                live: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub fn store(&self) -> &TokenStore {
        &self.inner.store
    }

    /// The tokens of `server` at `url`, if a login left any.
    pub async fn source(
        &self,
        server: &str,
        url: &str,
    ) -> Result<Option<Arc<TokenSource>>, OAuthError> {
        let key = TokenStore::key(server, url);
        if let Some(live) = self.inner.live.lock().get(&key) {
            return Ok(Some(live.clone()));
        }
        let (store, s, u) = (
            self.inner.store.clone(),
            server.to_string(),
            url.to_string(),
        );
        let loaded = tokio::task::spawn_blocking(move || store.load(&s, &u))
            .await
            .map_err(|e| OAuthError::Store {
                action: "read",
                path: self.inner.store.path(server, url),
                reason: e.to_string(),
            })??;
        let Some(tokens) = loaded else {
            return Ok(None);
        };
        let fresh = Arc::new(TokenSource::new(self.inner.store.clone(), tokens)?);
        let mut live = self.inner.live.lock();
        Ok(Some(live.entry(key).or_insert(fresh).clone()))
    }

    /// Saves a login's tokens and makes them the live ones; returns the file.
    pub async fn install(&self, tokens: StoredTokens) -> Result<PathBuf, OAuthError> {
        let key = TokenStore::key(&tokens.server, &tokens.url);
        let source = Arc::new(TokenSource::new(self.inner.store.clone(), tokens.clone())?);
        let store = self.inner.store.clone();
        let path = tokio::task::spawn_blocking(move || store.save(&tokens))
            .await
            .map_err(|e| OAuthError::Store {
                action: "save",
                path: self.inner.store.dir().to_path_buf(),
                reason: e.to_string(),
            })??;
        let old = self.inner.live.lock().insert(key, source);
        if let Some(old) = old {
            old.revoked.store(true, Ordering::Release);
        }
        Ok(path)
    }

    /// Forgets the tokens of `server` at `url` (`logout`); false when there were none.
    pub async fn forget(&self, server: &str, url: &str) -> Result<bool, OAuthError> {
        let key = TokenStore::key(server, url);
        let live = self.inner.live.lock().remove(&key);
        // A refresh in flight finishes (and saves) before the file goes.
        let _guard = match &live {
            Some(source) => {
                source.revoked.store(true, Ordering::Release);
                Some(source.refresh_lock.lock().await)
            }
            None => None,
        };
        let (store, s, u) = (
            self.inner.store.clone(),
            server.to_string(),
            url.to_string(),
        );
        tokio::task::spawn_blocking(move || store.remove(&s, &u))
            .await
            .map_err(|e| OAuthError::Store {
                action: "delete",
                path: self.inner.store.path(server, url),
                reason: e.to_string(),
            })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(obtained: f64, expires: Option<f64>) -> StoredTokens {
        StoredTokens {
            server: "s".into(),
            url: "https://mcp.example.com/mcp".into(),
            resource: "https://mcp.example.com/mcp".into(),
            issuer: "https://as.example.com".into(),
            token_endpoint: "https://as.example.com/token".into(),
            client_id: "c".into(),
            client_secret: None,
            client_auth: Default::default(),
            access_token: "AT".into(),
            refresh_token: None,
            obtained_at: obtained,
            expires_at: expires,
            scope: None,
        }
    }

    #[test]
    fn refresh_is_due_a_quarter_lifetime_or_a_minute_early() {
        let hour = tokens(0.0, Some(3600.0));
        assert!(!refresh_due(&hour, 3539.0));
        assert!(refresh_due(&hour, 3540.0));
        let short = tokens(0.0, Some(4.0));
        assert!(!refresh_due(&short, 2.9));
        assert!(refresh_due(&short, 3.0));
        assert!(!refresh_due(&tokens(0.0, None), 1e12));
    }

    #[tokio::test]
    async fn tokens_only_go_to_their_own_origin() {
        let dir = tempfile::tempdir().unwrap();
        let vault = OAuthVault::new(dir.path().join("oauth"));
        vault.install(tokens(now_unix(), None)).await.unwrap();
        let source = vault
            .source("s", "https://mcp.example.com/mcp")
            .await
            .unwrap()
            .unwrap();
        assert!(source.allows("https://mcp.example.com/mcp"));
        assert!(source.allows("https://mcp.example.com/other"));
        assert!(!source.allows("https://evil.example.com/mcp"));
        assert!(!source.allows("http://mcp.example.com/mcp"));
        assert!(!source.allows("https://mcp.example.com:8443/mcp"));
        assert_eq!(source.access_token().await.unwrap(), "AT");
    }

    #[tokio::test]
    async fn logout_revokes_the_live_source_and_deletes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let vault = OAuthVault::new(dir.path().join("oauth"));
        let path = vault.install(tokens(now_unix(), None)).await.unwrap();
        let source = vault
            .source("s", "https://mcp.example.com/mcp")
            .await
            .unwrap()
            .unwrap();
        assert!(
            vault
                .forget("s", "https://mcp.example.com/mcp")
                .await
                .unwrap()
        );
        assert!(!path.exists());
        assert!(matches!(
            source.access_token().await,
            Err(OAuthError::LoggedOut)
        ));
        assert!(
            vault
                .source("s", "https://mcp.example.com/mcp")
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            !vault
                .forget("s", "https://mcp.example.com/mcp")
                .await
                .unwrap()
        );
    }
}
