//! Example values for a tool's `--help`, built from its input schema so the example runs as
//! shown: never a `<placeholder>` (run literally, `--path '<path>'` once made a folder named
//! `<path>`).
//!
//! A value comes from the schema's own words first — `const`, the first of `examples`, a
//! non-null `default`, the first `enum` value — else it is built from the type: a string in its
//! `format` (`https://example.com/`, a date-time, an e-mail address, a UUID…), a relative path for
//! a parameter whose name says it is one (`.` for a folder to look into, `example-dir` for one to
//! make, `example.txt` for a file: a filesystem server resolves them inside its allowed root),
//! else [`SAMPLE_STRING`] — unless a `pattern` would reject it, then a string built from the
//! pattern ([`super::schema_pattern`]); numbers inside `minimum`/`maximum`; the required fields of objects and
//! `minItems` items of arrays. Walks are bounded by depth and local `$ref`s resolve against the
//! tool's root schema, so a recursive schema cannot loop.

use serde_json::{Map, Value};

use super::schema_doc::{effective, required_names, type_of};

/// How deep nested values are built.
const SAMPLE_DEPTH_MAX: usize = 4;
/// The string every free-text field holds, so examples of related tools line up (an entity
/// created by one example is the one the next example refers to).
pub const SAMPLE_STRING: &str = "example";
/// The file a path-named parameter points at (relative: inside the server's root).
pub const SAMPLE_FILE: &str = "example.txt";
/// The folder a "create a folder" tool's path parameter names.
pub const SAMPLE_NEW_DIR: &str = "example-dir";
/// Where a move or copy tool's destination points.
pub const SAMPLE_DESTINATION: &str = "example-moved.txt";

/// A value valid against `schema` for parameter `name` of tool `tool` (see the module doc).
pub fn sample_for(
    tool: &str,
    name: Option<&str>,
    schema: &Value,
    root: &Map<String, Value>,
) -> Value {
    Sampler { tool }.at(name, schema, root, 0)
}

/// [`sample_for`] without a tool or parameter name (no path guess).
pub fn sample_value(schema: &Value, root: &Map<String, Value>) -> Value {
    sample_for("", None, schema, root)
}

struct Sampler<'t> {
    tool: &'t str,
}

impl Sampler<'_> {
    fn at(
        &self,
        name: Option<&str>,
        schema: &Value,
        root: &Map<String, Value>,
        depth: usize,
    ) -> Value {
        let schema = effective(schema, root);
        if let Some(given) = given_value(schema) {
            return given;
        }
        match type_of(schema) {
            Some("string") => Value::String(self.string(name, schema)),
            Some("integer") => Value::from(bounded(schema, 1.0).ceil() as i64),
            Some("number") => Value::from(bounded(schema, 1.5)),
            Some("boolean") => Value::Bool(true),
            Some("array") => {
                if depth >= SAMPLE_DEPTH_MAX {
                    return Value::Array(Vec::new());
                }
                let count = schema
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .clamp(1, 3);
                let item = match schema.get("items") {
                    Some(items) => self.at(name, items, root, depth + 1),
                    None => Value::String(SAMPLE_STRING.into()),
                };
                Value::Array((0..count).map(|_| item.clone()).collect())
            }
            Some("object") => {
                let mut map = Map::new();
                if depth < SAMPLE_DEPTH_MAX
                    && let Some(props) = schema.get("properties").and_then(Value::as_object)
                {
                    for field in required_names(schema) {
                        if let Some(s) = props.get(field) {
                            map.insert(field.to_string(), self.at(Some(field), s, root, depth + 1));
                        }
                    }
                }
                Value::Object(map)
            }
            Some("null") => Value::Null,
            _ => Value::String(self.string(name, schema)),
        }
    }

    fn string(&self, name: Option<&str>, schema: &Value) -> String {
        let base = match schema.get("format").and_then(Value::as_str) {
            Some("uri" | "url" | "iri" | "uri-reference" | "iri-reference") => {
                "https://example.com/"
            }
            Some("date-time") => "2026-01-01T00:00:00Z",
            Some("date") => "2026-01-01",
            Some("time") => "12:00:00Z",
            Some("duration") => "PT1M",
            Some("email" | "idn-email") => "user@example.com",
            Some("hostname" | "idn-hostname") => "example.com",
            Some("ipv4") => "192.0.2.1",
            Some("ipv6") => "2001:db8::1",
            Some("uuid") => "00000000-0000-4000-8000-000000000000",
            Some("regex") => SAMPLE_STRING,
            _ => {
                let pattern = schema.get("pattern").and_then(Value::as_str);
                let guess = name
                    .and_then(|n| path_sample(self.tool, n))
                    .unwrap_or(SAMPLE_STRING);
                // A guess the pattern rejects gives way to a string built from the pattern.
                if let Some(built) = pattern
                    .filter(|p| !simple_match(p, guess))
                    .and_then(super::schema_pattern::sample_matching)
                {
                    return fit_length(&built, schema);
                }
                guess
            }
        };
        fit_length(base, schema)
    }
}

/// What the schema itself offers as a value: `const`, the first of `examples`, a non-null
/// `default`, the first `enum` value.
fn given_value(schema: &Value) -> Option<Value> {
    if let Some(c) = schema.get("const") {
        return Some(c.clone());
    }
    if let Some(first) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.iter().find(|v| !v.is_null()))
    {
        return Some(first.clone());
    }
    if let Some(d) = schema.get("default").filter(|d| !d.is_null()) {
        return Some(d.clone());
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .cloned()
}

/// A relative path for a parameter whose name says it is one; `None` for any other name.
fn path_sample(tool: &str, name: &str) -> Option<&'static str> {
    // The last word says what a parameter is (`file_path`, `outputDir`; not `fileContents`),
    // or the one before a last `name` (`file_name`).
    let mut name = words(name);
    if name.len() > 1 && name.last().is_some_and(|w| w == "name") {
        name.pop();
    }
    let name: Vec<String> = name.pop().into_iter().collect();
    let tool = words(tool);
    let has = |words: &[String], any: &[&str]| words.iter().any(|w| any.contains(&w.as_str()));
    let moves = has(&tool, &["move", "copy", "rename", "mv", "cp"]);
    if moves && has(&name, &["destination", "dest", "target", "to"]) {
        return Some(SAMPLE_DESTINATION);
    }
    let folder_param = has(
        &name,
        &[
            "dir",
            "dirs",
            "dirname",
            "directory",
            "directories",
            "folder",
            "folders",
        ],
    );
    let path_param = has(
        &name,
        &[
            "path", "paths", "pathname", "file", "files", "filename", "filepath",
        ],
    ) || (moves && has(&name, &["source", "src", "from"]));
    if !folder_param && !path_param {
        return None;
    }
    let creates = has(&tool, &["create", "make", "mkdir", "new"]);
    let folder_tool = has(&tool, &["dir", "directory", "folder", "tree", "mkdir"]);
    if folder_param || folder_tool {
        return Some(if creates && folder_tool {
            SAMPLE_NEW_DIR
        } else {
            "."
        });
    }
    // A path to search or list under is a folder; any other is a file.
    if has(&tool, &["search", "list", "find", "glob", "ls"]) {
        return Some(".");
    }
    Some(SAMPLE_FILE)
}

/// The lower-case words of a snake, kebab or camel case name: `readTextFile` → read, text, file.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Whether `guess` is the sample [`super::schema_pattern::sample_matching`] would build, or the
/// pattern is one of the "anything" patterns: without a regex engine, a guess is kept only
/// when it surely matches.
fn simple_match(pattern: &str, guess: &str) -> bool {
    matches!(pattern, "" | ".*" | "^.*$" | ".+" | "^.+$" | "^.*" | ".*$") && !guess.is_empty()
}

/// `base` padded to `minLength` and cut to `maxLength`.
fn fit_length(base: &str, schema: &Value) -> String {
    let mut s = base.to_string();
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while s.chars().count() < min {
        s.push('x');
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
        s = s.chars().take(max as usize).collect();
    }
    s
}

/// `preferred` moved inside `minimum`/`maximum` (and the exclusive bounds).
fn bounded(schema: &Value, preferred: f64) -> f64 {
    let mut v = preferred;
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        v = v.max(min);
    }
    if let Some(min) = schema.get("exclusiveMinimum").and_then(Value::as_f64) {
        v = v.max(min + 1.0);
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        v = v.min(max);
    }
    if let Some(max) = schema.get("exclusiveMaximum").and_then(Value::as_f64) {
        v = v.min(max - 1.0);
    }
    v
}

#[cfg(test)]
#[path = "schema_sample_tests.rs"]
mod tests;
