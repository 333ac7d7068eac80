//! `allowedTools` / `disabledTools`: glob patterns (globset syntax, matched against the tool's own
//! name) that choose which of a server's tools become commands. A tool is exposed when it matches
//! an allowed pattern (or no allow list is given) and matches no disabled pattern.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// The compiled allow/deny lists of one server.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    allowed: Option<GlobSet>,
    disabled: Option<GlobSet>,
    patterns: (Vec<String>, Vec<String>),
}

impl PartialEq for ToolFilter {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl ToolFilter {
    /// Compiles both lists; an invalid glob is an error naming the pattern.
    pub fn new(allowed: &[String], disabled: &[String]) -> Result<ToolFilter, String> {
        Ok(ToolFilter {
            allowed: compile("allowedTools", allowed)?,
            disabled: compile("disabledTools", disabled)?,
            patterns: (allowed.to_vec(), disabled.to_vec()),
        })
    }

    /// True when `tool` should be exposed.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed.as_ref().is_none_or(|set| set.is_match(tool))
            && !self.disabled.as_ref().is_some_and(|set| set.is_match(tool))
    }
}

fn compile(key: &str, patterns: &[String]) -> Result<Option<GlobSet>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = Glob::new(p).map_err(|e| format!("{key}: invalid glob {p:?}: {e}"))?;
        builder.add(glob);
    }
    builder.build().map(Some).map_err(|e| format!("{key}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn allow_then_deny() {
        let f = ToolFilter::new(&s(&["read_*", "list_directory"]), &s(&["read_media*"])).unwrap();
        assert!(f.allows("read_text_file"));
        assert!(f.allows("list_directory"));
        assert!(!f.allows("read_media_file"));
        assert!(!f.allows("write_file"));
        assert!(ToolFilter::default().allows("anything"));
        assert!(
            ToolFilter::new(&s(&["[bad"]), &[])
                .unwrap_err()
                .contains("[bad")
        );
    }
}
