//! `synapse mcp login|logout <server>` for one manager's server: the entry is checked (a remote
//! server without its own `Authorization` header), the login runs ([`crate::oauth::login`]),
//! and the server is reconnected so it picks up (or drops) its tokens at once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::{McpManager, ServerStatus};
use crate::config::{ServerConfig, Transport};
use crate::oauth::OAuthError;
use crate::oauth::login::{self, LoginTarget};
use crate::server::{Server, StateKind};

/// What a login or logout did, in words, and the server's state afterwards.
#[derive(Debug, Clone)]
pub struct AuthOutcome {
    pub note: String,
    pub status: Option<ServerStatus>,
    /// For logout: whether there were tokens to forget.
    pub removed: bool,
}

impl McpManager {
    /// Logs in to `name` (`show` gets the URL for the browser), stores its tokens, reconnects it.
    pub async fn login(
        &self,
        name: &str,
        timeout: Duration,
        show: impl FnOnce(String) + Send,
    ) -> Result<AuthOutcome, OAuthError> {
        let Remote {
            server,
            config,
            url,
            headers,
        } = self.remote(name)?;
        if headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            return Err(OAuthError::StaticAuthorization {
                server: name.to_string(),
                config_file: config.source.clone(),
            });
        }
        let mut settings = config.oauth.clone().unwrap_or_default();
        if settings.client_secret.is_none() {
            // Given to `synapse mcp add --client-secret`: kept beside the tokens.
            settings.client_secret =
                crate::oauth::client_secret::load(self.inner.opts.oauth.store(), name, &url)?;
        }
        let target = LoginTarget {
            server: name.to_string(),
            url,
            headers,
            settings,
            source: config.source.clone(),
        };
        login::login(&self.inner.opts.oauth, &target, timeout, show).await?;
        tracing::info!(server = %name, "MCP OAuth login stored tokens");
        let connected = server.reconnect(&self.inner.events).await;
        self.sync_wrappers().await;
        let status = self.status_of(name);
        let note = match (&connected, &status) {
            (Ok(_), Some(s)) => format!(
                "Logged in to {name}: connected, {} tool{}.",
                s.tool_count,
                if s.tool_count == 1 { "" } else { "s" }
            ),
            (Ok(_), None) => format!("Logged in to {name}: connected."),
            (Err(reason), _) => format!("Logged in to {name}, but it did not connect: {reason}"),
        };
        Ok(AuthOutcome {
            note,
            status,
            removed: false,
        })
    }

    /// Forgets `name`'s tokens and reconnects it (it then needs login).
    pub async fn logout(&self, name: &str) -> Result<AuthOutcome, OAuthError> {
        let Remote {
            server,
            config,
            url,
            ..
        } = self.remote(name)?;
        let removed = self.inner.opts.oauth.forget(name, &url).await?;
        if removed {
            tracing::info!(server = %name, "MCP OAuth tokens deleted (logout)");
            if config.enabled {
                let _ = server.reconnect(&self.inner.events).await;
            }
        }
        let status = self.status_of(name);
        let note = match (removed, status.as_ref().map(|s| &s.state)) {
            (false, _) => format!("{name} had no OAuth tokens; nothing to log out of."),
            (true, Some(StateKind::NeedsLogin)) => {
                format!("Logged out of {name}: its tokens are deleted, and it needs login now.")
            }
            (true, _) => format!("Logged out of {name}: its tokens are deleted."),
        };
        Ok(AuthOutcome {
            note,
            status,
            removed,
        })
    }

    /// The configured remote server `name`.
    fn remote(&self, name: &str) -> Result<Remote, OAuthError> {
        let Some(server) = self.server(name) else {
            if let Some(held) = self.inner.held.read().get(name) {
                return Err(OAuthError::Unavailable {
                    server: name.to_string(),
                    reason: held.reason(),
                });
            }
            return Err(match self.inner.invalid.read().get(name) {
                Some(problem) => OAuthError::Unavailable {
                    server: name.to_string(),
                    reason: problem.to_string(),
                },
                None => OAuthError::UnknownServer(name.to_string()),
            });
        };
        let config = server.config();
        let Transport::Http { url, headers } = config.transport.clone() else {
            return Err(OAuthError::NotRemote {
                server: name.to_string(),
            });
        };
        Ok(Remote {
            server,
            config,
            url,
            headers,
        })
    }

    fn status_of(&self, name: &str) -> Option<ServerStatus> {
        self.list().into_iter().find(|s| s.name == name)
    }
}

/// A configured remote server and its entry.
struct Remote {
    server: Arc<Server>,
    config: ServerConfig,
    url: String,
    headers: BTreeMap<String, String>,
}
