//! Claude Code plugins, managed on Claude Code's own records so both programs see one set:
//! `synapse plugin list|install|enable|disable|update` and `synapse plugin marketplace add`
//! (the `Plugins` service, `daemon/src/server/plugins.rs`, calls in here).
//!
//! Which plugins are installed and enabled, and where their files are, is read by
//! [`synapse_shared::claude_plugins`] — the one reader every user of a plugin shares (skills,
//! hooks, commands and agents, MCP servers). This room writes: [`records`] rewrites the JSON
//! records without clobbering a concurrent Claude Code, [`manage`] adds marketplaces (a local
//! folder, or a git URL cloned with `git`) and installs, updates, enables and disables plugins,
//! copying a plugin into `cache/<marketplace>/<plugin>/<version>` as `claude plugin install` does.
//! [`offers`] says what an installed plugin brings (for `synapse plugin list`); [`project`] says
//! which project settings may turn plugins on or off (a trusted folder's, as pinned).

pub mod manage;
pub mod offers;
pub mod project;
pub mod records;

use std::path::{Path, PathBuf};

/// What went wrong with a plugin operation; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Record(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("git: {0}")]
    Git(String),
}

impl PluginError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// `<plugin>@<marketplace>` → its parts.
pub fn split_key(key: &str) -> Result<(&str, &str), PluginError> {
    match key.rsplit_once('@') {
        Some((p, m)) if valid_part(p) && valid_part(m) => Ok((p, m)),
        _ => Err(PluginError::Usage(format!(
            "`{key}` is not <plugin>@<marketplace> (e.g. commit-commands@claude-code-plugins); \
             `synapse plugin list` shows the installed ones"
        ))),
    }
}

/// A plugin or marketplace name: it becomes a folder name.
pub fn valid_part(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_plugin_at_marketplace() {
        assert_eq!(split_key("demo@mk").unwrap(), ("demo", "mk"));
        assert!(split_key("demo").is_err());
        assert!(split_key("../x@mk").is_err());
        assert!(split_key("a@..").is_err());
    }
}
