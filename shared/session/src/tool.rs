//! A tool call as a front end shows it: every call is one `Bash` command line, and the daemon
//! says what kind of work it is (the Agent Client Protocol's tool kinds), gives it a short title
//! and names the files it touches, so an editor can show an icon and follow along.

/// What kind of work a call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads files (`read`, `cat`).
    Read,
    /// Changes files (`write`, `edit`).
    Edit,
    /// Removes files (`rm`).
    Delete,
    /// Moves or renames files (`mv`).
    Move,
    /// Searches (`glob`, `search`, `grep`, `find`, `skill search`, `tools search`).
    Search,
    /// Runs a program (everything else).
    Execute,
    /// Thinks or plans without touching anything (`todo`, a sub-agent).
    Think,
    /// Fetches from the network (`web_fetch`, `web_search`, `curl`).
    Fetch,
    /// None of these.
    Other,
}

impl ToolKind {
    const WORDS: &'static [&'static str] = &[
        "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other",
    ];

    /// The kind's word (`read`, `edit`, `delete`, `move`, `search`, `execute`, `think`,
    /// `fetch`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::Other => "other",
        }
    }

    /// A kind from its word; an unknown or empty word (an older daemon) is [`ToolKind::Other`]
    /// for empty and an error otherwise.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        if word.is_empty() {
            return Ok(ToolKind::Other);
        }
        [
            ToolKind::Read,
            ToolKind::Edit,
            ToolKind::Delete,
            ToolKind::Move,
            ToolKind::Search,
            ToolKind::Execute,
            ToolKind::Think,
            ToolKind::Fetch,
            ToolKind::Other,
        ]
        .into_iter()
        .find(|k| k.as_str() == word)
        .ok_or_else(|| crate::UnknownWord {
            what: "tool kind",
            word: word.to_string(),
            known: Self::WORDS,
        })
    }
}

/// A tool call that starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id (the model's `tool_use` id); later events about it carry the same id.
    pub id: String,
    /// The command line as the model wrote it.
    pub command: String,
    /// What kind of work it is.
    pub kind: ToolKind,
    /// A short title for a front end's list (`Read src/main.rs`, `cargo test`).
    pub title: String,
    /// The files it reads or changes, absolute, when the daemon can tell.
    pub locations: Vec<String>,
}
