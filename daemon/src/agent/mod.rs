//! The agent: the loop that talks to the model with the one `Bash` tool, the session files that
//! keep each conversation on disk, and the system prompt.

pub mod session_log;
