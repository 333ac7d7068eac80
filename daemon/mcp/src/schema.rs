//! A tool's `inputSchema` read as command-line parameters: name, type, required, default, enum,
//! description, in schema order. The same [`ToolSpec`] drives argument mapping
//! ([`super::args`]), the `-h` signature and the `--help` document, so what the help promises is
//! exactly what the parser accepts.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::schema_doc::{effective, shape, write_fields};
use super::schema_sample::{SAMPLE_DESTINATION, SAMPLE_FILE, sample_for};

/// The JSON type a parameter's value is coerced to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    /// No usable `type`: the value is taken as JSON when it parses, else as a string.
    Any,
}

impl ParamKind {
    fn from_schema(schema: &Value) -> ParamKind {
        let ty = match schema.get("type") {
            Some(Value::String(t)) => Some(t.as_str()),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
            _ => None,
        };
        match ty {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("number") => ParamKind::Number,
            Some("boolean") => ParamKind::Boolean,
            Some("array") => ParamKind::Array,
            Some("object") => ParamKind::Object,
            _ => match schema
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|e| e.first())
            {
                Some(Value::String(_)) => ParamKind::String,
                _ => ParamKind::Any,
            },
        }
    }

    /// The placeholder shown in usage lines.
    pub fn placeholder(self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Number => "number",
            ParamKind::Boolean => "boolean",
            ParamKind::Array => "array",
            ParamKind::Object => "json",
            ParamKind::Any => "value",
        }
    }
}

/// One property of the input schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    /// For arrays: the kind of each item.
    pub item_kind: ParamKind,
    pub required: bool,
    pub default: Option<Value>,
    pub allowed: Vec<Value>,
    pub description: Option<String>,
    /// The property's schema (`$ref` and `Optional` unwrapped): nested fields and examples.
    pub schema: Value,
}

impl Param {
    /// `--max-results` for `max_results` / `maxResults`; equal to the name when already kebab.
    pub fn kebab(&self) -> String {
        kebab_case(&self.name)
    }
}

/// Everything the command line needs to know about one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The command name, `mcp:<server>:<tool>` (after safe-name mapping).
    pub command: String,
    pub description: String,
    pub params: Vec<Param>,
    /// The whole input schema, against which nested `$ref`s resolve.
    pub root: Map<String, Value>,
}

impl ToolSpec {
    /// Reads the parameters from `input_schema` (a JSON Schema object).
    pub fn new(
        command: &str,
        description: Option<&str>,
        input_schema: &Map<String, Value>,
    ) -> ToolSpec {
        let required: Vec<&str> = input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut params = Vec::new();
        if let Some(props) = input_schema.get("properties").and_then(Value::as_object) {
            for (name, raw) in props {
                let schema = effective(raw, input_schema);
                let kind = ParamKind::from_schema(schema);
                let item_kind = schema
                    .get("items")
                    .map(|i| ParamKind::from_schema(effective(i, input_schema)))
                    .unwrap_or(ParamKind::Any);
                let description = raw
                    .get("description")
                    .or_else(|| schema.get("description"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                params.push(Param {
                    name: name.clone(),
                    kind,
                    item_kind,
                    required: required.contains(&name.as_str()),
                    default: raw
                        .get("default")
                        .or_else(|| schema.get("default"))
                        .cloned(),
                    allowed: schema
                        .get("enum")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                    description,
                    schema: schema.clone(),
                });
            }
        }
        ToolSpec {
            command: command.to_string(),
            description: description.unwrap_or("").trim().to_string(),
            params,
            root: input_schema.clone(),
        }
    }

    /// Required parameters in schema order: the slots positional values fill.
    pub fn positional(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.required)
    }

    /// The first line of the description (empty when there is none).
    pub fn summary(&self) -> &str {
        self.description
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    }

    /// `mcp:fs:read_text_file <path> [--head <number>]`.
    pub fn signature(&self) -> String {
        let mut s = self.command.clone();
        for p in self.positional() {
            let _ = write!(s, " <{}>", p.name);
        }
        for p in self.params.iter().filter(|p| !p.required) {
            if p.kind == ParamKind::Boolean {
                let _ = write!(s, " [--{}]", p.kebab());
            } else {
                let _ = write!(s, " [--{} <{}>]", p.kebab(), p.kind.placeholder());
            }
        }
        s
    }

    /// What `-h` prints: the signature, the description's first line, and each parameter's
    /// JSON shape on one line (`--entities <array of {name: string, …}>`), so the value can be
    /// written without reading `--help` first.
    pub fn short_help(&self) -> String {
        let mut s = format!("Usage: {}\n", self.signature());
        if !self.summary().is_empty() {
            s.push_str(self.summary());
            s.push('\n');
        }
        for p in &self.params {
            let need = if p.required { " (required)" } else { "" };
            let _ = writeln!(
                s,
                "  --{} <{}>{need}",
                p.kebab(),
                shape(&p.schema, &self.root)
            );
        }
        s
    }

    /// What `--help` prints: the whole description, every parameter and an example.
    pub fn full_help(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{} - {}", self.command, self.summary());
        let _ = writeln!(s, "\nUsage:\n  {}", self.signature());
        if !self.description.is_empty() {
            let _ = writeln!(s, "\nDescription:");
            for line in self.description.lines() {
                let _ = writeln!(s, "  {}", line.trim_end());
            }
        }
        let _ = writeln!(s, "\nParameters:");
        if self.params.is_empty() {
            let _ = writeln!(s, "  (none)");
        }
        for p in &self.params {
            let mut facts = vec![
                type_name(p),
                if p.required {
                    "required".into()
                } else {
                    "optional".into()
                },
            ];
            if let Some(d) = &p.default {
                facts.push(format!("default: {d}"));
            }
            if !p.allowed.is_empty() {
                let vals: Vec<String> = p.allowed.iter().map(plain).collect();
                facts.push(format!("one of: {}", vals.join(", ")));
            }
            let _ = writeln!(s, "  --{} ({})", p.kebab(), facts.join(", "));
            if let Some(d) = &p.description {
                for line in d.lines() {
                    let _ = writeln!(s, "      {}", line.trim_end());
                }
            }
            if matches!(p.kind, ParamKind::Object | ParamKind::Array) {
                write_fields(&mut s, &p.schema, &self.root, 6);
            }
        }
        let _ = writeln!(
            s,
            "\nRequired parameters may also be given positionally, in the order above.\n\
             Arrays: repeat the flag or pass JSON; objects: JSON. Booleans: --flag, --flag=false.\n\
             All arguments as one JSON object: --json '{{...}}', or --json - to read it from stdin."
        );
        let example = self.example();
        let _ = writeln!(s, "\nExample:\n  {example}");
        if let Some(note) = path_note(&example) {
            let _ = writeln!(s, "  {note}");
        }
        s
    }

    /// A runnable example using every required parameter, its values built from the schema
    /// ([`super::schema_sample`]): real values, never `<placeholders>`.
    pub fn example(&self) -> String {
        let tool = self.command.rsplit(':').next().unwrap_or("");
        let mut s = self.command.clone();
        for p in self.positional() {
            // A default written beside an `anyOf` (pydantic's `Optional[T] = x`) counts too.
            let value = match &p.default {
                Some(d) if !d.is_null() && p.schema.get("examples").is_none() => d.clone(),
                _ => sample_for(tool, Some(&p.name), &p.schema, &self.root),
            };
            let _ = write!(s, " --{} {}", p.kebab(), shell_word(&plain(&value)));
        }
        s
    }
}

/// What the example's stand-in paths mean, when it has any: `example.txt` is a file it can't
/// know, so the reader is told which file to give instead.
fn path_note(example: &str) -> Option<String> {
    let words: Vec<&str> = example.split_whitespace().collect();
    let stands_in: Vec<&str> = [SAMPLE_FILE, SAMPLE_DESTINATION]
        .into_iter()
        .filter(|f| words.contains(f))
        .collect();
    if stands_in.is_empty() {
        return None;
    }
    Some(format!(
        "({} stand{} for your own file: give its path, relative to the folder the server \
         works in, or absolute)",
        stands_in.join(" and "),
        if stands_in.len() == 1 { "s" } else { "" }
    ))
}

fn type_name(p: &Param) -> String {
    match (p.kind, p.item_kind) {
        (ParamKind::Array, ParamKind::Any) => "array".into(),
        (ParamKind::Array, ParamKind::Object) => "array of objects (JSON)".into(),
        (ParamKind::Array, item) => format!("array of {}", item.placeholder()),
        (ParamKind::Object, _) => "object (JSON)".into(),
        (k, _) => k.placeholder().into(),
    }
}

/// A JSON value as a user would type it: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn shell_word(s: &str) -> String {
    shlex::try_quote(s)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| "'…'".into())
}

/// `maxResults` / `max_results` → `max-results`.
pub fn kebab_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' {
            out.push('-');
            prev_lower = false;
        } else if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

#[cfg(test)]
#[path = "schema_tests.rs"]
pub(crate) mod tests;
