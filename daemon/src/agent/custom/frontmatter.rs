//! The frontmatter of a custom command or agent file (Claude Code's `commands/*.md` and
//! `agents/*.md`): an optional `---` YAML block cut off with the SKILL.md splitter and read with
//! serde-saphyr into plain values. A command file may have no frontmatter at all; a block that
//! does not parse is an error naming the file and line, so the file is reported, not guessed at.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use synapse_shared::skill::SkillFormatError;
use synapse_shared::skill::frontmatter::split;

/// A file's fields and its body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub fields: BTreeMap<String, Value>,
    pub body: String,
}

impl Parsed {
    /// A field as text: a string, or a number or boolean written where text was meant.
    pub fn text(&self, key: &str) -> Option<String> {
        match self.fields.get(key)? {
            Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A tool list: a YAML list of strings, or one string split at the commas that are not
    /// inside parentheses (`Bash(git add:*), Read`).
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.fields.get(key)? {
            Value::String(s) => Some(split_list(s)),
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// Reads `text` (the content of `path`).
pub fn parse(path: &Path, text: &str) -> Result<Parsed, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let split = match split(path, text) {
        Ok(s) => s,
        Err(SkillFormatError::MissingFrontmatter { .. }) => {
            return Ok(Parsed {
                fields: BTreeMap::new(),
                body: text.to_string(),
            });
        }
        Err(e) => return Err(e.to_string()),
    };
    let options = serde_saphyr::options! { with_snippet: false };
    let fields = match serde_saphyr::from_str_with_options::<Option<Value>>(split.yaml, options) {
        Ok(None) => BTreeMap::new(),
        Ok(Some(Value::Object(map))) => map.into_iter().collect(),
        Ok(Some(_)) => {
            return Err(format!(
                "{}:{}: the frontmatter must be a mapping of fields (`description: …`)",
                path.display(),
                split.yaml_line
            ));
        }
        Err(err) => {
            let line = err
                .location()
                .map(|l| l.line() as usize + split.yaml_line - 1)
                .unwrap_or(split.yaml_line);
            let message = err.without_snippet().to_string();
            let first = message.lines().next().unwrap_or(&message);
            let first = first.rfind(" at line ").map_or(first, |i| &first[..i]);
            return Err(format!("{}:{line}: {first}", path.display()));
        }
    };
    Ok(Parsed {
        fields,
        body: split.body.to_string(),
    })
}

/// `a, Bash(x, y), b` → `["a", "Bash(x, y)", "b"]`; a list without commas splits at spaces
/// outside parentheses (`Read Grep Glob`).
pub fn split_list(s: &str) -> Vec<String> {
    let separator = if s.contains(',') { ',' } else { ' ' };
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c == separator && depth == 0 {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn fields_body_and_no_frontmatter() {
        let p = parse(
            Path::new("c.md"),
            "---\ndescription: Say hi\nallowed-tools: Bash(git status:*), Bash(echo:*)\n---\nHello $ARGUMENTS\n",
        )
        .unwrap();
        assert_eq!(p.text("description").as_deref(), Some("Say hi"));
        assert_eq!(
            p.list("allowed-tools").unwrap(),
            vec!["Bash(git status:*)", "Bash(echo:*)"]
        );
        assert_eq!(p.body, "Hello $ARGUMENTS\n");
        let bare = parse(Path::new("c.md"), "Just a prompt\n").unwrap();
        assert!(bare.fields.is_empty());
        assert_eq!(bare.body, "Just a prompt\n");
    }

    #[test]
    fn bad_yaml_names_the_file_and_line() {
        let err = parse(
            Path::new("/p/bad.md"),
            "---\nname: x\ndescription: [open\n---\nbody\n",
        )
        .unwrap_err();
        assert!(err.starts_with("/p/bad.md:"), "{err}");
        let not_map = parse(Path::new("/p/l.md"), "---\n- a\n---\nbody\n").unwrap_err();
        assert!(not_map.contains("mapping"), "{not_map}");
    }

    #[test]
    fn lists_split_outside_parentheses() {
        assert_eq!(split_list("Read Grep  Glob"), vec!["Read", "Grep", "Glob"]);
        assert_eq!(
            split_list("Bash(git diff:*), Read"),
            vec!["Bash(git diff:*)", "Read"]
        );
        assert_eq!(split_list("Bash(npm run *)"), vec!["Bash(npm run *)"]);
    }
}
