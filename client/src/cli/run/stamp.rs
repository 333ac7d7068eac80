//! What makes each stream-json line one of Claude Code's: a `uuid` on every line, and a
//! `timestamp` (UTC, milliseconds, `2026-12-02T01:05:49.536Z`) on the `assistant` and `user`
//! messages, as Claude Code prints them. Also the `tool_use_result` a `user` line carries for its
//! Bash result: Claude Code's `{stdout, stderr, interrupted, isImage, noOutputExpected}` for a
//! command that succeeded, the string `Error: <result>` for one that failed.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

/// A random (version 4) UUID in its hyphenated form. The ids only tell lines apart; they need
/// no cryptographic randomness.
pub fn uuid_v4() -> String {
    const VERSION_MASK: u128 = 0xF << 76;
    const VARIANT_MASK: u128 = 0x3 << 62;
    let v = (fastrand::u128(..) & !VERSION_MASK & !VARIANT_MASK) | (0x4 << 76) | (0x2 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        v >> 96,
        (v >> 80) & 0xffff,
        (v >> 64) & 0xffff,
        (v >> 48) & 0xffff,
        v & 0xffff_ffff_ffff
    )
}

/// Now, as Claude Code writes its timestamps.
pub fn timestamp() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Adds `uuid` to a line (and `timestamp` to messages) unless it has them.
pub fn stamp(line: &mut Value) {
    let message = matches!(line["type"].as_str(), Some("assistant" | "user"));
    let Some(obj) = line.as_object_mut() else {
        return;
    };
    obj.entry("uuid").or_insert_with(|| uuid_v4().into());
    if message {
        obj.entry("timestamp").or_insert_with(|| timestamp().into());
    }
}

/// The `tool_use_result` for one `tool_result` block.
pub fn tool_use_result(block: &Value) -> Value {
    let content = result_text(&block["content"]);
    if block["is_error"] == true {
        return Value::String(format!("Error: {content}"));
    }
    json!({
        "stdout": content,
        "stderr": "",
        "interrupted": false,
        "isImage": false,
        "noOutputExpected": false,
    })
}

/// A result's text: the string itself, or its text blocks joined.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn uuids_have_the_v4_shape_and_differ() {
        let a = uuid_v4();
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{a}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{a}");
        assert_ne!(a, uuid_v4());
    }

    #[test]
    fn timestamps_are_utc_with_milliseconds() {
        let t = timestamp();
        assert!(t.ends_with('Z') && t.len() == 24, "{t}");
        assert!(chrono::DateTime::parse_from_rfc3339(&t).is_ok(), "{t}");
    }

    #[test]
    fn messages_get_a_timestamp_every_line_a_uuid() {
        let mut user = json!({"type": "user"});
        let mut system = json!({"type": "system", "uuid": "kept"});
        stamp(&mut user);
        stamp(&mut system);
        assert!(user["uuid"].is_string() && user["timestamp"].is_string());
        assert_eq!(system["uuid"], "kept");
        assert!(system.get("timestamp").is_none());
    }

    #[test]
    fn tool_use_result_has_claude_codes_bash_shape() {
        let ok = tool_use_result(&json!({"content": "hi\n", "is_error": false}));
        assert_eq!(
            ok,
            json!({"stdout": "hi\n", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false})
        );
        let failed = tool_use_result(
            &json!({"content": [{"type": "text", "text": "boom"}], "is_error": true}),
        );
        assert_eq!(failed, "Error: boom");
    }
}
