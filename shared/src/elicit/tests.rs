//! Unit tests of the elicitation form: reading schemas (the `server-everything` one among
//! them), parsing typed answers and checking whole answers.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

/// The schema npm `server-everything` sends from `trigger-elicitation-request` (abridged).
fn everything_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
            "check": {"title": "Boolean", "type": "boolean"},
            "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
            "email": {"type": "string", "format": "email"},
            "birthdate": {"type": "string", "format": "date"},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 1.5},
            "friend": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
            "instruments": {
                "type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
                "default": ["Guitar"]
            },
            "hero": {"type": "string", "oneOf": [
                {"const": "hero-1", "title": "Superman"},
                {"const": "hero-2", "title": "Wonder Woman"}
            ], "default": "hero-1"},
            "fish": {"type": "array", "items": {"anyOf": [
                {"const": "fish-1", "title": "Tuna"},
                {"const": "fish-2", "title": "Salmon"}
            ]}},
            "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]}
        },
        "required": ["name"]
    })
}

fn form() -> Form {
    Form::from_schema(&everything_schema()).unwrap()
}

fn field(name: &str) -> Field {
    form().fields.into_iter().find(|f| f.name == name).unwrap()
}

#[test]
fn fields_keep_the_servers_order_and_read_every_kind() {
    let form = form();
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "name",
            "check",
            "firstLine",
            "email",
            "birthdate",
            "integer",
            "number",
            "friend",
            "instruments",
            "hero",
            "fish",
            "pet"
        ]
    );
    assert!(field("name").required && !field("check").required);
    assert_eq!(field("name").label(), "String");
    assert_eq!(field("firstLine").label(), "firstLine");
    assert_eq!(field("check").kind, FieldKind::Boolean);
    assert_eq!(
        field("integer").kind,
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(100.0)
        }
    );
    let FieldKind::Choice { options } = field("pet").kind else {
        panic!("pet is a choice")
    };
    assert_eq!(options[1].shown(), "Dogs");
    assert_eq!(options[1].value, "pet-2");
    let FieldKind::MultiChoice { options, .. } = field("fish").kind else {
        panic!("fish is a multi-choice")
    };
    assert_eq!(options[0].shown(), "Tuna");
}

#[test]
fn typed_input_becomes_the_values_the_server_expects() {
    assert_eq!(field("name").parse(" Ada "), Ok(Some(json!("Ada"))));
    assert_eq!(field("check").parse("y"), Ok(Some(json!(true))));
    assert_eq!(field("check").parse("No"), Ok(Some(json!(false))));
    assert_eq!(field("integer").parse("7"), Ok(Some(json!(7))));
    assert_eq!(field("number").parse("2.5"), Ok(Some(json!(2.5))));
    assert_eq!(field("friend").parse("2"), Ok(Some(json!("Rachel"))));
    assert_eq!(field("friend").parse("joey"), Ok(Some(json!("Joey"))));
    assert_eq!(
        field("hero").parse("wonder woman"),
        Ok(Some(json!("hero-2")))
    );
    assert_eq!(
        field("instruments").parse("Piano, 1, piano"),
        Ok(Some(json!(["Piano", "Guitar"])))
    );
    assert_eq!(
        field("birthdate").parse("1815-12-10"),
        Ok(Some(json!("1815-12-10")))
    );
    // Empty: left out when optional, asked again when required.
    assert_eq!(field("email").parse(""), Ok(None));
    assert_eq!(
        field("name").parse("  "),
        Err("this field is required".into())
    );
}

#[test]
fn wrong_input_says_what_was_expected() {
    assert_eq!(
        field("integer").parse("500"),
        Err("must be at most 100".into())
    );
    assert_eq!(
        field("integer").parse("4.5"),
        Err("\"4.5\" is not a whole number".into())
    );
    assert_eq!(
        field("number").parse("lots"),
        Err("\"lots\" is not a number".into())
    );
    assert_eq!(
        field("check").parse("maybe"),
        Err("answer yes or no".into())
    );
    assert_eq!(
        field("email").parse("ada at example"),
        Err("expected an email address".into())
    );
    assert_eq!(
        field("birthdate").parse("1815-02-30"),
        Err("expected a date, YYYY-MM-DD".into())
    );
    assert!(
        field("friend")
            .parse("7")
            .unwrap_err()
            .contains("not one of the choices")
    );
    assert_eq!(
        field("instruments").parse("1,2,3"),
        Err("pick at most 2".into())
    );
}

#[test]
fn formats_accept_what_they_should() {
    let f = |format: &str, s: &str| {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "string", "format": format}}});
        Form::from_schema(&schema).unwrap().fields[0]
            .parse(s)
            .is_ok()
    };
    assert!(f("uri", "https://example.com/a?b=c"));
    assert!(!f("uri", "example.com"));
    assert!(f("date-time", "2024-02-29T13:45:00Z"));
    assert!(f("date-time", "2024-02-29T13:45:00.5+02:00"));
    assert!(!f("date-time", "2023-02-29T13:45:00Z"));
    assert!(!f("date-time", "2024-02-28T25:00:00Z"));
    assert!(f("email", "a.b@example.org"));
    assert!(!f("email", "@example.org"));
}

#[test]
fn defaults_show_as_the_user_would_type_them() {
    assert_eq!(field("integer").default_text(), "42");
    assert_eq!(field("number").default_text(), "1.5");
    assert_eq!(field("hero").default_text(), "Superman");
    assert_eq!(field("instruments").default_text(), "Guitar");
    assert_eq!(
        field("firstLine").default_text(),
        "It was a dark and stormy night."
    );
    assert_eq!(field("email").default_text(), "");
    // What a field shows as its default parses back to the default.
    for f in form().fields.iter().filter(|f| f.default.is_some()) {
        assert_eq!(f.parse(&f.default_text()).unwrap(), f.default, "{}", f.name);
    }
    // A default the field refuses is dropped.
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 5, "default": 9}}});
    assert_eq!(Form::from_schema(&schema).unwrap().fields[0].default, None);
}

#[test]
fn whole_answers_are_checked() {
    let form = form();
    let ok = json!({"name": "Ada", "integer": 7, "instruments": ["Drums"]});
    assert_eq!(form.check(ok.as_object().unwrap()), Ok(()));
    let missing = json!({"integer": 7});
    assert_eq!(
        form.check(missing.as_object().unwrap()),
        Err(FormError::Field {
            name: "name".into(),
            reason: "is required".into()
        })
    );
    let extra = json!({"name": "Ada", "shoe": 42});
    assert_eq!(
        form.check(extra.as_object().unwrap()),
        Err(FormError::Unknown("shoe".into()))
    );
    let bad = json!({"name": "Ada", "integer": 0});
    assert!(form.check(bad.as_object().unwrap()).is_err());
}

#[test]
fn schemas_no_form_can_hold_are_refused() {
    assert_eq!(
        Form::from_schema(&json!({"type": "object"})),
        Err(FormError::NotAnObject)
    );
    let nested = json!({"type": "object", "properties": {"o": {"type": "object"}}});
    assert!(matches!(
        Form::from_schema(&nested),
        Err(FormError::Field { name, .. }) if name == "o"
    ));
}

#[test]
fn descriptions_name_type_and_bounds() {
    assert_eq!(field("integer").describe(), "whole number 1–100");
    assert_eq!(field("check").describe(), "yes/no");
    assert_eq!(field("email").describe(), "email address");
    assert_eq!(
        field("instruments").describe(),
        "choices (1–2), separated by commas"
    );
}
