//! One field's answer: what the user typed parsed into the JSON value the server gets
//! ([`Field::parse`]), a value checked against the field's type, bounds, format and options
//! ([`Field::check`]), and the text a field starts with when the server gave a default.
//! Choices are picked by number, value or label; several choices are separated by commas.

use serde_json::Value;

use super::{Choice, Field, FieldKind, TextFormat};

impl Field {
    /// Parses what the user typed. `Ok(None)`: left empty, allowed for an optional field (the
    /// answer leaves it out). `Err` says what is wrong, for the user to try again.
    pub fn parse(&self, input: &str) -> Result<Option<Value>, String> {
        let input = input.trim();
        if input.is_empty() {
            return if self.required {
                Err("this field is required".into())
            } else {
                Ok(None)
            };
        }
        let value = match &self.kind {
            FieldKind::Text { .. } => Value::String(input.to_string()),
            FieldKind::Number { integer: true, .. } => {
                let n: i64 = input
                    .parse()
                    .map_err(|_| format!("{input:?} is not a whole number"))?;
                Value::from(n)
            }
            FieldKind::Number { integer: false, .. } => {
                let n: f64 = input
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or(format!("{input:?} is not a number"))?;
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or(format!("{input:?} is not a number"))?
            }
            FieldKind::Boolean => match input.to_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err("answer yes or no".into()),
            },
            FieldKind::Choice { options } => Value::String(pick(options, input)?),
            FieldKind::MultiChoice { options, .. } => {
                let mut picked: Vec<Value> = Vec::new();
                for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let value = Value::String(pick(options, part)?);
                    if !picked.contains(&value) {
                        picked.push(value);
                    }
                }
                Value::Array(picked)
            }
        };
        self.check(&value)?;
        Ok(Some(value))
    }

    /// Checks a value against the field.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
            } => {
                let s = value.as_str().ok_or("expected text")?;
                let len = s.chars().count() as u64;
                if let Some(min) = min_length
                    && len < *min
                {
                    return Err(format!("needs at least {min} characters"));
                }
                if let Some(max) = max_length
                    && len > *max
                {
                    return Err(format!("takes at most {max} characters"));
                }
                match format {
                    Some(f) if !fits_format(*f, s) => Err(format!("expected {}", f.expected())),
                    _ => Ok(()),
                }
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let n = value.as_f64().ok_or("expected a number")?;
                if *integer && !(value.is_i64() || value.is_u64()) {
                    return Err("expected a whole number".into());
                }
                if let Some(min) = minimum
                    && n < *min
                {
                    return Err(format!("must be at least {min}"));
                }
                if let Some(max) = maximum
                    && n > *max
                {
                    return Err(format!("must be at most {max}"));
                }
                Ok(())
            }
            FieldKind::Boolean => value
                .as_bool()
                .map(|_| ())
                .ok_or("expected yes or no".into()),
            FieldKind::Choice { options } => {
                let s = value.as_str().ok_or("expected one of the choices")?;
                if options.iter().any(|o| o.value == s) {
                    Ok(())
                } else {
                    Err(format!("{s:?} is not one of the choices"))
                }
            }
            FieldKind::MultiChoice {
                options,
                min_items,
                max_items,
            } => {
                let items = value.as_array().ok_or("expected a list of choices")?;
                for item in items {
                    let s = item.as_str().ok_or("expected a list of choices")?;
                    if !options.iter().any(|o| o.value == s) {
                        return Err(format!("{s:?} is not one of the choices"));
                    }
                }
                let n = items.len() as u64;
                if let Some(min) = min_items
                    && n < *min
                {
                    return Err(format!("pick at least {min}"));
                }
                if let Some(max) = max_items
                    && n > *max
                {
                    return Err(format!("pick at most {max}"));
                }
                Ok(())
            }
        }
    }

    /// The text the field's input starts with: its default as the user would type it.
    pub fn default_text(&self) -> String {
        self.default
            .as_ref()
            .map(|d| self.text_of(d))
            .unwrap_or_default()
    }

    /// A value of this field as the user would type it (choices by their label).
    pub fn text_of(&self, value: &Value) -> String {
        match (&self.kind, value) {
            (FieldKind::Boolean, Value::Bool(b)) => if *b { "yes" } else { "no" }.to_string(),
            (FieldKind::Choice { options }, Value::String(s)) => shown(options, s),
            (FieldKind::MultiChoice { options, .. }, Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|s| shown(options, s))
                .collect::<Vec<_>>()
                .join(", "),
            (_, Value::String(s)) => s.clone(),
            (_, other) => other.to_string(),
        }
    }

    /// What the field takes, in a few words: `text`, `whole number 1–100`, `yes/no`…
    pub fn describe(&self) -> String {
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
            } => {
                let what = format.map_or("text", TextFormat::describe).to_string();
                match (min_length, max_length) {
                    (Some(a), Some(b)) => format!("{what}, {a}–{b} characters"),
                    (Some(a), None) => format!("{what}, at least {a} characters"),
                    (None, Some(b)) => format!("{what}, at most {b} characters"),
                    (None, None) => what,
                }
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let what = if *integer { "whole number" } else { "number" };
                match (minimum, maximum) {
                    (Some(a), Some(b)) => format!("{what} {a}–{b}"),
                    (Some(a), None) => format!("{what} ≥ {a}"),
                    (None, Some(b)) => format!("{what} ≤ {b}"),
                    (None, None) => what.to_string(),
                }
            }
            FieldKind::Boolean => "yes/no".into(),
            FieldKind::Choice { .. } => "one choice: number or name".into(),
            FieldKind::MultiChoice {
                min_items,
                max_items,
                ..
            } => {
                let bounds = match (min_items, max_items) {
                    (Some(a), Some(b)) => format!(" ({a}–{b})"),
                    (Some(a), None) => format!(" (at least {a})"),
                    (None, Some(b)) => format!(" (at most {b})"),
                    (None, None) => String::new(),
                };
                format!("choices{bounds}, separated by commas")
            }
        }
    }
}

/// The option `input` names: its number (1-based), its value, or its label (any case).
fn pick(options: &[Choice], input: &str) -> Result<String, String> {
    if let Ok(n) = input.parse::<usize>()
        && let Some(o) = n.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(o.value.clone());
    }
    options
        .iter()
        .find(|o| o.value == input)
        .or_else(|| {
            options.iter().find(|o| {
                o.value.eq_ignore_ascii_case(input)
                    || o.label
                        .as_deref()
                        .is_some_and(|l| l.eq_ignore_ascii_case(input))
            })
        })
        .map(|o| o.value.clone())
        .ok_or_else(|| {
            format!(
                "{input:?} is not one of the choices (1–{}, or a name)",
                options.len()
            )
        })
}

fn shown(options: &[Choice], value: &str) -> String {
    options
        .iter()
        .find(|o| o.value == value)
        .map_or(value, Choice::shown)
        .to_string()
}

fn fits_format(format: TextFormat, s: &str) -> bool {
    match format {
        TextFormat::Email => match s.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !s.chars().any(char::is_whitespace)
            }
            None => false,
        },
        TextFormat::Uri => match s.split_once(':') {
            Some((scheme, rest)) => {
                scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                    && !rest.is_empty()
                    && !s.chars().any(char::is_whitespace)
            }
            None => false,
        },
        TextFormat::Date => is_date(s),
        TextFormat::DateTime => match s.split_once(['T', 't', ' ']) {
            Some((date, time)) => is_date(date) && is_time(time),
            None => false,
        },
    }
}

/// `YYYY-MM-DD` with a real day of its month.
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM[:SS[.fff]]` followed by `Z` or `±HH:MM`.
fn is_time(s: &str) -> bool {
    let (clock, zone_ok) = if let Some(c) = s.strip_suffix(['Z', 'z']) {
        (c, true)
    } else if let Some(i) = s.rfind(['+', '-']) {
        (&s[..i], is_clock(&s[i + 1..], false))
    } else {
        (s, false)
    };
    zone_ok && is_clock(clock, true)
}

fn is_clock(s: &str, seconds: bool) -> bool {
    let s = s.split_once('.').map_or(s, |(whole, _)| whole);
    let parts: Vec<&str> = s.split(':').collect();
    let limits: &[u32] = if seconds && parts.len() == 3 {
        &[23, 59, 60]
    } else {
        &[23, 59]
    };
    parts.len() == limits.len()
        && parts
            .iter()
            .zip(limits)
            .all(|(p, max)| p.len() == 2 && p.parse::<u32>().is_ok_and(|n| n <= *max))
}
