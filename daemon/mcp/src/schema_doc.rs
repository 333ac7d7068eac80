//! The parts of `--help` that need a parameter's whole schema, not just its top-level type:
//! the fields of nested objects and of arrays of objects (indented under the parameter) and each
//! parameter's one-line JSON shape. Example values are [`super::schema_sample`]'s.
//!
//! Schemas are walked with a depth bound and local `$ref`s (`#/$defs/X`, `#/definitions/X`)
//! resolved against the tool's root schema, so a recursive or hostile schema cannot loop.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// How deep nested fields are rendered.
const NEST_DEPTH_MAX: usize = 4;

/// Resolves a local `$ref` against `root` (one step; callers bound the depth).
pub fn resolve<'a>(schema: &'a Value, root: &'a Map<String, Value>) -> &'a Value {
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    let mut parts = reference.trim_start_matches("#/").split('/');
    let (Some(section), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
        return schema;
    };
    root.get(section)
        .and_then(|defs| defs.get(name))
        .unwrap_or(schema)
}

/// Reduces `anyOf`/`oneOf` (as pydantic writes `Optional[T]`) to the first non-null branch,
/// after resolving a `$ref`.
pub fn effective<'a>(schema: &'a Value, root: &'a Map<String, Value>) -> &'a Value {
    let schema = resolve(schema, root);
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array)
            && let Some(b) = branches
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        {
            return resolve(b, root);
        }
    }
    schema
}

pub(crate) fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ if schema.get("properties").is_some() => Some("object"),
        _ => None,
    }
}

/// `array of object`, `array of string`, `object`, `string`… for a nested field.
fn describe_type(schema: &Value, root: &Map<String, Value>) -> String {
    match type_of(schema) {
        Some("array") => match schema.get("items").map(|i| effective(i, root)) {
            Some(items) => match type_of(items) {
                Some(t) => format!("array of {t}"),
                None => "array".into(),
            },
            None => "array".into(),
        },
        Some(t) => t.to_string(),
        None => "value".into(),
    }
}

/// The object schema whose fields a parameter shows: the object itself, or an array's items.
fn fields_of<'a>(
    schema: &'a Value,
    root: &'a Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    let target = match type_of(schema) {
        Some("array") => effective(schema.get("items")?, root),
        _ => schema,
    };
    target.get("properties").and_then(Value::as_object)
}

/// Writes the fields of a nested object (or of each item of an array of objects), indented by
/// `indent` spaces, one line per field with its type, required-ness and description.
pub fn write_fields(out: &mut String, schema: &Value, root: &Map<String, Value>, indent: usize) {
    write_fields_at(out, schema, root, indent, 0);
}

fn write_fields_at(
    out: &mut String,
    schema: &Value,
    root: &Map<String, Value>,
    indent: usize,
    depth: usize,
) {
    if depth >= NEST_DEPTH_MAX {
        return;
    }
    let schema = effective(schema, root);
    let Some(props) = fields_of(schema, root) else {
        return;
    };
    if props.is_empty() {
        return;
    }
    let target = match type_of(schema) {
        Some("array") => schema.get("items").map(|i| effective(i, root)),
        _ => Some(schema),
    };
    let required = required_names(target.unwrap_or(schema));
    let pad = " ".repeat(indent);
    let heading = if type_of(schema) == Some("array") {
        "each item has:"
    } else {
        "fields:"
    };
    let _ = writeln!(out, "{pad}{heading}");
    for (name, raw) in props {
        let field = effective(raw, root);
        let need = if required.contains(&name.as_str()) {
            "required"
        } else {
            "optional"
        };
        let mut line = format!("{pad}  {name} ({}, {need})", describe_type(field, root));
        if let Some(d) = raw
            .get("description")
            .or_else(|| field.get("description"))
            .and_then(Value::as_str)
        {
            let first = d.lines().next().unwrap_or("").trim();
            if !first.is_empty() {
                let _ = write!(line, ": {first}");
            }
        }
        let _ = writeln!(out, "{line}");
        write_fields_at(out, field, root, indent + 4, depth + 1);
    }
}

/// Longest one-line shape `-h` shows for a parameter; longer ones end in `…`.
const SHAPE_CHARS_MAX: usize = 240;

/// A value's JSON shape on one line: `string`, `array of string`, `"a"|"b"`,
/// `array of {name: string, note?: string}` (`?`: optional field).
pub fn shape(schema: &Value, root: &Map<String, Value>) -> String {
    let mut s = shape_at(schema, root, 0);
    if s.chars().count() > SHAPE_CHARS_MAX {
        s = s.chars().take(SHAPE_CHARS_MAX - 1).collect();
        s.push('…');
    }
    s
}

fn shape_at(schema: &Value, root: &Map<String, Value>, depth: usize) -> String {
    let schema = effective(schema, root);
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
    {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|");
    }
    if depth >= NEST_DEPTH_MAX {
        return describe_type(schema, root);
    }
    match type_of(schema) {
        Some("array") => match schema.get("items") {
            Some(items) => format!("array of {}", shape_at(items, root, depth + 1)),
            None => "array".into(),
        },
        Some("object") => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return "object".into();
            };
            if props.is_empty() {
                return "object".into();
            }
            let required = required_names(schema);
            let fields: Vec<String> = props
                .iter()
                .map(|(name, field)| {
                    let mark = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{name}{mark}: {}", shape_at(field, root, depth + 1))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Some(t) => t.to_string(),
        None => "value".into(),
    }
}

pub(crate) fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(v: &Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn shapes_fit_on_one_line() {
        let schema = json!({
            "type": "object",
            "properties": {
                "entities": {"type": "array", "items": {"$ref": "#/$defs/E"}},
                "mode": {"enum": ["a", "b"]}
            },
            "$defs": {"E": {"type": "object", "required": ["name", "observations"], "properties": {
                "name": {"type": "string"},
                "observations": {"type": "array", "items": {"type": "string"}},
                "note": {"type": ["string", "null"]}
            }}}
        });
        let defs = root(&schema);
        assert_eq!(
            shape(&schema["properties"]["entities"], &defs),
            "array of {name: string, observations: array of string, note?: string}"
        );
        assert_eq!(shape(&schema["properties"]["mode"], &defs), "\"a\"|\"b\"");
        let selfref = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}});
        let long = shape(&json!({"$ref": "#/$defs/N"}), &root(&selfref));
        assert!(long.len() < 300 && !long.contains('\n'), "{long}");
    }

    #[test]
    fn recursive_fields_terminate() {
        let whole = json!({"$defs": {"Node": {"type": "object",
            "properties": {"child": {"$ref": "#/$defs/Node"}}, "required": ["child"]}}});
        let r = root(&whole);
        let mut out = String::new();
        write_fields(&mut out, &json!({"$ref": "#/$defs/Node"}), &r, 0);
        assert!(out.lines().count() <= 2 * NEST_DEPTH_MAX + 2, "{out}");
    }

    #[test]
    fn fields_of_array_items_are_listed() {
        let schema = json!({"type": "array", "items": {"type": "object",
            "properties": {"entityName": {"type": "string", "description": "Who"},
                           "contents": {"type": "array", "items": {"type": "string"}}},
            "required": ["entityName"]}});
        let mut out = String::new();
        write_fields(&mut out, &schema, &Map::new(), 6);
        assert!(out.contains("      each item has:\n"), "{out}");
        assert!(out.contains("entityName (string, required): Who"), "{out}");
        assert!(
            out.contains("contents (array of string, optional)"),
            "{out}"
        );
    }
}
