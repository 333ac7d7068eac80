//! Shell arguments → MCP tool arguments, guided by the tool's [`ToolSpec`].
//!
//! Accepted forms: `--name value`, `--name=value` (the property name as written or in
//! kebab-case), bare `--flag` = true and `--no-flag` = false for booleans, arrays by repeating the
//! flag or as one JSON array, objects as JSON, positional values filling the required properties
//! in schema order, `--` ending options, and `--json '<object>'` / `--json -` (stdin) giving raw
//! arguments that the other flags then override. Errors name the parameter; the caller shows the
//! signature and exits 2.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::schema::{Param, ParamKind, ToolSpec};

/// A command line the schema does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("unknown option --{name}")]
    UnknownOption { name: String },
    #[error("option --{name} needs a value")]
    MissingValue { name: String },
    #[error("missing required parameter <{name}>")]
    MissingRequired { name: String },
    #[error("unexpected argument {value:?} (all positional parameters are filled)")]
    UnexpectedPositional { value: String },
    #[error("--{name}: expected {expected} (got {value:?})")]
    BadValue {
        name: String,
        expected: String,
        value: String,
    },
    #[error("--{name}: {value:?} is not one of: {allowed}")]
    NotAllowed {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("--json: {reason}")]
    BadJson { reason: String },
}

/// Maps `argv` (the words after the command name) to a JSON object for `tools/call`.
/// `stdin` is read only for `--json -`; `None` means no stdin was provided.
pub fn map_argv(
    spec: &ToolSpec,
    argv: &[String],
    stdin: Option<&[u8]>,
) -> Result<Map<String, Value>, ArgError> {
    let mut lookup: HashMap<String, &Param> = HashMap::new();
    for p in &spec.params {
        lookup.insert(p.kebab(), p);
    }
    // The name as written wins over another property's kebab alias.
    for p in &spec.params {
        lookup.insert(p.name.clone(), p);
    }
    let raw_json_flag = !lookup.contains_key("json");

    let mut base = Map::new();
    let mut given: Vec<(&Param, Value)> = Vec::new();
    let mut positionals: Vec<&String> = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < argv.len() {
        let word = &argv[i];
        i += 1;
        if options_done || !word.starts_with("--") || word == "--" {
            if word == "--" && !options_done {
                options_done = true;
            } else {
                positionals.push(word);
            }
            continue;
        }
        let body = &word[2..];
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if raw_json_flag && name == "json" {
            let text = match inline {
                Some(v) => v,
                None => take_value(argv, &mut i, "json")?,
            };
            merge_raw_json(&mut base, &text, stdin)?;
            continue;
        }
        let param = match lookup.get(name) {
            Some(p) => *p,
            None => match name.strip_prefix("no-").and_then(|n| lookup.get(n)) {
                Some(p) if p.kind == ParamKind::Boolean && inline.is_none() => {
                    given.push((p, Value::Bool(false)));
                    continue;
                }
                _ => {
                    return Err(ArgError::UnknownOption {
                        name: name.to_string(),
                    });
                }
            },
        };
        let text = match (inline, param.kind) {
            (Some(v), _) => v,
            (None, ParamKind::Boolean) => match argv.get(i).map(String::as_str) {
                Some(v @ ("true" | "false")) => {
                    i += 1;
                    v.to_string()
                }
                _ => "true".to_string(),
            },
            (None, _) => take_value(argv, &mut i, name)?,
        };
        given.push((param, coerce(param, &text)?));
    }

    let mut out = base;
    let mut from_flags: Vec<&str> = Vec::new();
    for (param, value) in given {
        let repeated = from_flags.contains(&param.name.as_str());
        match (param.kind, out.get_mut(&param.name), value) {
            // A repeated array flag appends; the first one replaces what --json gave.
            (ParamKind::Array, Some(Value::Array(existing)), Value::Array(more)) if repeated => {
                existing.extend(more);
            }
            (_, _, value) => {
                out.insert(param.name.clone(), value);
            }
        }
        from_flags.push(&param.name);
    }
    let open: Vec<&Param> = spec
        .positional()
        .filter(|p| !out.contains_key(&p.name))
        .collect();
    let mut slots = open.into_iter();
    let mut last_array: Option<&Param> = None;
    for value in positionals {
        if let Some(p) = slots.next() {
            let v = coerce(p, value)?;
            out.insert(p.name.clone(), v);
            last_array = (p.kind == ParamKind::Array).then_some(p);
        } else if let Some(p) = last_array {
            // Extra words after an array slot (`mcp:fs:read_multiple_files a b c`) belong to it.
            if let (Some(Value::Array(items)), Value::Array(more)) =
                (out.get_mut(&p.name), coerce(p, value)?)
            {
                items.extend(more);
            }
        } else {
            return Err(ArgError::UnexpectedPositional {
                value: value.clone(),
            });
        }
    }
    if let Some(missing) = spec
        .params
        .iter()
        .find(|p| p.required && !out.contains_key(&p.name))
    {
        return Err(ArgError::MissingRequired {
            name: missing.name.clone(),
        });
    }
    Ok(out)
}

fn take_value(argv: &[String], i: &mut usize, name: &str) -> Result<String, ArgError> {
    match argv.get(*i) {
        Some(v) => {
            *i += 1;
            Ok(v.clone())
        }
        None => Err(ArgError::MissingValue {
            name: name.to_string(),
        }),
    }
}

fn merge_raw_json(
    base: &mut Map<String, Value>,
    text: &str,
    stdin: Option<&[u8]>,
) -> Result<(), ArgError> {
    let owned;
    let text = if text == "-" {
        let bytes = stdin.ok_or_else(|| ArgError::BadJson {
            reason: "no stdin to read (--json -)".into(),
        })?;
        owned = String::from_utf8_lossy(bytes).into_owned();
        owned.as_str()
    } else {
        text
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => {
            base.extend(map);
            Ok(())
        }
        Ok(other) => Err(ArgError::BadJson {
            reason: format!("expected a JSON object, got {other}"),
        }),
        Err(e) => Err(ArgError::BadJson {
            reason: format!("invalid JSON: {e}"),
        }),
    }
}

/// Converts one textual value to the parameter's JSON type and checks its enum.
fn coerce(param: &Param, text: &str) -> Result<Value, ArgError> {
    let bad = |expected: &str| ArgError::BadValue {
        name: param.kebab(),
        expected: expected.to_string(),
        value: text.to_string(),
    };
    let value = match param.kind {
        ParamKind::Array => {
            if text.trim_start().starts_with('[') {
                match serde_json::from_str::<Value>(text) {
                    Ok(Value::Array(items)) => Value::Array(items),
                    _ => return Err(bad("a JSON array")),
                }
            } else {
                let item = scalar(param.item_kind, text)
                    .ok_or_else(|| bad(param.item_kind.placeholder()))?;
                Value::Array(vec![item])
            }
        }
        kind => scalar(kind, text).ok_or_else(|| bad(expected_name(kind)))?,
    };
    if !param.allowed.is_empty() && !param.allowed.contains(&value) {
        let allowed: Vec<String> = param
            .allowed
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect();
        return Err(ArgError::NotAllowed {
            name: param.kebab(),
            value: text.to_string(),
            allowed: allowed.join(", "),
        });
    }
    Ok(value)
}

fn expected_name(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Integer => "an integer",
        ParamKind::Number => "a number",
        ParamKind::Boolean => "true or false",
        ParamKind::Object => "a JSON object",
        ParamKind::Array => "a JSON array",
        ParamKind::String | ParamKind::Any => "a value",
    }
}

fn scalar(kind: ParamKind, text: &str) -> Option<Value> {
    match kind {
        ParamKind::String => Some(Value::String(text.to_string())),
        ParamKind::Integer => text
            .trim()
            .parse::<i64>()
            .ok()
            .map(|n| Value::Number(n.into())),
        ParamKind::Number => {
            let t = text.trim();
            match t.parse::<i64>() {
                Ok(n) => Some(Value::Number(n.into())),
                Err(_) => t
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number),
            }
        }
        ParamKind::Boolean => match text.trim() {
            "true" | "1" | "yes" => Some(Value::Bool(true)),
            "false" | "0" | "no" => Some(Value::Bool(false)),
            _ => None,
        },
        ParamKind::Object => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        },
        ParamKind::Array => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Array(_)) => Some(v),
            _ => None,
        },
        ParamKind::Any => Some(
            serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_string())),
        ),
    }
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "args_props.rs"]
mod props;
