//! The session's transcript in Claude Code's format, for hooks (`transcript_path`) and any tool
//! written against Claude Code's `~/.claude/projects/<project>/<session>.jsonl`: one JSON line per
//! message as the session goes — `type` `user` (a prompt: `message.content` a string; a tool
//! result: a `tool_result` block plus `toolUseResult` and `sourceToolAssistantUUID`) or
//! `assistant` (`message` as the Messages API returns it: `id`, `model`, `content` blocks,
//! `stop_reason`), each with `uuid`, `parentUuid` (the line before), `sessionId`, `timestamp`,
//! `cwd`, `isSidechain` and `version`.
//!
//! It lives beside the session log, in `$SYNAPSE_HOME/sessions/transcripts/<id>.jsonl` (the
//! session log stays the one Synapse resumes from; this file is only written). Each line is written
//! whole and handed to the OS when its message happens; past [`TRANSCRIPT_MAX_BYTES`] no more
//! lines are added (one warning in the daemon log), so a runaway session cannot fill the disk.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use synapse_llm::{ContentBlock, Message, Role};

use crate::hooks::input::uuid_v4;

/// The transcript stops growing past this size.
pub const TRANSCRIPT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// How much of an existing transcript's end is read to continue its `parentUuid` chain.
const RESUME_TAIL_BYTES: u64 = 256 * 1024;
/// The folder of the transcripts, inside the sessions folder.
pub const TRANSCRIPTS_DIR: &str = "transcripts";

/// `<sessions dir>/transcripts/<id>.jsonl`.
pub fn transcript_path(sessions_dir: &Path, id: &str) -> PathBuf {
    sessions_dir
        .join(TRANSCRIPTS_DIR)
        .join(format!("{id}.jsonl"))
}

/// An open transcript, appended to as the conversation happens.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    /// `None` when the file could not be opened (logged once) or is full.
    file: Option<File>,
    session_id: String,
    cwd: String,
    model: String,
    last_uuid: Option<String>,
    /// The assistant line whose tool calls the next tool results answer.
    last_assistant_uuid: Option<String>,
    written: u64,
}

impl Transcript {
    /// Opens (or creates) the transcript of session `id` whose log lives in `sessions_dir`. A
    /// failure is logged and leaves a transcript that writes nothing: hooks still run.
    pub fn open(sessions_dir: &Path, id: &str, cwd: &Path, model: &str) -> Transcript {
        let path = transcript_path(sessions_dir, id);
        let opened = path
            .parent()
            .map_or(Ok(()), |dir| {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
            })
            .and_then(|()| {
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .read(true)
                    .mode(0o600)
                    .open(&path)
            });
        let (file, written, last_uuid) = match opened {
            Ok(mut f) => {
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                let last = last_uuid_in(&mut f, len);
                (Some(f), len, last)
            }
            Err(e) => {
                tracing::warn!("cannot write transcript {}: {e}", path.display());
                (None, 0, None)
            }
        };
        Transcript {
            path,
            file,
            session_id: id.to_string(),
            cwd: cwd.display().to_string(),
            model: model.to_string(),
            last_uuid,
            last_assistant_uuid: None,
            written,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model named on the assistant lines from now on.
    pub fn set_model(&mut self, model: &str) {
        model.clone_into(&mut self.model);
    }

    /// Appends the lines of `m`: one for a prompt or an assistant message, one per tool result.
    pub fn record(&mut self, m: &Message) {
        match m.role {
            Role::Assistant => {
                let line = self.assistant_line(m);
                let uuid = self.append(line);
                self.last_assistant_uuid = uuid;
            }
            Role::User => {
                let results: Vec<&ContentBlock> = m
                    .content
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
                    .collect();
                if results.is_empty() {
                    let line = self.base("user", json!({"role": "user", "content": m.text()}));
                    self.append(line);
                }
                for block in results {
                    let line = self.tool_result_line(block);
                    self.append(line);
                }
            }
        }
    }

    fn base(&self, kind: &str, message: Value) -> serde_json::Map<String, Value> {
        let mut line = serde_json::Map::new();
        line.insert("parentUuid".into(), json!(self.last_uuid));
        line.insert("isSidechain".into(), json!(false));
        line.insert("type".into(), json!(kind));
        line.insert("message".into(), message);
        line
    }

    fn assistant_line(&self, m: &Message) -> serde_json::Map<String, Value> {
        let content: Vec<Value> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
                ContentBlock::ToolUse { id, name, input } => {
                    Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
                }
                ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        let stop_reason = if m.tool_uses().next().is_some() {
            "tool_use"
        } else {
            "end_turn"
        };
        let id = format!("msg_{}", uuid_v4().replace('-', ""));
        self.base(
            "assistant",
            json!({
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": null,
            }),
        )
    }

    fn tool_result_line(&self, block: &ContentBlock) -> serde_json::Map<String, Value> {
        let ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } = block
        else {
            return serde_json::Map::new();
        };
        let mut line = self.base(
            "user",
            json!({"role": "user", "content": [{
                "tool_use_id": tool_use_id,
                "type": "tool_result",
                "content": content,
                "is_error": is_error,
            }]}),
        );
        line.insert(
            "toolUseResult".into(),
            json!({
                "stdout": content,
                "stderr": "",
                "interrupted": false,
                "isImage": false,
                "noOutputExpected": false,
            }),
        );
        line.insert(
            "sourceToolAssistantUUID".into(),
            json!(self.last_assistant_uuid),
        );
        line
    }

    /// Adds the common tail fields, writes the line whole, and returns its `uuid`.
    fn append(&mut self, mut line: serde_json::Map<String, Value>) -> Option<String> {
        if line.is_empty() {
            return None;
        }
        let uuid = uuid_v4();
        line.insert("uuid".into(), json!(uuid));
        line.insert(
            "timestamp".into(),
            json!(
                chrono::Utc::now()
                    .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string()
            ),
        );
        line.insert("cwd".into(), json!(self.cwd));
        line.insert("sessionId".into(), json!(self.session_id));
        line.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
        line.insert("userType".into(), json!("external"));
        line.insert("entrypoint".into(), json!("synapse"));
        let mut bytes = serde_json::to_vec(&Value::Object(line)).unwrap_or_default();
        bytes.push(b'\n');
        let file = self.file.as_mut()?;
        if self.written + bytes.len() as u64 > TRANSCRIPT_MAX_BYTES {
            tracing::warn!(
                "transcript {} reached {TRANSCRIPT_MAX_BYTES} bytes; no more lines are added",
                self.path.display()
            );
            self.file = None;
            return None;
        }
        if let Err(e) = file.write_all(&bytes).and_then(|()| file.flush()) {
            tracing::warn!("cannot write transcript {}: {e}", self.path.display());
            self.file = None;
            return None;
        }
        self.written += bytes.len() as u64;
        self.last_uuid = Some(uuid.clone());
        Some(uuid)
    }
}

/// The `uuid` of the last whole line of a transcript `len` bytes long.
fn last_uuid_in(file: &mut File, len: u64) -> Option<String> {
    let start = len.saturating_sub(RESUME_TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::new();
    file.take(RESUME_TAIL_BYTES).read_to_end(&mut tail).ok()?;
    String::from_utf8_lossy(&tail)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("uuid").and_then(Value::as_str).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_llm::ToolResult;

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn writes_claude_code_lines_chained_by_uuid() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Transcript::open(dir.path(), "s1", Path::new("/w"), "m1");
        t.record(&Message::user_text("hi"));
        t.record(&Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "Bash".into(),
                input: json!({"command": "echo hi"}),
            }],
        });
        t.record(&Message::tool_results([ToolResult {
            tool_use_id: "toolu_1".into(),
            content: "hi\n".into(),
            is_error: false,
            images: Vec::new(),
        }]));
        t.record(&Message::assistant_text("All done."));
        let l = lines(t.path());
        assert_eq!(l.len(), 4);
        assert_eq!(l[0]["type"], "user");
        assert_eq!(l[0]["message"]["content"], "hi");
        assert_eq!(l[0]["parentUuid"], Value::Null);
        assert_eq!(l[1]["parentUuid"], l[0]["uuid"]);
        assert_eq!(l[1]["message"]["content"][0]["type"], "tool_use");
        assert_eq!(l[1]["message"]["stop_reason"], "tool_use");
        assert_eq!(l[2]["toolUseResult"]["stdout"], "hi\n");
        assert_eq!(l[2]["sourceToolAssistantUUID"], l[1]["uuid"]);
        assert_eq!(l[3]["message"]["content"][0]["text"], "All done.");
        assert_eq!(l[3]["message"]["model"], "m1");
        assert_eq!(l[3]["sessionId"], "s1");
        assert_eq!(l[3]["cwd"], "/w");

        // Reopened (a resumed session), the chain goes on from the last line.
        let mut again = Transcript::open(dir.path(), "s1", Path::new("/w"), "m1");
        again.record(&Message::user_text("more"));
        let l2 = lines(again.path());
        assert_eq!(l2[4]["parentUuid"], l[3]["uuid"]);
    }

    #[test]
    fn an_unwritable_folder_writes_nothing_and_does_not_fail() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let mut t = Transcript::open(&file, "s1", Path::new("/w"), "m");
        t.record(&Message::user_text("hi"));
        assert!(!t.path().exists());
    }
}
