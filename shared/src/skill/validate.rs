//! Field-by-field checks of a SKILL.md frontmatter, collecting lenient-rule warnings with file
//! lines. Used by [`super::spec::parse_skill_md`].

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use serde_saphyr::Spanned;

use super::error::{SkillFormatError, SkillWarning};
use super::spec::{DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS};

/// Every spec rule except the length limit (checked by the callers with the same limit).
pub(super) fn validate_name_shape(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_string());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "{c:?} is not allowed; use lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("it must not start or end with a hyphen".to_string());
    }
    if name.contains("--") {
        return Err("it must not contain two hyphens in a row".to_string());
    }
    Ok(())
}

pub(super) struct Validator<'a> {
    pub path: &'a Path,
    /// Added to a YAML line to get the file line.
    pub base: usize,
    pub warnings: Vec<SkillWarning>,
}

impl Validator<'_> {
    pub fn line(&self, f: &Spanned<Value>) -> usize {
        f.referenced.line() as usize + self.base
    }

    pub fn warn(&mut self, line: Option<usize>, message: String) {
        self.warnings.push(SkillWarning::new(
            self.path,
            line.or(Some(self.base)),
            message,
        ));
    }

    pub fn name(
        &mut self,
        f: Option<Spanned<Value>>,
        folder: Option<&str>,
    ) -> Result<String, SkillFormatError> {
        let (name, line) = match f {
            Some(f) => {
                let line = self.line(&f);
                match f.value {
                    Value::String(s) => (s, line),
                    _ => return Err(self.wrong_type("name", line, "a string")),
                }
            }
            None => {
                let Some(folder) = folder else {
                    return Err(self.invalid_name(self.base, "", "`name` is missing"));
                };
                self.warn(None, format!("no `name`; using the folder name {folder:?}"));
                (folder.to_string(), self.base)
            }
        };
        let problem = match validate_name_shape(&name) {
            Err(reason) => Some(reason),
            Ok(()) if name.chars().count() > NAME_MAX_CHARS => Some(format!(
                "it is longer than {NAME_MAX_CHARS} characters; shorten it (and rename its folder to match)"
            )),
            Ok(()) => None,
        };
        if let Some(reason) = problem {
            // Claude Code names a skill by its folder, so a title-like `name` ("Agent
            // Development") still loads there; only without a usable folder name is it refused.
            let usable = folder
                .filter(|f| validate_name_shape(f).is_ok() && f.chars().count() <= NAME_MAX_CHARS);
            let Some(folder) = usable else {
                return Err(self.invalid_name(line, &name, &reason));
            };
            self.warn(
                Some(line),
                format!(
                    "`name: {name}` is not a valid skill name ({reason}); using the folder name {folder:?}"
                ),
            );
            return Ok(folder.to_string());
        }
        if let Some(folder) = folder
            && folder != name
        {
            self.warn(
                Some(line),
                format!("`name: {name}` does not match its folder {folder:?}"),
            );
        }
        Ok(name)
    }

    pub fn description(&mut self, f: Option<Spanned<Value>>) -> Result<String, SkillFormatError> {
        let Some(f) = f else {
            return Err(SkillFormatError::MissingDescription {
                path: self.path.to_path_buf(),
                line: self.base,
            });
        };
        let line = self.line(&f);
        let text = match f.value {
            Value::String(s) => s.trim().to_string(),
            Value::Null => String::new(),
            _ => return Err(self.wrong_type("description", line, "a string")),
        };
        if text.is_empty() {
            return Err(SkillFormatError::MissingDescription {
                path: self.path.to_path_buf(),
                line,
            });
        }
        // Over the spec's limit loads with a warning, as in Claude Code: a published skill a
        // few characters over must not disappear (`skill create` still refuses it).
        let chars = text.chars().count();
        if chars > DESCRIPTION_MAX_CHARS {
            self.warn(
                Some(line),
                format!(
                    "`description` has {chars} characters, over the limit of \
                     {DESCRIPTION_MAX_CHARS} (loaded anyway); shorten it to what the skill does \
                     and when to use it"
                ),
            );
        }
        Ok(text)
    }

    /// A string field; numbers and booleans are accepted as their text, anything else warns.
    pub fn string(&mut self, field: &str, f: Spanned<Value>) -> Option<String> {
        let line = self.line(&f);
        match scalar_text(&f.value) {
            Some(s) => Some(s),
            None => {
                self.warn(Some(line), format!("`{field}` must be a string; ignored"));
                None
            }
        }
    }

    /// A boolean field (`true`/`false`, also as strings); anything else warns and is `None`.
    pub fn boolean(&mut self, field: &str, f: Spanned<Value>) -> Option<bool> {
        let line = self.line(&f);
        match &f.value {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => {
                self.warn(
                    Some(line),
                    format!("`{field}` must be true or false; ignored"),
                );
                None
            }
        }
    }

    pub fn string_map(&mut self, f: Spanned<Value>) -> BTreeMap<String, String> {
        let line = self.line(&f);
        let Value::Object(map) = f.value else {
            if !f.value.is_null() {
                self.warn(
                    Some(line),
                    "`metadata` must be a mapping of strings; ignored".to_string(),
                );
            }
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (k, v) in map {
            match scalar_text(&v) {
                Some(s) => {
                    out.insert(k, s);
                }
                None => self.warn(
                    Some(line),
                    format!("`metadata.{k}` must be a string; ignored"),
                ),
            }
        }
        out
    }

    /// `allowed-tools` / `tags`: a list of strings, or one string split at commas (else spaces).
    pub fn tool_list(&mut self, f: Spanned<Value>) -> Vec<String> {
        let line = self.line(&f);
        match f.value {
            Value::String(s) => split_list(&s),
            Value::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    match scalar_text(&item) {
                        Some(s) if !s.trim().is_empty() => out.push(s.trim().to_string()),
                        Some(_) => {}
                        None => self.warn(
                            Some(line),
                            "list items must be strings; one ignored".to_string(),
                        ),
                    }
                }
                out
            }
            Value::Null => Vec::new(),
            _ => {
                self.warn(
                    Some(line),
                    "expected a string or a list of strings; ignored".to_string(),
                );
                Vec::new()
            }
        }
    }

    pub fn wrong_type(&self, field: &str, line: usize, expected: &'static str) -> SkillFormatError {
        SkillFormatError::WrongType {
            path: self.path.to_path_buf(),
            line,
            field: field.to_string(),
            expected,
        }
    }

    pub fn invalid_name(&self, line: usize, name: &str, reason: &str) -> SkillFormatError {
        SkillFormatError::InvalidName {
            path: self.path.to_path_buf(),
            line,
            name: name.to_string(),
            reason: reason.to_string(),
        }
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Splits a one-string list at commas, else at spaces, but never inside parentheses, so
/// Claude Code's `Bash(git diff:*), Read` and `Read Bash(git, diff:*)` keep each tool whole.
pub(super) fn split_list(s: &str) -> Vec<String> {
    let top_level_comma = {
        let mut depth = 0i32;
        s.chars().any(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            c == ',' && depth == 0
        })
    };
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        let cut = depth == 0
            && if top_level_comma {
                c == ','
            } else {
                c.is_whitespace()
            };
        if cut {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}
