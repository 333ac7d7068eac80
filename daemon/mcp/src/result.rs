//! A `tools/call` result as a shell command's output: text to stdout; `structuredContent` as
//! pretty JSON when there is no text; images and audio saved to a temp file whose path is
//! printed; embedded resources as their text (or URI); `isError` sends it all to stderr with
//! exit status 1. The text is whole, whatever its size: the output cap is for what the model
//! receives, and the paths to the model apply it (the router's output policy for an in-process
//! call, the shell's capture for a wrapper in a pipeline), while a wrapper in the user's own
//! terminal or pipeline prints everything. Media files go to a private folder (the session's
//! scratch, else the user's own `<temp>/synapse-<uid>/mcp`, checked by
//! [`synapse_command::output_policy::private_dir`]). The exit codes every MCP command uses are
//! defined here.

use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;

use serde_json::Value;
use synapse_command::output_policy::private_dir;

/// The call succeeded.
pub const EXIT_OK: i32 = 0;
/// The tool ran and reported an error (`isError`).
pub const EXIT_TOOL_ERROR: i32 = 1;
/// The command line did not fit the tool's schema, or no such tool exists.
pub const EXIT_USAGE: i32 = 2;
/// The server could not be reached (not connected, crashed, timed out).
pub const EXIT_UNAVAILABLE: i32 = 3;

/// What a shell sees from one MCP command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpCallOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit_code: i32,
}

impl McpCallOutput {
    /// Help or other successful text.
    pub fn ok(text: impl Into<String>) -> McpCallOutput {
        McpCallOutput {
            stdout: text.into().into_bytes(),
            stderr: Vec::new(),
            exit_code: EXIT_OK,
        }
    }

    /// An error message (a newline is added) with an exit code.
    pub fn error(exit_code: i32, message: impl AsRef<str>) -> McpCallOutput {
        let mut stderr = message.as_ref().as_bytes().to_vec();
        if !stderr.ends_with(b"\n") {
            stderr.push(b'\n');
        }
        McpCallOutput {
            stdout: Vec::new(),
            stderr,
            exit_code,
        }
    }
}

/// Renders a `CallToolResult` (as its wire JSON), whole, and saves media under `media_dir`.
pub fn render_result(result: &Value, media_dir: &Path) -> McpCallOutput {
    let mut text = String::new();
    let mut push = |s: &str| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(s);
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => push(block.get("text").and_then(Value::as_str).unwrap_or("")),
            kind @ ("image" | "audio") => push(&save_media(kind, block, media_dir)),
            "resource" => push(&render_resource(
                block.get("resource").unwrap_or(&Value::Null),
                media_dir,
            )),
            "resource_link" => {
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
                match block.get("name").and_then(Value::as_str) {
                    Some(name) if !name.is_empty() && name != uri => {
                        push(&format!("{name}: {uri}"))
                    }
                    _ => push(uri),
                }
            }
            _ => push(&block.to_string()),
        }
    }
    if blocks.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        push(&serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string()));
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    // A missing `isError` means success.
    if result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        if text.is_empty() {
            text.push_str("the tool reported an error without a message\n");
        }
        McpCallOutput {
            stdout: Vec::new(),
            stderr: text.into_bytes(),
            exit_code: EXIT_TOOL_ERROR,
        }
    } else {
        McpCallOutput {
            stdout: text.into_bytes(),
            stderr: Vec::new(),
            exit_code: EXIT_OK,
        }
    }
}

fn render_resource(resource: &Value, media_dir: &Path) -> String {
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return text.to_string();
    }
    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
    if resource.get("blob").is_some() {
        let mut blob = resource.clone();
        if let Some(obj) = blob.as_object_mut() {
            obj.insert(
                "data".into(),
                resource.get("blob").cloned().unwrap_or(Value::Null),
            );
        }
        return format!("{uri}\n{}", save_media("resource", &blob, media_dir));
    }
    uri.to_string()
}

fn extension(mime: &str) -> &str {
    match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// Decodes a base64 `data` field to a fresh temp file; returns the line to print.
fn save_media(kind: &str, block: &Value, media_dir: &Path) -> String {
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    let data = block.get("data").and_then(Value::as_str).unwrap_or("");
    let bytes = match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
        Ok(b) => b,
        Err(e) => return format!("[{kind} ({mime}): invalid base64 data: {e}]"),
    };
    let saved = private_dir(media_dir).and_then(|()| {
        tempfile::Builder::new()
            .prefix("synapse-mcp-")
            .suffix(&format!(".{}", extension(mime)))
            .tempfile_in(media_dir)
            .and_then(|mut f| {
                f.write_all(&bytes)?;
                f.keep().map_err(|e| e.error)
            })
    });
    match saved {
        Ok((_, path)) => format!(
            "[{kind} saved to {} ({mime}, {} bytes)]",
            path.display(),
            bytes.len()
        ),
        Err(e) => format!(
            "[{kind} ({mime}, {} bytes) could not be saved: {e}]",
            bytes.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_structured_error_and_media() {
        let dir = tempfile::tempdir().unwrap();
        let out = render_result(
            &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            dir.path(),
        );
        assert_eq!((out.stdout, out.exit_code), (b"a\nb\n".to_vec(), EXIT_OK));

        let out = render_result(
            &json!({"content": [], "structuredContent": {"x": 1}}),
            dir.path(),
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "{\n  \"x\": 1\n}\n");

        let out = render_result(
            &json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
            dir.path(),
        );
        assert_eq!(
            (out.stdout.len(), out.stderr, out.exit_code),
            (0, b"boom\n".to_vec(), EXIT_TOOL_ERROR)
        );

        let out = render_result(
            &json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"},
                                {"type": "resource", "resource": {"uri": "file:///n", "text": "note"}},
                                {"type": "resource", "resource": {"uri": "file:///b"}}]}),
            dir.path(),
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let path = text
            .split("saved to ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(path.ends_with(".png"), "{text}");
        assert_eq!(std::fs::read(path).unwrap(), b"hi");
        assert!(
            text.ends_with("(image/png, 2 bytes)]\nnote\nfile:///b\n"),
            "{text}"
        );
    }

    #[test]
    fn a_5_mb_result_is_passed_on_whole() {
        let dir = tempfile::tempdir().unwrap();
        let big: String = (0..500_000).map(|i| format!("row {i:06}\n")).collect();
        assert!(big.len() > 5_000_000);
        let result = json!({"content": [{"type": "text", "text": big}]});
        let out = render_result(&result, dir.path());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), big);
    }

    #[test]
    fn media_are_not_saved_into_a_folder_others_can_write() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let out = render_result(
            &json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}),
            &shared,
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("could not be saved"), "{text}");
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    }
}
