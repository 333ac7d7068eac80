use super::*;
use serde_json::json;

pub(crate) fn spec(schema: Value) -> ToolSpec {
    ToolSpec::new(
        "mcp:t:tool",
        Some("Do a thing.\nMore detail here."),
        schema.as_object().unwrap(),
    )
}

pub(crate) fn typed_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read"},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "verbose": {"type": "boolean"},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": null},
            "options": {"type": "object"},
            "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
            "maxResults": {"type": ["integer", "null"]}
        },
        "required": ["path", "count"]
    })
}

#[test]
fn parameters_in_schema_order_with_types() {
    let s = spec(typed_schema());
    let names: Vec<_> = s
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.kind, p.required))
        .collect();
    assert_eq!(
        names,
        vec![
            ("path", ParamKind::String, true),
            ("count", ParamKind::Integer, true),
            ("ratio", ParamKind::Number, false),
            ("verbose", ParamKind::Boolean, false),
            ("tags", ParamKind::Array, false),
            ("options", ParamKind::Object, false),
            ("mode", ParamKind::String, false),
            ("maxResults", ParamKind::Integer, false),
        ]
    );
    assert_eq!(s.params[4].item_kind, ParamKind::String);
}

#[test]
fn signature_and_short_help() {
    let s = spec(typed_schema());
    assert_eq!(
        s.signature(),
        "mcp:t:tool <path> <count> [--ratio <number>] [--verbose] [--tags <array>] [--options <json>] \
         [--mode <string>] [--max-results <integer>]"
    );
    assert_eq!(s.short_help().lines().nth(1), Some("Do a thing."));
    let short = s.short_help();
    assert!(
        short.contains("\n  --path <string> (required)\n"),
        "{short}"
    );
    assert!(short.contains("\n  --tags <array of string>\n"), "{short}");
}

#[test]
fn full_help_lists_every_parameter_fact() {
    let help = spec(typed_schema()).full_help();
    for needle in [
        "mcp:t:tool - Do a thing.",
        "More detail here.",
        "--path (string, required)",
        "      File to read",
        "--ratio (number, optional, default: 0.5)",
        "--tags (array of string, optional, default: null)",
        "--mode (string, optional, default: \"fast\", one of: fast, slow)",
        "--options (object (JSON), optional)",
        "Example:\n  mcp:t:tool --path example.txt --count 1\n  (example.txt stands for your own \
         file: give its path, relative to the folder the server works in, or absolute)",
        "--json -",
    ] {
        assert!(help.contains(needle), "missing {needle:?} in:\n{help}");
    }
}

#[test]
fn kebab_aliases() {
    assert_eq!(kebab_case("maxResults"), "max-results");
    assert_eq!(kebab_case("max_results"), "max-results");
    assert_eq!(kebab_case("path"), "path");
    assert_eq!(kebab_case("URL"), "url");
}

#[test]
fn example_of_nested_parameters_parses_to_schema_valid_arguments() {
    let s = spec(json!({
        "type": "object",
        "properties": {
            "entities": {"type": "array", "items": {"$ref": "#/$defs/Entity"}},
            "limit": {"type": "integer", "minimum": 3},
            "at": {"type": "string", "format": "date-time"},
        },
        "required": ["entities", "limit", "at"],
        "$defs": {"Entity": {"type": "object",
            "properties": {"name": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}},
                           "note": {"type": "string"}},
            "required": ["name", "observations"]}}
    }));
    let help = s.full_help();
    assert!(
        help.contains("--entities (array of objects (JSON), required)"),
        "{help}"
    );
    assert!(
        help.contains("      each item has:\n        name (string, required)"),
        "{help}"
    );
    assert!(help.contains("        note (string, optional)"), "{help}");
    let words = shlex::split(&s.example()).unwrap();
    let args = crate::args::map_argv(&s, &words[1..], None).unwrap();
    assert_eq!(
        Value::Object(args),
        json!({"entities": [{"name": "example", "observations": ["example"]}], "limit": 3,
               "at": "2026-01-01T00:00:00Z"})
    );
}

#[test]
fn examples_hold_real_values_never_placeholders() {
    let s = ToolSpec::new(
        "mcp:everything:echo",
        Some("Echoes back the input"),
        json!({"type": "object", "properties": {"message": {"type": "string"}},
               "required": ["message"]})
        .as_object()
        .unwrap(),
    );
    assert_eq!(s.example(), "mcp:everything:echo --message example");
    let s = ToolSpec::new(
        "mcp:w:forecast",
        None,
        json!({"type": "object", "properties": {
            "city": {"type": "string", "examples": ["New York"]},
            "when": {"type": "string", "format": "date"},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "days": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 3}},
               "required": ["city", "when", "units", "days"]})
        .as_object()
        .unwrap(),
    );
    assert_eq!(
        s.example(),
        "mcp:w:forecast --city 'New York' --when 2026-01-01 --units metric --days 3"
    );
    let words = shlex::split(&s.example()).unwrap();
    let args = crate::args::map_argv(&s, &words[1..], None).unwrap();
    assert_eq!(
        Value::Object(args),
        json!({"city": "New York", "when": "2026-01-01", "units": "metric", "days": 3})
    );
}
