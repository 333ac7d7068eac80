use super::*;
use crate::schema::tests::{spec, typed_schema};
use serde_json::json;

fn map(argv: &[&str]) -> Result<Value, ArgError> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    map_argv(
        &spec(typed_schema()),
        &argv,
        Some(br#"{"path": "from-stdin", "count": 9}"#),
    )
    .map(Value::Object)
}

#[test]
fn flags_equals_and_kebab_aliases() {
    assert_eq!(
        map(&[
            "--path",
            "a b",
            "--count=3",
            "--max-results",
            "7",
            "--maxResults=8"
        ])
        .unwrap(),
        json!({"path": "a b", "count": 3, "maxResults": 8})
    );
}

#[test]
fn positionals_fill_required_in_schema_order() {
    assert_eq!(
        map(&["x.txt", "4"]).unwrap(),
        json!({"path": "x.txt", "count": 4})
    );
    assert_eq!(
        map(&["--path", "p", "5"]).unwrap(),
        json!({"path": "p", "count": 5})
    );
    assert_eq!(
        map(&["--", "--odd", "1"]).unwrap(),
        json!({"path": "--odd", "count": 1})
    );
    assert_eq!(
        map(&["a", "1", "extra"]).unwrap_err(),
        ArgError::UnexpectedPositional {
            value: "extra".into()
        }
    );
}

#[test]
fn coercion_by_type() {
    let v = map(&[
        "p",
        "1",
        "--ratio",
        "2.5",
        "--verbose",
        "--tags",
        "a",
        "--tags",
        "b",
        "--options",
        r#"{"k":1}"#,
        "--mode",
        "slow",
    ])
    .unwrap();
    assert_eq!(
        v,
        json!({"path": "p", "count": 1, "ratio": 2.5, "verbose": true, "tags": ["a", "b"], "options": {"k": 1}, "mode": "slow"})
    );
    assert_eq!(
        map(&["p", "1", "--tags", r#"["x","y"]"#]).unwrap()["tags"],
        json!(["x", "y"])
    );
    assert_eq!(
        map(&["p", "1", "--verbose", "false"]).unwrap()["verbose"],
        json!(false)
    );
    assert_eq!(
        map(&["p", "1", "--no-verbose"]).unwrap()["verbose"],
        json!(false)
    );
    assert_eq!(
        map(&["p", "1", "--verbose=true"]).unwrap()["verbose"],
        json!(true)
    );
}

#[test]
fn errors_name_the_parameter() {
    assert_eq!(
        map(&["p"]).unwrap_err(),
        ArgError::MissingRequired {
            name: "count".into()
        }
    );
    assert_eq!(
        map(&["p", "1", "--nope", "1"]).unwrap_err(),
        ArgError::UnknownOption {
            name: "nope".into()
        }
    );
    assert_eq!(
        map(&["p", "1", "--ratio"]).unwrap_err(),
        ArgError::MissingValue {
            name: "ratio".into()
        }
    );
    let e = map(&["p", "many"]).unwrap_err().to_string();
    assert_eq!(e, "--count: expected an integer (got \"many\")");
    let e = map(&["p", "1", "--mode", "warp"]).unwrap_err().to_string();
    assert_eq!(e, "--mode: \"warp\" is not one of: fast, slow");
    assert!(matches!(
        map(&["--json", "[1]"]),
        Err(ArgError::BadJson { .. })
    ));
}

#[test]
fn raw_json_and_stdin_then_flags_override() {
    assert_eq!(
        map(&["--json", r#"{"path":"j","count":2}"#]).unwrap(),
        json!({"path": "j", "count": 2})
    );
    assert_eq!(
        map(&["--json", "-"]).unwrap(),
        json!({"path": "from-stdin", "count": 9})
    );
    assert_eq!(
        map(&["--json=-", "--count", "1"]).unwrap(),
        json!({"path": "from-stdin", "count": 1})
    );
}
