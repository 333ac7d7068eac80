//! The built-in agent shell commands: `read`, `write`, `edit`, `glob`, `search`, `bash`, `job`.
//! Each file holds one command: its [`CommandSpec`](synapse_command::CommandSpec) (the
//! single source of its usage, `-h`, `--help` and prompt text) and its implementation.

use std::sync::Arc;

use synapse_command::CommandRegistry;

pub mod bash;
pub mod edit;
pub mod glob;
pub mod job;
pub mod read;
pub mod search;
mod walk;
pub mod write;

/// The file `write` or `edit` with these words changes, as the command itself reads its words;
/// `None` for other commands or when the path is missing.
pub fn written_path(name: &str, args: &[String]) -> Option<String> {
    match name {
        "write" => write::path_word(args).cloned(),
        "edit" => edit::path_word(args),
        _ => None,
    }
}

/// The file `read`, `write` or `edit` with these words works on (where a subfolder's
/// instruction files become due, see [`crate::workspace::instructions`]).
pub fn touched_path(name: &str, args: &[String]) -> Option<String> {
    match name {
        "read" => read::path_word(args),
        _ => written_path(name, args),
    }
}

/// A simple agent command as the Claude Code tool it stands for (`read` → `Read`, `search` →
/// `Grep`, …) with that tool's input, each command reading its words with its own parser;
/// `abs` makes a path word absolute. `None` for other commands or words that do not parse.
pub fn claude_tool(
    name: &str,
    args: &[String],
    stdin: Option<&str>,
    abs: &dyn Fn(&str) -> String,
) -> Option<(&'static str, serde_json::Value)> {
    match name {
        "read" if stdin.is_none() => read::claude_input(args, abs).map(|i| ("Read", i)),
        "write" => write::claude_input(args, stdin, abs).map(|i| ("Write", i)),
        "edit" if stdin.is_none() => edit::claude_input(args, abs).map(|i| ("Edit", i)),
        "glob" if stdin.is_none() => glob::claude_input(args, abs).map(|i| ("Glob", i)),
        "search" if stdin.is_none() => search::claude_input(args, abs).map(|i| ("Grep", i)),
        _ => None,
    }
}

/// A registry holding the built-in commands; other subsystems add theirs to it.
pub fn builtin_registry() -> CommandRegistry {
    let mut registry = CommandRegistry::new();
    registry
        .register(Arc::new(read::ReadCommand))
        .register(Arc::new(write::WriteCommand))
        .register(Arc::new(edit::EditCommand))
        .register(Arc::new(glob::GlobCommand))
        .register(Arc::new(search::SearchCommand))
        .register(Arc::new(bash::BashCommand))
        .register(Arc::new(job::JobCommand));
    registry
}
