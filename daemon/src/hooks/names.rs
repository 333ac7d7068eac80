//! A Bash-tool command as Claude Code's hooks would see the tool call: a simple `read`, `write`,
//! `edit`, `glob` or `search` is `Read`, `Write`, `Edit`, `Glob` or `Grep` with that tool's
//! input (each command reads its words with its own parser,
//! [`crate::shell::commands::claude_tool`]); a simple `mcp:<server>:<tool> --args` is
//! `mcp__<server>__<tool>` with the arguments its schema maps them to; everything else — a
//! pipeline, a program, a line bash must expand first — is `Bash` with `tool_input.command`.
//! So a user's hooks on `Write|Edit` or `Bash` work unchanged.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::shell::syntax::{self, Route};

/// An `mcp:` command's `(server, tool, arguments)` for a caller in a workspace root, of a chat
/// session (whose own servers come first).
pub type McpLookup = Arc<
    dyn Fn(
            Option<&Path>,
            Option<&str>,
            &str,
            &[String],
        ) -> Option<(String, String, Map<String, Value>)>
        + Send
        + Sync,
>;

/// The tool name and `tool_input` hooks see for `command`, run in `cwd` of workspace `root` by
/// chat session `session`.
pub fn tool_of(
    command: &str,
    (cwd, root, session): (&Path, Option<&Path>, Option<&str>),
    mcp: Option<&McpLookup>,
) -> (String, Value) {
    let bash = || ("Bash".to_string(), json!({ "command": command }));
    // Every simple first word is a candidate; what is not a known tool stays `Bash` below.
    let Route::Agent { words, stdin } = syntax::classify(command, |_| true) else {
        return bash();
    };
    if syntax::needs_expansion(command) {
        return bash();
    }
    let Some((name, args)) = words.split_first() else {
        return bash();
    };
    let abs = |p: &str| cwd.join(p).display().to_string();
    if let Some((tool, input)) =
        crate::shell::commands::claude_tool(name, args, stdin.as_deref(), &abs)
    {
        return (tool.to_string(), input);
    }
    if name.starts_with(synapse_mcp::names::COMMAND_PREFIX)
        && stdin.is_none()
        && let Some((server, tool, arguments)) = mcp.and_then(|m| m(root, session, name, args))
    {
        return (format!("mcp__{server}__{tool}"), Value::Object(arguments));
    }
    bash()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(command: &str) -> (String, Value) {
        let mcp: McpLookup = Arc::new(|_, _, command, args| {
            (command == "mcp:memory:create_entities").then(|| {
                let mut m = Map::new();
                m.insert(
                    "name".into(),
                    json!(args.get(1).cloned().unwrap_or_default()),
                );
                ("memory".to_string(), "create_entities".to_string(), m)
            })
        });
        tool_of(command, (Path::new("/proj"), None, None), Some(&mcp))
    }

    #[test]
    fn agent_commands_get_claude_codes_tool_names_and_inputs() {
        assert_eq!(
            named("write notes/a.md 'hello'"),
            (
                "Write".into(),
                json!({"file_path": "/proj/notes/a.md", "content": "hello"})
            )
        );
        assert_eq!(
            named("write /tmp/x.py <<'EOF'\nprint(1)\nEOF").1["content"],
            "print(1)\n"
        );
        assert_eq!(
            named("edit src/lib.rs 'a' 'b' --all"),
            (
                "Edit".into(),
                json!({"file_path": "/proj/src/lib.rs", "old_string": "a",
                       "new_string": "b", "replace_all": true})
            )
        );
        assert_eq!(
            named("read README.md --offset 10 --limit 5"),
            (
                "Read".into(),
                json!({"file_path": "/proj/README.md", "offset": 10, "limit": 5})
            )
        );
        assert_eq!(
            named("glob '**/*.rs' --path src"),
            (
                "Glob".into(),
                json!({"pattern": "**/*.rs", "path": "/proj/src"})
            )
        );
        let (tool, input) = named("search 'fn main' -i --glob '*.rs'");
        assert_eq!(tool, "Grep");
        assert_eq!(input["pattern"], "fn main");
        assert_eq!(input["-i"], true);
        assert_eq!(input["glob"], "*.rs");
    }

    #[test]
    fn mcp_commands_become_mcp_double_underscore_names() {
        assert_eq!(
            named("mcp:memory:create_entities --name Bob"),
            (
                "mcp__memory__create_entities".into(),
                json!({"name": "Bob"})
            )
        );
    }

    #[test]
    fn everything_else_is_bash() {
        for command in [
            "ls -la",
            "write a.txt hi && cat a.txt",
            "read $HOME/x",
            "read",
            "cargo test",
            "mcp:unknown:tool --x 1",
        ] {
            assert_eq!(
                named(command),
                ("Bash".into(), json!({"command": command})),
                "{command}"
            );
        }
    }
}
