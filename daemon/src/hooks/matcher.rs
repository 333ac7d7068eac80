//! A hook's `matcher`, read as Claude Code reads it: empty or `*` matches everything; a plain
//! name (letters, digits, `_`, `|`) is an exact name or a `|` list of them (`Write|Edit`);
//! anything else is a regular expression searched in the name (`mcp__memory__.*`, `Notebook.*`).

#[derive(Debug, Clone)]
pub struct Matcher {
    raw: String,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl Matcher {
    pub fn new(raw: &str) -> Result<Self, regex::Error> {
        let trimmed = raw.trim();
        let kind = if trimmed.is_empty() || trimmed == "*" {
            Kind::All
        } else if trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            Kind::Names(
                trimmed
                    .split('|')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            )
        } else {
            Kind::Regex(regex::Regex::new(trimmed)?)
        };
        Ok(Self {
            raw: raw.to_string(),
            kind,
        })
    }

    /// The matcher as written (`""` for all).
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    pub fn matches(&self, name: &str) -> bool {
        match &self.kind {
            Kind::All => true,
            Kind::Names(names) => names.iter().any(|n| n == name),
            Kind::Regex(re) => re.is_match(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(raw: &str) -> Matcher {
        Matcher::new(raw).unwrap()
    }

    #[test]
    fn empty_and_star_match_everything() {
        assert!(m("").matches("Bash"));
        assert!(m("*").matches("mcp__x__y"));
    }

    #[test]
    fn plain_names_match_exactly() {
        assert!(m("Write").matches("Write"));
        assert!(!m("Write").matches("WriteFile"));
        assert!(!m("Bash").matches("bash"), "case matters");
        let either = m("Write|Edit");
        assert!(either.matches("Edit") && either.matches("Write") && !either.matches("Read"));
    }

    #[test]
    fn anything_else_is_a_regex() {
        let mem = m("mcp__memory__.*");
        assert!(mem.matches("mcp__memory__create_entities"));
        assert!(!mem.matches("mcp__github__list"));
        assert!(m("Notebook.*").matches("NotebookEdit"));
        assert!(m("mcp__.*__write.*").matches("mcp__fs__write_file"));
        assert!(Matcher::new("(").is_err());
    }
}
