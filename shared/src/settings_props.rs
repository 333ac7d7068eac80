//! Properties of the settings.json loader: any text is answered without a panic and every
//! refusal starts with the file (and its line and column when the text is not valid JSON);
//! a value of the wrong type under a known key is refused with that key's path; keys Synapse
//! does not know survive whatever they hold.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

const PATH: &str = "/h/settings.json";

/// JSON values of every kind, a little nested.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(json!(1.5)),
        "\\PC{0,12}".prop_map(Value::from),
        Just(json!([1, "two", null])),
        Just(json!({"a": {"b": []}})),
    ]
}

/// A known key (as a path) and a value it can never take.
fn wrong_type() -> impl Strategy<Value = (&'static str, Value)> {
    prop_oneof![
        (
            Just("model"),
            prop_oneof![
                Just(json!(7)),
                Just(json!(true)),
                Just(json!(["m"])),
                Just(json!({}))
            ]
        ),
        (
            Just("provider"),
            prop_oneof![Just(json!(0)), Just(json!(false)), Just(json!([]))]
        ),
        (
            Just("env"),
            prop_oneof![
                Just(json!("K=V")),
                Just(json!(3)),
                Just(json!(["K"])),
                Just(Value::Null)
            ]
        ),
        (
            Just("env.ANTHROPIC_API_KEY"),
            prop_oneof![Just(json!(12)), Just(json!(null)), Just(json!({"k": 1}))]
        ),
        (
            Just("skillEnhance"),
            prop_oneof![Just(json!("on")), Just(json!(1)), Just(json!([true]))]
        ),
        (
            Just("skillEnhance.autoEnhance"),
            prop_oneof![
                Just(json!("yes")),
                Just(json!(1)),
                Just(Value::Null),
                Just(json!([true]))
            ]
        ),
        (
            Just("skillEnhance.maxEnhanceContextChars"),
            prop_oneof![
                Just(json!(-1)),
                Just(json!(1.5)),
                Just(json!("50000")),
                Just(json!(true)),
                Just(Value::Null)
            ]
        ),
    ]
}

fn set_path(doc: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = path.split('.').collect();
    set_key(doc, &keys, value);
}

proptest! {
    #[test]
    fn any_text_is_answered_without_panic(text in prop_oneof!["\\PC{0,120}", "[{}\\[\\]\":,0-9a-z \n]{0,80}"]) {
        if let Err(e) = parse(Path::new(PATH), &text) {
            let shown = e.to_string();
            prop_assert!(shown.starts_with(PATH), "{}", shown);
            if let SettingsError::Parse { message, .. } = &e {
                prop_assert!(!message.is_empty());
                prop_assert!(!message.contains(" at line "), "position said twice: {}", shown);
            }
        }
    }

    #[test]
    fn a_wrong_type_names_its_key_line_and_column(
        (key, bad) in wrong_type(),
        extra in prop::collection::btree_map("x[a-z]{0,6}", any_value(), 0..4),
        pretty in any::<bool>(),
    ) {
        let mut doc = json!({"model": "m", "skillEnhance": {"autoEnhance": false}});
        for (k, v) in extra {
            set_path(&mut doc, &k, v);
        }
        set_path(&mut doc, key, bad);
        let text = if pretty {
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        } else {
            doc.to_string()
        };
        let err = parse(Path::new(PATH), &text);
        prop_assert!(err.is_err(), "{} accepted: {}", key, text);
        let Err(SettingsError::Parse { line, column, message, .. }) = err else {
            return Err(TestCaseError::fail(format!("not a parse error: {err:?}")));
        };
        prop_assert!(message.starts_with(&format!("{key}: ")), "{}", message);
        prop_assert!(message.contains("expected"), "{}", message);
        prop_assert!(line >= 1 && column >= 1, "{}:{}", line, column);
        // The position is the value's, which shares its line with the key.
        let at = text.lines().nth(line - 1).unwrap_or_default();
        let last = key.rsplit('.').next().unwrap_or(key);
        prop_assert!(at.contains(&format!("\"{last}\"")), "line {}: {:?}", line, at);
    }

    #[test]
    fn unknown_keys_survive_whatever_they_hold(
        extra in prop::collection::btree_map("x[a-zA-Z_]{0,8}", any_value(), 0..6),
    ) {
        let mut doc = json!({"skillEnhance": {"autoEnhance": true, "futureKnob": [1]}});
        for (k, v) in &extra {
            doc[k.as_str()] = v.clone();
        }
        let parsed = parse(Path::new(PATH), &doc.to_string());
        prop_assert!(parsed.is_ok(), "{:?}", parsed);
        let Ok(settings) = parsed else { return Ok(()) };
        prop_assert!(settings.skill_enhance.auto_enhance);
        prop_assert_eq!(settings.skill_enhance.other.get("futureKnob"), Some(&json!([1])));
        for (k, v) in &extra {
            prop_assert_eq!(settings.other.get(k), Some(v));
        }
    }
}
