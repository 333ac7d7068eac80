//! The JSON a hook reads on stdin, field for field as Claude Code 2.1 sends it: the common
//! fields (`session_id`, `transcript_path`, `cwd`, `prompt_id`, `permission_mode`,
//! `hook_event_name`) and the `tool_response` of `PostToolUse` in the shape of Claude Code's tool
//! (`Bash`: stdout/stderr/interrupted/isImage/noOutputExpected; `Write`: create or update with the
//! file before; `Edit`: the strings and the file before). A tool Synapse names otherwise gets the
//! Bash shape.
//!
//! The file a `Write`/`Edit` changes is read before the call ([`FileBefore::read`], bounded, a
//! regular file only) so `originalFile` and `type` say what Claude Code's say.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::HookEvent;

/// Claude Code's name for how tool calls are decided; Synapse asks by its rules, which is
/// Claude Code's `default` mode.
pub const PERMISSION_MODE: &str = "default";

/// Largest file kept as `originalFile`; a bigger one is sent as `null`.
pub const ORIGINAL_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// The common fields, in Claude Code's order. `SessionStart` has no `prompt_id` nor
/// `permission_mode`, `SessionEnd` no `permission_mode`, as in Claude Code.
pub fn common(
    session_id: &str,
    transcript_path: &Path,
    cwd: &Path,
    prompt_id: Option<&str>,
    event: HookEvent,
) -> Map<String, Value> {
    let mut input = Map::new();
    input.insert("session_id".into(), json!(session_id));
    input.insert(
        "transcript_path".into(),
        json!(transcript_path.display().to_string()),
    );
    input.insert("cwd".into(), json!(cwd.display().to_string()));
    if event != HookEvent::SessionStart
        && let Some(id) = prompt_id
    {
        input.insert("prompt_id".into(), json!(id));
    }
    if !matches!(event, HookEvent::SessionStart | HookEvent::SessionEnd) {
        input.insert("permission_mode".into(), json!(PERMISSION_MODE));
    }
    input.insert("hook_event_name".into(), json!(event.name()));
    input
}

/// A random (version 4) UUID in its usual text form, for `prompt_id` and transcript lines.
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// What a `Write`/`Edit` target held before the call: `None` when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBefore {
    pub existed: bool,
    /// Its text when it was a readable UTF-8 regular file within [`ORIGINAL_FILE_MAX_BYTES`].
    pub text: Option<String>,
}

impl FileBefore {
    /// Reads `path` without following it into anything but a regular file.
    pub fn read(path: &Path) -> FileBefore {
        let Ok(meta) = std::fs::metadata(path) else {
            return FileBefore {
                existed: false,
                text: None,
            };
        };
        let text = (meta.is_file() && meta.len() <= ORIGINAL_FILE_MAX_BYTES)
            .then(|| {
                let mut s = String::new();
                std::fs::File::open(path)
                    .ok()?
                    .take(ORIGINAL_FILE_MAX_BYTES)
                    .read_to_string(&mut s)
                    .ok()?;
                Some(s)
            })
            .flatten();
        FileBefore {
            existed: true,
            text,
        }
    }
}

/// `tool_response` for `tool` called with `input`, given what the call printed.
pub fn tool_response(
    tool: &str,
    input: &Value,
    output: &str,
    exit_code: i32,
    before: Option<&FileBefore>,
) -> Value {
    let file_path = input.get("file_path").cloned().unwrap_or(Value::Null);
    let original = |b: Option<&FileBefore>| {
        b.and_then(|b| b.text.clone())
            .map_or(Value::Null, Value::String)
    };
    match tool {
        "Write" if exit_code == 0 => json!({
            "type": if before.is_some_and(|b| b.existed) { "update" } else { "create" },
            "filePath": file_path,
            "content": input.get("content").cloned().unwrap_or(json!("")),
            "structuredPatch": [],
            "originalFile": original(before),
            "userModified": false,
        }),
        "Edit" if exit_code == 0 => json!({
            "filePath": file_path,
            "oldString": input.get("old_string").cloned().unwrap_or(json!("")),
            "newString": input.get("new_string").cloned().unwrap_or(json!("")),
            "originalFile": original(before),
            "structuredPatch": [],
            "userModified": false,
            "replaceAll": input.get("replace_all").cloned().unwrap_or(json!(false)),
        }),
        // Synapse's shell gives one merged stream, so all of it is `stdout`; `exit_code` and
        // `success` stay for hooks written for Synapse.
        _ => json!({
            "stdout": output,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
            "noOutputExpected": false,
            "exit_code": exit_code,
            "success": exit_code == 0,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_fields_follow_claude_code_per_event() {
        let m = common(
            "s",
            Path::new("/t.jsonl"),
            Path::new("/w"),
            Some("p"),
            HookEvent::PreToolUse,
        );
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "session_id",
                "transcript_path",
                "cwd",
                "prompt_id",
                "permission_mode",
                "hook_event_name"
            ]
        );
        let start = common(
            "s",
            Path::new("/t"),
            Path::new("/w"),
            Some("p"),
            HookEvent::SessionStart,
        );
        assert!(!start.contains_key("prompt_id") && !start.contains_key("permission_mode"));
        let end = common(
            "s",
            Path::new("/t"),
            Path::new("/w"),
            Some("p"),
            HookEvent::SessionEnd,
        );
        assert!(end.contains_key("prompt_id") && !end.contains_key("permission_mode"));
    }

    #[test]
    fn uuids_look_like_uuids() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_ne!(u, uuid_v4());
    }

    #[test]
    fn write_and_edit_responses_have_claude_codes_shape() {
        let input = json!({"file_path": "/w/a.txt", "content": "hi\n"});
        let created = tool_response("Write", &input, "", 0, None);
        assert_eq!(created["type"], "create");
        assert_eq!(created["originalFile"], Value::Null);
        let before = FileBefore {
            existed: true,
            text: Some("old\n".into()),
        };
        let updated = tool_response("Write", &input, "", 0, Some(&before));
        assert_eq!(updated["type"], "update");
        assert_eq!(updated["originalFile"], "old\n");
        assert_eq!(updated["filePath"], "/w/a.txt");
        let edit = json!({"file_path": "/w/a.txt", "old_string": "o", "new_string": "n", "replace_all": false});
        let edited = tool_response("Edit", &edit, "", 0, Some(&before));
        assert_eq!(edited["oldString"], "o");
        assert_eq!(edited["replaceAll"], false);
        let bash = tool_response("Bash", &json!({"command": "false"}), "boom", 1, None);
        assert_eq!(bash["stdout"], "boom");
        assert_eq!(bash["success"], false);
        assert_eq!(bash["interrupted"], false);
    }
}
