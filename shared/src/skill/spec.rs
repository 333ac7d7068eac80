//! SKILL.md frontmatter parsing and Agent Skills spec validation.
//!
//! Strict where a wrong value would make the skill unusable, lenient where Claude Code is:
//! - `name`: 1-64 of `[a-z0-9-]`, no leading, trailing or double hyphen, equal to the folder name.
//!   Missing → the folder name (warning); not the folder name → warning; not a valid name (a
//!   title such as "Agent Development", a longer name) → the folder name when that one is valid
//!   (warning: Claude Code names skills by folder), else [`SkillFormatError::InvalidName`] (the
//!   skill is not loaded).
//! - A frontmatter that is not YAML only because a plain value contains `: ` is read again with
//!   such values quoted (the Agent Skills client guide's retry), with a warning per line.
//! - `description`: required; missing or empty → the skill is not loaded (`skill list` shows the
//!   broken skill with the reason). Longer than 1024 characters → a warning naming the limit and
//!   the skill loads, as in Claude Code (`skill create` refuses such a description).
//! - Claude Code's `disable-model-invocation` and `user-invocable` (booleans) and
//!   `argument-hint` (a string); a wrong shape warns and is ignored.
//! - `license` (string), `compatibility` (≤ 500 characters), `metadata` (string → string map),
//!   `allowed-tools` (a string or a list), `type: meta`: a wrong shape warns and is ignored.
//! - Other keys are kept in [`SkillMeta::extra`] and otherwise ignored.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use serde_saphyr::Spanned;

use super::colon_retry;
use super::error::{SkillFormatError, SkillWarning};
use super::frontmatter::{self, Split};
use super::validate::{Validator, split_list, validate_name_shape};

/// The longest `name` the spec allows, in characters; a longer one is not loaded.
pub const NAME_MAX_CHARS: usize = 64;
/// The longest `description` the spec allows, in characters; a longer one loads with a warning.
pub const DESCRIPTION_MAX_CHARS: usize = 1024;
/// The longest `compatibility` the spec allows, in characters; a longer one loads with a warning.
pub const COMPATIBILITY_MAX_CHARS: usize = 500;

/// Regular skills are loaded by the agent; meta skills steer the skill sub-agent (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SkillKind {
    /// No `type` (or an unknown one): a skill the agent may search and load.
    #[default]
    Regular,
    /// `type: meta`: guidance for the skill sub-agent that creates and improves skills.
    Meta,
}

/// Everything the frontmatter says about a skill, validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkillMeta {
    /// The skill's name, valid per [`validate_name`]; the folder name when `name` was missing.
    pub name: String,
    /// What the skill does and when to use it, trimmed and never empty.
    pub description: String,
    /// `license`: the license the skill is published under, as written.
    pub license: Option<String>,
    /// `compatibility`: the environment the skill needs (products, packages, network), as written.
    pub compatibility: Option<String>,
    /// `metadata`: free key-value pairs; numbers and booleans become text, lists and mappings
    /// are dropped with a warning.
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`: the tool rules (`Bash(git add:*)`, `Read`…) the skill asks to use
    /// without a question; they count only once the user approved the skill.
    pub allowed_tools: Vec<String>,
    /// `type`: a regular skill or a meta skill.
    pub kind: SkillKind,
    /// `title`, else the body's first `# ` heading.
    pub title: Option<String>,
    /// `version`, else `metadata.version`: the skill's version, as written.
    pub version: Option<String>,
    /// `author`, else `metadata.author`: who wrote the skill, as written.
    pub author: Option<String>,
    /// `tags`, else `metadata.tags` split at commas (else spaces): keywords for search.
    pub tags: Vec<String>,
    /// `disable-model-invocation: true`: only the user loads it; never listed to the model.
    pub disable_model_invocation: bool,
    /// `user-invocable` (default true): the user may run it as `/<name> args`.
    pub user_invocable: bool,
    /// `argument-hint`: what `/<name>` takes, shown in completion.
    pub argument_hint: Option<String>,
    /// Keys the spec does not define, kept as JSON.
    pub extra: BTreeMap<String, Value>,
}

/// A parsed SKILL.md: its metadata, where the body starts, and the lenient-rule warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkill {
    /// The validated frontmatter.
    pub meta: SkillMeta,
    /// Byte offset of the body in the text given to [`parse_skill_md`].
    pub body_offset: usize,
    /// 1-based file line where the body starts (the line after the closing `---`).
    pub body_line: usize,
    /// Lenient-rule problems that did not stop the skill from loading, each with its line.
    pub warnings: Vec<SkillWarning>,
}

/// Parses and validates `text`, the content of the SKILL.md at `path`. `folder` is the name of
/// the skill's folder (the spec wants `name` to match it).
pub fn parse_skill_md(
    path: &Path,
    text: &str,
    folder: Option<&str>,
) -> Result<ParsedSkill, SkillFormatError> {
    let split = frontmatter::split(path, text)?;
    let mut warnings = Vec::new();
    let map = parse_yaml(path, &split, &mut warnings)?;
    let mut v = Validator {
        path,
        base: split.yaml_line - 1,
        warnings,
    };
    let mut fields = map;

    let name = v.name(fields.remove("name"), folder)?;
    let description = v.description(fields.remove("description"))?;
    let mut meta = SkillMeta {
        name,
        description,
        ..SkillMeta::default()
    };
    meta.license = fields
        .remove("license")
        .and_then(|f| v.string("license", f));
    meta.compatibility = fields
        .remove("compatibility")
        .and_then(|f| v.string("compatibility", f));
    if let Some(c) = &meta.compatibility
        && c.chars().count() > COMPATIBILITY_MAX_CHARS
    {
        v.warn(
            None,
            format!("`compatibility` is longer than {COMPATIBILITY_MAX_CHARS} characters"),
        );
    }
    meta.metadata = fields
        .remove("metadata")
        .map(|f| v.string_map(f))
        .unwrap_or_default();
    meta.allowed_tools = fields
        .remove("allowed-tools")
        .map(|f| v.tool_list(f))
        .unwrap_or_default();
    meta.kind = match fields.remove("type") {
        None => SkillKind::Regular,
        Some(f) => match v.string("type", f) {
            Some(t) if t == "meta" => SkillKind::Meta,
            Some(t) => {
                v.warn(
                    None,
                    format!("unknown `type: {t}` ignored (the only known type is `meta`)"),
                );
                SkillKind::Regular
            }
            None => SkillKind::Regular,
        },
    };
    let body = split.body;
    meta.title = fields
        .remove("title")
        .and_then(|f| v.string("title", f))
        .or_else(|| frontmatter::first_heading(body).map(str::to_string));
    meta.version = fields
        .remove("version")
        .and_then(|f| v.string("version", f))
        .or_else(|| meta.metadata.get("version").cloned());
    meta.author = fields
        .remove("author")
        .and_then(|f| v.string("author", f))
        .or_else(|| meta.metadata.get("author").cloned());
    meta.tags = match fields.remove("tags") {
        Some(f) => v.tool_list(f),
        None => meta
            .metadata
            .get("tags")
            .map(|t| split_list(t))
            .unwrap_or_default(),
    };
    meta.disable_model_invocation = fields
        .remove("disable-model-invocation")
        .and_then(|f| v.boolean("disable-model-invocation", f))
        .unwrap_or(false);
    meta.user_invocable = fields
        .remove("user-invocable")
        .and_then(|f| v.boolean("user-invocable", f))
        .unwrap_or(true);
    meta.argument_hint = fields
        .remove("argument-hint")
        .and_then(|f| v.string("argument-hint", f));
    meta.extra = fields.into_iter().map(|(k, f)| (k, f.value)).collect();

    Ok(ParsedSkill {
        meta,
        body_offset: text.len() - body.len(),
        body_line: split.body_line,
        warnings: v.warnings,
    })
}

/// Checks a name against the spec; `Err` carries the reason.
pub fn validate_name(name: &str) -> Result<(), String> {
    validate_name_shape(name)?;
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(format!("it is longer than {NAME_MAX_CHARS} characters"));
    }
    Ok(())
}

type Fields = BTreeMap<String, Spanned<Value>>;

/// Parses the frontmatter; when it is not YAML only because a plain value contains `: `, parses
/// it again with such values quoted (the Agent Skills client guide's retry) and warns on each
/// repaired line. Anything else, or a retry that still fails, is the first attempt's error.
fn parse_yaml(
    path: &Path,
    split: &Split<'_>,
    warnings: &mut Vec<SkillWarning>,
) -> Result<Fields, SkillFormatError> {
    let first = match parse_fields(path, split, split.yaml) {
        Ok(map) => return Ok(map),
        Err(err) => err,
    };
    if !matches!(first, SkillFormatError::Yaml { .. }) {
        return Err(first);
    }
    let (quoted, changed) = colon_retry::quote_colon_values(split.yaml);
    if changed.is_empty() {
        return Err(first);
    }
    let Ok(map) = parse_fields(path, split, &quoted) else {
        return Err(first);
    };
    for line in changed {
        warnings.push(SkillWarning::new(
            path,
            Some(line + split.yaml_line),
            "unquoted value containing `: ` read as if it were quoted; put it in double quotes to make the frontmatter valid YAML",
        ));
    }
    Ok(map)
}

fn parse_fields(path: &Path, split: &Split<'_>, yaml: &str) -> Result<Fields, SkillFormatError> {
    let options = serde_saphyr::options! { with_snippet: false };
    match serde_saphyr::from_str_with_options::<Option<Fields>>(yaml, options.clone()) {
        Ok(map) => Ok(map.unwrap_or_default()),
        Err(err) => {
            // Tell "not a mapping" apart from a syntax error.
            if let Ok(value) = serde_saphyr::from_str_with_options::<Value>(yaml, options)
                && !value.is_object()
            {
                return Err(SkillFormatError::NotAMapping {
                    path: path.to_path_buf(),
                    line: split.yaml_line,
                });
            }
            let line = err
                .location()
                .map(|l| l.line() as usize + split.yaml_line - 1)
                .unwrap_or(split.yaml_line);
            let message = err.without_snippet().to_string();
            let message = strip_position(&message);
            Err(SkillFormatError::Yaml {
                path: path.to_path_buf(),
                line,
                message,
            })
        }
    }
}

/// serde-saphyr appends " at line L, column C"; the file line goes in front instead.
fn strip_position(message: &str) -> String {
    let first = message.lines().next().unwrap_or(message);
    match first.rfind(" at line ") {
        Some(i) => first[..i].to_string(),
        None => first.to_string(),
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "spec_props.rs"]
mod props;
