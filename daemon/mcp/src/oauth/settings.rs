//! The optional `oauth` object of a remote server's config entry, for authorization servers
//! without dynamic client registration or with fixed redirect ports:
//! `"oauth": {"clientId": "…", "clientSecret": "${SECRET}", "callbackPort": 8123, "scopes": ["a"]}`
//! (`${VAR}` expands in the strings; `scopes` may also be one space-separated string).

use serde_json::Value;

/// A server entry's OAuth client settings.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client registered by hand; dynamic registration is used when unset.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A fixed port for the loopback redirect (the one registered with `client_id`).
    pub callback_port: Option<u16>,
    /// Scopes to ask for instead of the server's.
    pub scopes: Option<String>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("callback_port", &self.callback_port)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Reads `oauth` of an entry; `expand` fills `${VAR}` (its first argument names the key).
pub fn parse(
    value: Option<&Value>,
    expand: &dyn Fn(&str, &str) -> Result<String, String>,
) -> Result<Option<OAuthSettings>, String> {
    let obj = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(obj)) => obj,
        Some(other) => return Err(format!("expected an object for \"oauth\" (got {other})")),
    };
    let string = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand(&format!("oauth.{key}"), s).map(Some),
            Some(other) => Err(format!("expected a string for oauth.{key} (got {other})")),
        }
    };
    for key in obj.keys() {
        if ![
            "clientId",
            "clientSecret",
            "callbackPort",
            "scopes",
            "scope",
        ]
        .contains(&key.as_str())
        {
            return Err(format!(
                "unknown key oauth.{key}: expected clientId, clientSecret, callbackPort or scopes"
            ));
        }
    }
    let callback_port = match obj.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64().and_then(|p| u16::try_from(p).ok()) {
            Some(p) if p > 0 => Some(p),
            _ => {
                return Err(format!(
                    "oauth.callbackPort must be a port 1-65535 (got {n})"
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "expected a port number for oauth.callbackPort (got {other})"
            ));
        }
    };
    let scopes = match obj.get("scopes").or_else(|| obj.get("scope")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(expand("oauth.scopes", s)?),
        Some(Value::Array(items)) => {
            let mut words = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => words.push(expand("oauth.scopes", s)?),
                    other => return Err(format!("expected strings in oauth.scopes (got {other})")),
                }
            }
            Some(words.join(" "))
        }
        Some(other) => {
            return Err(format!(
                "expected an array of strings for oauth.scopes (got {other})"
            ));
        }
    };
    Ok(Some(OAuthSettings {
        client_id: string("clientId")?.filter(|s| !s.is_empty()),
        client_secret: string("clientSecret")?.filter(|s| !s.is_empty()),
        callback_port,
        scopes: scopes.filter(|s| !s.trim().is_empty()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expand(_key: &str, s: &str) -> Result<String, String> {
        Ok(s.replace("${SECRET}", "s3cret"))
    }

    #[test]
    fn a_full_entry_reads_and_hides_its_secret() {
        let v = json!({"clientId": "abc", "clientSecret": "${SECRET}", "callbackPort": 8123,
                       "scopes": ["read", "write"]});
        let s = parse(Some(&v), &expand).unwrap().unwrap();
        assert_eq!(s.client_id.as_deref(), Some("abc"));
        assert_eq!(s.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(s.callback_port, Some(8123));
        assert_eq!(s.scopes.as_deref(), Some("read write"));
        assert!(!format!("{s:?}").contains("s3cret"));
    }

    #[test]
    fn wrong_shapes_are_named() {
        let bad = |v: Value| parse(Some(&v), &expand).unwrap_err();
        assert!(bad(json!("x")).contains("expected an object"));
        assert!(bad(json!({"callbackPort": 70000})).contains("1-65535"));
        assert!(bad(json!({"clientId": 3})).contains("oauth.clientId"));
        assert!(bad(json!({"clientID": "x"})).contains("unknown key oauth.clientID"));
        assert_eq!(parse(None, &expand).unwrap(), None);
    }
}
