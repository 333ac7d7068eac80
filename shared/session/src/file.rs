//! The editor's files: a front end that holds the user's open buffers (an editor over the Agent
//! Client Protocol) may offer to be the storage of the session's file commands. The session then
//! asks it for a file ([`FileRequest`], sent to that front end only) and it answers
//! ([`FileReply`]) with the buffer's text, or that the write was done, or its error. The answer is
//! content, never authority: the session's gate decided before the request was sent.

/// What the session asks of the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRequest {
    /// Unique within the session; the reply names it.
    pub id: String,
    /// Read or write.
    pub op: FileOp,
    /// The file, absolute (always inside the session's folder).
    pub path: String,
    /// For a write, the whole new text; empty for a read.
    pub content: String,
}

/// Whether a [`FileRequest`] reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// The file's text as the editor has it (an unsaved buffer included).
    Read,
    /// Replace the file's text through the editor.
    Write,
}

impl FileOp {
    /// The contract's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Write => "write",
        }
    }

    /// Reads a word of [`FileOp::as_str`].
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        match word {
            "read" => Ok(FileOp::Read),
            "write" => Ok(FileOp::Write),
            other => Err(crate::UnknownWord {
                what: "file operation",
                word: other.to_string(),
                known: &["read", "write"],
            }),
        }
    }
}

/// The editor's answer to one [`FileRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReply {
    /// The request's id.
    pub id: String,
    /// A read's text (empty for a write), or the editor's error message.
    pub result: Result<String, String>,
}
