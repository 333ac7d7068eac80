use super::*;
use serde_json::json;

fn root(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn sample(schema: Value) -> Value {
    sample_value(&schema, &Map::new())
}

#[test]
fn each_json_type_gets_a_value_of_that_type() {
    assert_eq!(sample(json!({"type": "string"})), json!("example"));
    assert_eq!(sample(json!({"type": "integer"})), json!(1));
    assert_eq!(sample(json!({"type": "number"})), json!(1.5));
    assert_eq!(sample(json!({"type": "boolean"})), json!(true));
    assert_eq!(sample(json!({"type": "null"})), json!(null));
    assert_eq!(
        sample(json!({"type": "array", "items": {"type": "integer"}})),
        json!([1])
    );
    assert_eq!(sample(json!({"type": "object"})), json!({}));
    // No type at all: free text.
    assert_eq!(sample(json!({"description": "anything"})), json!("example"));
    // `["string", "null"]` is a string.
    assert_eq!(
        sample(json!({"type": ["null", "string"]})),
        json!("example")
    );
}

#[test]
fn the_schema_s_own_values_come_first() {
    assert_eq!(
        sample(json!({"type": "string", "const": "fixed", "default": "d"})),
        json!("fixed")
    );
    assert_eq!(
        sample(
            json!({"type": "string", "examples": ["Paris", "Rome"], "default": "d",
                      "enum": ["Paris", "Rome"]})
        ),
        json!("Paris")
    );
    assert_eq!(
        sample(json!({"type": "integer", "default": 7, "enum": [3, 7]})),
        json!(7)
    );
    assert_eq!(
        sample(json!({"type": "string", "enum": ["error", "success"]})),
        json!("error")
    );
    // A null default (pydantic's Optional) is no value.
    assert_eq!(
        sample(json!({"type": "string", "default": null})),
        json!("example")
    );
}

#[test]
fn formats_get_a_value_in_that_format() {
    for (format, want) in [
        ("uri", "https://example.com/"),
        ("url", "https://example.com/"),
        ("date-time", "2026-01-01T00:00:00Z"),
        ("date", "2026-01-01"),
        ("email", "user@example.com"),
        ("uuid", "00000000-0000-4000-8000-000000000000"),
        ("ipv4", "192.0.2.1"),
        ("hostname", "example.com"),
    ] {
        assert_eq!(
            sample(json!({"type": "string", "format": format})),
            json!(want),
            "{format}"
        );
    }
    // An unknown format is free text.
    assert_eq!(
        sample(json!({"type": "string", "format": "color"})),
        json!("example")
    );
}

#[test]
fn numbers_and_lengths_stay_inside_their_bounds() {
    assert_eq!(sample(json!({"type": "integer", "minimum": 5})), json!(5));
    assert_eq!(sample(json!({"type": "integer", "maximum": 0})), json!(0));
    assert_eq!(
        sample(json!({"type": "integer", "exclusiveMinimum": 1})),
        json!(2)
    );
    assert_eq!(
        sample(json!({"type": "number", "minimum": 1, "maximum": 10})),
        json!(1.5)
    );
    assert_eq!(
        sample(json!({"type": "number", "minimum": 0, "maximum": 1})),
        json!(1.0)
    );
    assert_eq!(
        sample(json!({"type": "string", "minLength": 9})),
        json!("examplexx")
    );
    assert_eq!(
        sample(json!({"type": "string", "maxLength": 3})),
        json!("exa")
    );
    assert_eq!(
        sample(json!({"type": "array", "minItems": 2, "items": {"type": "string"}})),
        json!(["example", "example"])
    );
}

#[test]
fn objects_get_their_required_fields_and_refs_resolve() {
    let schema = json!({"type": "array", "items": {"type": "object",
        "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
                       "note": {"type": "string"}},
        "required": ["name", "tags"]}});
    assert_eq!(
        sample(schema),
        json!([{"name": "example", "tags": ["example"]}])
    );
    let whole =
        json!({"$defs": {"Kind": {"type": "string", "enum": ["b", "c"]}}, "properties": {}});
    assert_eq!(
        sample_value(&json!({"$ref": "#/$defs/Kind"}), &root(&whole)),
        json!("b")
    );
    let optional = json!({"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 4}]});
    assert_eq!(sample(optional), json!(4));
}

#[test]
fn a_recursive_schema_terminates() {
    let whole = json!({"$defs": {"Node": {"type": "object",
        "properties": {"child": {"$ref": "#/$defs/Node"}}, "required": ["child"]}}});
    let v = sample_value(&json!({"$ref": "#/$defs/Node"}), &root(&whole));
    assert!(v.to_string().len() < 200, "{v}");
}

#[test]
fn path_named_parameters_get_a_relative_path_a_tool_can_use() {
    let s = json!({"type": "string"});
    let none = Map::new();
    let path = |tool: &str, name: &str| sample_for(tool, Some(name), &s, &none);
    assert_eq!(path("read_text_file", "path"), json!("example.txt"));
    assert_eq!(path("write_file", "path"), json!("example.txt"));
    assert_eq!(path("list_directory", "path"), json!("."));
    assert_eq!(path("directory_tree", "path"), json!("."));
    assert_eq!(path("search_files", "path"), json!("."));
    assert_eq!(path("create_directory", "path"), json!("example-dir"));
    assert_eq!(path("move_file", "source"), json!("example.txt"));
    assert_eq!(path("move_file", "destination"), json!("example-moved.txt"));
    assert_eq!(path("convert", "output_dir"), json!("."));
    assert_eq!(path("open", "filePath"), json!("example.txt"));
    // Any other name is free text, also "source" outside a move.
    assert_eq!(path("translate", "source"), json!("example"));
    assert_eq!(path("search_nodes", "query"), json!("example"));
    // Words, not letters: a profile is no file, file contents are no path.
    assert_eq!(path("update_user", "profile"), json!("example"));
    assert_eq!(path("write_file", "fileContents"), json!("example"));
    assert_eq!(path("upload", "file_name"), json!("example.txt"));
    assert_eq!(path("convert", "file_type"), json!("example"));
    assert_eq!(path("make_dir", "name"), json!("example"));
    assert_eq!(path("create_relations", "to"), json!("example"));
    // An array of paths holds paths.
    let paths = json!({"type": "array", "items": {"type": "string"}, "minItems": 1});
    assert_eq!(
        sample_for("read_multiple_files", Some("paths"), &paths, &none),
        json!(["example.txt"])
    );
}

#[test]
fn a_pattern_shapes_the_sample() {
    let root = Map::new();
    let code = json!({"type": "string", "pattern": "^[A-Z]{3}$"});
    assert_eq!(
        sample_for("convert", Some("currency"), &code, &root),
        json!("AAA")
    );
    // A pattern beyond the simple ones keeps the usual sample.
    let odd = json!({"type": "string", "pattern": "^[^/]+/[^/]+$"});
    assert_eq!(
        sample_for("t", Some("repo"), &odd, &root),
        json!(SAMPLE_STRING)
    );
    let any = json!({"type": "string", "pattern": ".*"});
    assert_eq!(
        sample_for("t", Some("text"), &any, &root),
        json!(SAMPLE_STRING)
    );
}
