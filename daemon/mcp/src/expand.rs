//! `${VAR}` and `${VAR:-default}` expansion in MCP config strings (command, args, env, cwd, url,
//! headers), the way Claude Code's `.mcp.json` does it. The variable lookup is a parameter so
//! tests never touch the process environment. `$$` is not special; a `$` that does not start a
//! `${…}` group stays as written.

/// Words of the [`ExpandError::Unset`] message, to tell it apart once it is text.
pub const UNSET_MARK: &str = "is not set (write ${";

/// A `${VAR}` without a default whose variable is unset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error(
        "environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
    )]
    Unset { name: String },
    #[error("unterminated ${{ in {text:?}")]
    Unterminated { text: String },
    #[error("invalid variable name {name:?} in {text:?}")]
    BadName { name: String, text: String },
}

/// Expands every `${…}` group in `text` using `lookup`.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| ExpandError::Unterminated {
            text: text.to_string(),
        })?;
        let group = &after[..end];
        let (name, default) = match group.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (group, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ExpandError::BadName {
                name: name.to_string(),
                text: text.to_string(),
            });
        }
        match (
            lookup(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(ExpandError::Unset {
                    name: name.to_string(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn plain_default_and_missing() {
        assert_eq!(expand("${HOME}/x", &env).unwrap(), "/home/u/x");
        assert_eq!(expand("a${NOPE:-dflt}b", &env).unwrap(), "adfltb");
        assert_eq!(expand("${NOPE:-}", &env).unwrap(), "");
        // Like the shell's `:-`, an empty value takes the default.
        assert_eq!(expand("${EMPTY:-d}", &env).unwrap(), "d");
        assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
        assert_eq!(
            expand("$HOME and $ alone", &env).unwrap(),
            "$HOME and $ alone"
        );
        assert_eq!(
            expand("${NOPE}", &env).unwrap_err(),
            ExpandError::Unset {
                name: "NOPE".into()
            }
        );
        assert!(
            expand("${NOPE}", &env)
                .unwrap_err()
                .to_string()
                .contains(UNSET_MARK)
        );
        assert!(matches!(
            expand("${HOME", &env),
            Err(ExpandError::Unterminated { .. })
        ));
        assert!(matches!(
            expand("${a b}", &env),
            Err(ExpandError::BadName { .. })
        ));
    }
}
