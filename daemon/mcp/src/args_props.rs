//! Properties of the MCP argument mapper (argv → `tools/call` arguments, guided by the tool's
//! input schema): any schema and any command line are answered without a panic, and a refusal
//! names the option, parameter or argument at fault; every well-typed set of arguments, written
//! as flags, `--name=value`, `--no-flag`, repeated array flags or positionals, maps back to
//! exactly itself. Also `${VAR}` expansion in the config.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;
use crate::expand::{ExpandError, expand};
use crate::schema::{ParamKind, ToolSpec, kebab_case};

/// A property schema of any shape a server may send, sane or not.
fn property_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "array", "object", "null", "weird"
        ])
        .prop_map(|t| json!({"type": t})),
        Just(json!({"type": ["integer", "null"]})),
        Just(json!({"anyOf": [{"type": "null"}, {"type": "number"}]})),
        Just(json!({"type": "array", "items": {"type": "integer"}})),
        Just(json!({"enum": ["a", "b"]})),
        Just(json!({"enum": [1, 2]})),
        Just(json!({"type": "string", "enum": ["x y", "-z"], "default": "x y"})),
        Just(json!({"description": "no type at all"})),
        Just(json!("not even an object")),
    ]
}

fn param_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-zA-Z_]{0,8}",
        Just("json".to_string()),
        Just("no-x".to_string()),
        "\\PC{0,6}"
    ]
}

fn any_spec() -> impl Strategy<Value = ToolSpec> {
    (
        prop::collection::vec((param_name(), property_schema()), 0..6),
        prop::collection::vec(param_name(), 0..3),
        any::<Vec<bool>>(),
    )
        .prop_map(|(props, extra_required, required_flags)| {
            let mut required: Vec<String> = props
                .iter()
                .zip(required_flags.iter().chain(std::iter::repeat(&false)))
                .filter(|(_, r)| **r)
                .map(|((n, _), _)| n.clone())
                .collect();
            required.extend(extra_required);
            let properties: Map<String, Value> = props.into_iter().collect();
            let schema = json!({"type": "object", "properties": properties, "required": required});
            let schema = schema.as_object().cloned().unwrap_or_default();
            ToolSpec::new("mcp:s:t", Some("A tool."), &schema)
        })
}

fn any_word() -> impl Strategy<Value = String> {
    prop_oneof![
        "--[a-z][a-zA-Z_-]{0,8}",
        "--[a-z]{1,6}=\\PC{0,6}",
        "--no-[a-z]{1,6}",
        Just("--".to_string()),
        Just("--json".to_string()),
        Just("--json=-".to_string()),
        Just("-".to_string()),
        Just("--=x".to_string()),
        prop::sample::select(vec![
            "{\"a\": 1}",
            "[1, 2]",
            "[",
            "true",
            "-3",
            "1e400",
            "nan"
        ])
        .prop_map(str::to_string),
        "\\PC{0,10}",
    ]
}

/// A parameter that can be written on a command line, and a value of its type.
#[derive(Debug, Clone)]
struct Typed {
    name: String,
    kind: &'static str,
    value: Value,
    required: bool,
    with_enum: bool,
}

fn typed_param() -> impl Strategy<Value = Typed> {
    let value = prop_oneof![
        "\\PC{0,12}".prop_map(|s| ("string", Value::from(s))),
        any::<i64>().prop_map(|n| ("integer", Value::from(n))),
        any::<i64>().prop_map(|n| ("number", Value::from(n))),
        any::<bool>().prop_map(|b| ("boolean", Value::from(b))),
        prop::collection::vec("[a-z0-9 ._]{0,6}", 0..4).prop_map(|v| ("array", json!(v))),
        prop::collection::btree_map("[a-z]{1,4}", "\\PC{0,6}", 0..3)
            .prop_map(|m| ("object", json!(m))),
    ];
    (
        "[a-z][a-z0-9]{0,5}(_[a-z0-9]{1,4}|[A-Z][a-z0-9]{0,4})?",
        value,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(name, (kind, value), required, with_enum)| Typed {
            name,
            kind,
            value,
            required,
            with_enum: with_enum && kind == "string",
        })
}

/// Writes `params` as a command line the way a user or the model may; `style` picks the forms.
fn render(params: &[Typed], style: &[u8]) -> Vec<String> {
    let pick = |i: usize, n: u8| style.get(i).copied().unwrap_or(0) % n;
    let mut argv = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let flag = format!(
            "--{}",
            if pick(i, 2) == 0 {
                kebab_case(&p.name)
            } else {
                p.name.clone()
            }
        );
        let text = match &p.value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match (&p.value, pick(i + 7, 3)) {
            (Value::Bool(true), 0) => argv.push(flag),
            (Value::Bool(false), 0) => argv.push(format!("--no-{}", kebab_case(&p.name))),
            (Value::Array(items), 1) if !items.is_empty() => {
                for item in items {
                    argv.push(flag.clone());
                    argv.push(item.as_str().unwrap_or_default().to_string());
                }
            }
            (Value::String(_) | Value::Number(_), 2) if p.required => positional.push(text),
            (_, 1) => argv.push(format!("{flag}={text}")),
            _ => {
                argv.push(flag);
                argv.push(text);
            }
        }
    }
    if !positional.is_empty() {
        argv.push("--".to_string());
        argv.extend(positional);
    }
    argv
}

proptest! {
    #[test]
    fn any_command_line_is_answered_and_refusals_name_the_culprit(
        spec in any_spec(),
        argv in prop::collection::vec(any_word(), 0..8),
        stdin in prop::option::of(prop_oneof!["\\PC{0,20}", Just("{\"x\": [1]}".to_string())]),
    ) {
        let _ = (spec.signature(), spec.short_help(), spec.full_help(), spec.example());
        let result = map_argv(&spec, &argv, stdin.as_deref().map(str::as_bytes));
        let Err(e) = result else { return Ok(()) };
        let shown = e.to_string();
        let named = |name: &str| argv.iter().any(|w| w.starts_with(&format!("--{name}")));
        let param = |name: &str| spec.params.iter().any(|p| p.kebab() == name || p.name == name);
        match &e {
            ArgError::UnknownOption { name } | ArgError::MissingValue { name } => {
                prop_assert!(named(name), "{} not in {:?}", shown, argv);
            }
            ArgError::BadValue { name, value, .. } | ArgError::NotAllowed { name, value, .. } => {
                prop_assert!(param(name), "{}", shown);
                prop_assert!(argv.contains(value) || argv.iter().any(|w| w.ends_with(value.as_str())), "{}", shown);
            }
            ArgError::MissingRequired { name } => {
                prop_assert!(spec.params.iter().any(|p| p.required && p.name == *name), "{}", shown);
            }
            ArgError::UnexpectedPositional { value } => prop_assert!(argv.contains(value), "{}", shown),
            ArgError::BadJson { reason } => prop_assert!(!reason.is_empty() && named("json"), "{}", shown),
        }
    }

    #[test]
    fn well_typed_arguments_map_back_to_themselves(
        params in prop::collection::vec(typed_param(), 0..6),
        present in any::<Vec<bool>>(),
        style in any::<Vec<u8>>(),
    ) {
        // One parameter per command-line name, and none that `--json` or `--no-` could shadow.
        let mut seen = HashSet::new();
        let params: Vec<Typed> = params
            .into_iter()
            .filter(|p| p.name != "json" && !p.name.starts_with("no"))
            .filter(|p| {
                let names = [kebab_case(&p.name), p.name.clone()];
                let free = names.iter().all(|n| !seen.contains(n));
                seen.extend(names);
                free
            })
            .collect();
        let mut properties = Map::new();
        for p in &params {
            let mut schema = json!({"type": p.kind});
            if p.kind == "array" {
                schema["items"] = json!({"type": "string"});
            }
            if p.with_enum {
                schema["enum"] = json!([p.value.clone(), "another value"]);
            }
            properties.insert(p.name.clone(), schema);
        }
        let required: Vec<&str> = params.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let spec = ToolSpec::new("mcp:s:t", None, schema.as_object().unwrap_or(&Map::new()));
        prop_assert!(spec.params.iter().all(|p| p.kind != ParamKind::Any), "{:?}", spec);

        let given: Vec<Typed> = params
            .iter()
            .zip(present.iter().chain(std::iter::repeat(&true)))
            .filter(|(p, keep)| p.required || **keep)
            .map(|(p, _)| p.clone())
            .collect();
        let argv = render(&given, &style);
        let expected: Map<String, Value> = given.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
        let got = map_argv(&spec, &argv, None);
        prop_assert_eq!(got, Ok(expected), "argv {:?}", argv);
    }

    #[test]
    fn expansion_answers_any_text(text in "[${}:a-zA-Z_ -]{0,30}", value in "[a-z]{0,4}") {
        let lookup = |name: &str| (name == "SET").then(|| value.clone());
        match expand(&text, &lookup) {
            Ok(out) => {
                if !text.contains("${") {
                    prop_assert_eq!(out, text);
                }
            }
            Err(ExpandError::Unset { name }) => prop_assert!(text.contains(&format!("${{{name}}}")), "{}", name),
            Err(e @ (ExpandError::Unterminated { .. } | ExpandError::BadName { .. })) => {
                prop_assert!(e.to_string().contains(&format!("{text:?}")), "{}", e);
            }
        }
    }

    #[test]
    fn a_default_is_used_exactly_when_the_variable_is_unset_or_empty(
        name in "[A-Z_]{1,8}",
        default in "[^}]{0,10}",
        value in prop::option::of("[a-z]{0,4}"),
    ) {
        let lookup = |n: &str| (n == name).then(|| value.clone()).flatten();
        let out = expand(&format!("<${{{name}:-{default}}}>"), &lookup);
        let want = match &value {
            Some(v) if !v.is_empty() => v.clone(),
            _ => default.clone(),
        };
        prop_assert_eq!(out, Ok(format!("<{want}>")));
    }
}
