//! The form of an MCP elicitation (`elicitation/create` in form mode), as both sides read it.
//!
//! A server asks the user for input with a `requestedSchema`: a flat JSON Schema object whose
//! properties are strings (with a format, length bounds or a list of choices), numbers, integers,
//! booleans or multi-select arrays of choices. [`Form::from_schema`] reads it into [`Field`]s in
//! the server's order; the REPL shows each field and parses what the user types with
//! [`Field::parse`] (in `answer.rs`); the daemon checks a whole answer with [`Form::check`] before it
//! goes back to the server, so a client never sends the server what its form did not allow.

mod answer;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

/// Why a requested schema or an answer was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// The `requestedSchema` has no `properties` object, so no form can be read from it.
    #[error("the requested schema is not an object with `properties`")]
    NotAnObject,
    /// One field is at fault: the schema gives it a type or format a form cannot hold, or
    /// the answer's value for it does not fit (or is missing though required).
    #[error("field {name:?}: {reason}")]
    Field {
        /// The property name of the field at fault.
        name: String,
        /// What is wrong with it, in words for the user (`is required`, `must be at most 100`).
        reason: String,
    },
    /// The answer has a key that is none of the form's fields; it holds that key.
    #[error("the answer names {0:?}, which the form does not have")]
    Unknown(String),
}

/// A form: the fields in the order the server listed them.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// The schema's `title`, shown above the fields; `None` when absent or blank.
    pub title: Option<String>,
    /// The schema's `description`, shown under the title; `None` when absent or blank.
    pub description: Option<String>,
    /// The fields, one per property, in the order the server listed them.
    pub fields: Vec<Field>,
}

/// One property of the requested schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name (the key of the answer).
    pub name: String,
    /// The property's `title`, shown instead of the name; `None` when absent or blank.
    pub title: Option<String>,
    /// The property's `description`, a hint shown with the field; `None` when absent or blank.
    pub description: Option<String>,
    /// Whether the schema's `required` list names it: an accepted answer must then include it.
    pub required: bool,
    /// What values the field takes, with their bounds or options.
    pub kind: FieldKind,
    /// The server's default, already checked against the field (a bad default is dropped).
    pub default: Option<Value>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A string (`type: string` without choices).
    Text {
        /// The `format` the text must have; `None` for free text.
        format: Option<TextFormat>,
        /// `minLength`: the fewest characters (Unicode scalar values) allowed; `None` for no bound.
        min_length: Option<u64>,
        /// `maxLength`: the most characters (Unicode scalar values) allowed; `None` for no bound.
        max_length: Option<u64>,
    },
    /// A number (`type: number` or `type: integer`).
    Number {
        /// True for `type: integer`: only whole numbers are accepted.
        integer: bool,
        /// `minimum`, inclusive; `None` for no lower bound.
        minimum: Option<f64>,
        /// `maximum`, inclusive; `None` for no upper bound.
        maximum: Option<f64>,
    },
    /// Yes or no (`type: boolean`).
    Boolean,
    /// One of the options (`enum`, `oneOf` of `const`s, legacy `enumNames`).
    Choice {
        /// The options in the server's order; the answer is one of their values.
        options: Vec<Choice>,
    },
    /// Several of the options (`type: array` of an `enum` or `anyOf` of `const`s).
    MultiChoice {
        /// The options in the server's order; the answer is a list of their values.
        options: Vec<Choice>,
        /// `minItems`: the fewest options to pick; `None` for no bound.
        min_items: Option<u64>,
        /// `maxItems`: the most options to pick; `None` for no bound.
        max_items: Option<u64>,
    },
}

/// An option of a choice field: the value sent, and what the user sees when it differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The string the answer carries when this option is picked.
    pub value: String,
    /// The title the server gave it (`oneOf` `title` or legacy `enumNames`); `None` shows the value.
    pub label: Option<String>,
}

impl Choice {
    /// What the user sees.
    pub fn shown(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// The string formats the protocol allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// `format: email`: an email address.
    Email,
    /// `format: uri`: a URI with a scheme, such as `https://example.com`.
    Uri,
    /// `format: date`: a calendar date, `YYYY-MM-DD`.
    Date,
    /// `format: date-time`: a date and time with its zone, `YYYY-MM-DDTHH:MM:SSZ` or `±HH:MM`.
    DateTime,
}

impl TextFormat {
    fn parse(format: &str) -> Option<Self> {
        match format {
            "email" => Some(Self::Email),
            "uri" => Some(Self::Uri),
            "date" => Some(Self::Date),
            "date-time" => Some(Self::DateTime),
            _ => None,
        }
    }

    /// How the REPL names it: `email address`, `URI`, `date, YYYY-MM-DD`…
    pub fn describe(self) -> &'static str {
        match self {
            Self::Email => "email address",
            Self::Uri => "URI",
            Self::Date => "date, YYYY-MM-DD",
            Self::DateTime => "date and time, YYYY-MM-DDTHH:MM:SSZ",
        }
    }

    /// What a wrong answer was expected to be, with its article.
    pub fn expected(self) -> &'static str {
        match self {
            Self::Email => "an email address",
            Self::Uri => "a URI such as https://example.com",
            Self::Date => "a date, YYYY-MM-DD",
            Self::DateTime => "a date and time, YYYY-MM-DDTHH:MM:SSZ",
        }
    }
}

impl Form {
    /// Reads a `requestedSchema`. Unknown keywords are ignored; a property of a type the
    /// protocol does not allow is an error (the server asked for something no form can hold).
    pub fn from_schema(schema: &Value) -> Result<Form, FormError> {
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .ok_or(FormError::NotAnObject)?;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(name, property)| {
                field(name, property, required.contains(&name.as_str())).map_err(|reason| {
                    FormError::Field {
                        name: name.clone(),
                        reason,
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Form {
            title: text(schema, "title"),
            description: text(schema, "description"),
            fields,
        })
    }

    /// Checks an accepted answer: every key is a field, every value fits its field, every
    /// required field is there.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), FormError> {
        for name in content.keys() {
            if !self.fields.iter().any(|f| &f.name == name) {
                return Err(FormError::Unknown(name.clone()));
            }
        }
        for field in &self.fields {
            let problem = match content.get(&field.name) {
                Some(value) => field.check(value).err(),
                None if field.required => Some("is required".to_string()),
                None => None,
            };
            if let Some(reason) = problem {
                return Err(FormError::Field {
                    name: field.name.clone(),
                    reason,
                });
            }
        }
        Ok(())
    }
}

impl Field {
    /// What the user sees as the field's name: its title, else its property name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn uint(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn field(name: &str, p: &Value, required: bool) -> Result<Field, String> {
    let kind = kind(p)?;
    let mut field = Field {
        name: name.to_string(),
        title: text(p, "title"),
        description: text(p, "description"),
        required,
        kind,
        default: None,
    };
    // A default the field would refuse is no default at all.
    field.default = p.get("default").filter(|d| field.check(d).is_ok()).cloned();
    Ok(field)
}

fn kind(p: &Value) -> Result<FieldKind, String> {
    let ty = p.get("type").and_then(Value::as_str).unwrap_or_default();
    match ty {
        "string" => {
            if let Some(options) = choices(p) {
                return Ok(FieldKind::Choice { options });
            }
            let format = match p.get("format").and_then(Value::as_str) {
                Some(f) => Some(TextFormat::parse(f).ok_or(format!("unknown format {f:?}"))?),
                None => None,
            };
            Ok(FieldKind::Text {
                format,
                min_length: uint(p, "minLength"),
                max_length: uint(p, "maxLength"),
            })
        }
        "number" | "integer" => Ok(FieldKind::Number {
            integer: ty == "integer",
            minimum: p.get("minimum").and_then(Value::as_f64),
            maximum: p.get("maximum").and_then(Value::as_f64),
        }),
        "boolean" => Ok(FieldKind::Boolean),
        "array" => {
            let items = p.get("items").ok_or("an array without `items`")?;
            let options = choices(items).ok_or("an array whose items are not choices")?;
            Ok(FieldKind::MultiChoice {
                options,
                min_items: uint(p, "minItems"),
                max_items: uint(p, "maxItems"),
            })
        }
        "" => Err("no `type`".to_string()),
        other => Err(format!("type {other:?} cannot be asked in a form")),
    }
}

/// The options of `enum` (with legacy `enumNames` as labels), or of `oneOf` / `anyOf` lists of
/// `{const, title}`; `None` when `p` lists none.
fn choices(p: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let names = p.get("enumNames").and_then(Value::as_array);
        let options = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(Choice {
                    value: v.as_str()?.to_string(),
                    label: names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
            })
            .collect();
        return Some(options);
    }
    let list = p
        .get("oneOf")
        .or_else(|| p.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        list.iter()
            .filter_map(|o| {
                Some(Choice {
                    value: o.get("const")?.as_str()?.to_string(),
                    label: text(o, "title"),
                })
            })
            .collect(),
    )
}
