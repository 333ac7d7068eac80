//! OAuth client secrets given to `synapse mcp add --client-secret` (or as a literal
//! `oauth.clientSecret` to `add-json`): kept beside the server's tokens, as
//! `$SYNAPSE_HOME/mcp/oauth/<server>-<url hash>.secret` (0600 in the 0700 folder, written
//! atomically), never in a config file. A login uses it when the entry names no
//! `clientSecret` of its own.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;

use super::OAuthError;
use super::store::TokenStore;

fn path(store: &TokenStore, server: &str, url: &str) -> PathBuf {
    store
        .dir()
        .join(format!("{}.secret", TokenStore::key(server, url)))
}

/// Stores `secret` for `server` at `url`.
pub fn save(store: &TokenStore, server: &str, url: &str, secret: &str) -> Result<(), OAuthError> {
    let path = path(store, server, url);
    let fail = |action: &'static str, e: std::io::Error| OAuthError::Store {
        action,
        path: path.clone(),
        reason: e.to_string(),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(store.dir())
        .map_err(|e| fail("create the folder of", e))?;
    std::fs::set_permissions(store.dir(), std::fs::Permissions::from_mode(0o700))
        .map_err(|e| fail("protect the folder of", e))?;
    synapse_shared::atomic::write_atomic_mode(&path, secret.as_bytes(), 0o600)
        .map_err(|e| fail("write", e))
}

/// The stored secret of `server` at `url`, if any.
pub fn load(store: &TokenStore, server: &str, url: &str) -> Result<Option<String>, OAuthError> {
    let path = path(store, server, url);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text).filter(|t| !t.is_empty())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OAuthError::Store {
            action: "read",
            path,
            reason: e.to_string(),
        }),
    }
}

/// Deletes the stored secret of `server` at `url` (none is fine).
pub fn remove(store: &TokenStore, server: &str, url: &str) {
    let _ = std::fs::remove_file(path(store, server, url));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_secret_is_kept_owner_only_and_per_url() {
        let t = tempfile::tempdir().unwrap();
        let store = TokenStore::new(t.path().join("oauth"));
        save(&store, "docs", "https://a.test/mcp", "s3cret").unwrap();
        assert_eq!(
            load(&store, "docs", "https://a.test/mcp")
                .unwrap()
                .as_deref(),
            Some("s3cret")
        );
        assert_eq!(load(&store, "docs", "https://b.test/mcp").unwrap(), None);
        let meta = std::fs::metadata(path(&store, "docs", "https://a.test/mcp")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        remove(&store, "docs", "https://a.test/mcp");
        assert_eq!(load(&store, "docs", "https://a.test/mcp").unwrap(), None);
    }
}
