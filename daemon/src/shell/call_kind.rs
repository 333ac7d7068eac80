//! What a tool call looks like to a front end before it runs: its kind (the command's own, for
//! an agent command; a few well-known programs by name; `execute` for everything else), a short
//! title, and the files it names. A line of several commands is one kind only when all of them
//! agree; `cd` in front of a command does not count.

use std::path::Path;

use synapse_command::CommandRegistry;
use synapse_permissions::{SimpleCommand, parse};
use synapse_session::ToolKind;

/// Longest title, in characters.
const TITLE_CHARS: usize = 80;

/// A call's kind, title and the files it names (absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallLook {
    pub kind: ToolKind,
    pub title: String,
    pub locations: Vec<String>,
}

/// How `command`, run in `cwd`, looks to a front end.
pub fn describe(commands: &CommandRegistry, command: &str, cwd: &Path) -> CallLook {
    let parsed = parse(command);
    let simple: Vec<&SimpleCommand> = parsed
        .all_commands()
        .filter(|c| c.words.first().is_some_and(|w| w != "cd"))
        .collect();
    let kinds: Vec<ToolKind> = simple.iter().map(|c| kind_of(commands, c)).collect();
    let kind = match kinds.split_first() {
        Some((first, rest)) if parsed.opaque.is_empty() && rest.iter().all(|k| k == first) => {
            *first
        }
        _ => ToolKind::Execute,
    };
    let (title, locations) = match simple.as_slice() {
        [one] if parsed.opaque.is_empty() => {
            file_title(one, cwd).unwrap_or_else(|| (first_line(command), Vec::new()))
        }
        _ => (first_line(command), Vec::new()),
    };
    CallLook {
        kind,
        title,
        locations,
    }
}

fn kind_of(commands: &CommandRegistry, c: &SimpleCommand) -> ToolKind {
    let Some(name) = c.words.first() else {
        return ToolKind::Execute;
    };
    if let Some(agent) = commands.get(name) {
        return agent.kind();
    }
    let program = name.rsplit('/').next().unwrap_or(name);
    match program {
        "cat" | "head" | "tail" | "less" | "wc" | "ls" | "tree" | "stat" | "file" => ToolKind::Read,
        "grep" | "rg" | "find" | "fd" | "ag" => ToolKind::Search,
        "rm" | "rmdir" | "unlink" => ToolKind::Delete,
        "mv" => ToolKind::Move,
        "curl" | "wget" => ToolKind::Fetch,
        _ => ToolKind::Execute,
    }
}

/// `Read src/a.rs`, `Write notes.md`, `Edit lib.rs` for the file commands, with the file.
fn file_title(c: &SimpleCommand, cwd: &Path) -> Option<(String, Vec<String>)> {
    let verb = match c.words.first()?.as_str() {
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        _ => return None,
    };
    let path = c
        .words
        .get(1)
        .filter(|p| !p.starts_with('-') && !p.contains('$'))?;
    let absolute = cwd.join(path);
    Some((
        format!("{verb} {path}"),
        vec![absolute.to_string_lossy().into_owned()],
    ))
}

/// The command's first line, cut to [`TITLE_CHARS`].
fn first_line(command: &str) -> String {
    let line = command.trim().lines().next().unwrap_or_default();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS || command.trim().lines().nth(1).is_some() {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> CommandRegistry {
        crate::shell::builtin_registry()
    }

    #[test]
    fn an_agent_command_has_its_own_kind_and_names_its_file() {
        let look = describe(&registry(), "read src/a.rs --limit 20", Path::new("/p"));
        assert_eq!(look.kind, ToolKind::Read);
        assert_eq!(look.title, "Read src/a.rs");
        assert_eq!(look.locations, ["/p/src/a.rs"]);
        let look = describe(&registry(), "write /tmp/n.md 'x'", Path::new("/p"));
        assert_eq!(
            (look.kind, look.title.as_str()),
            (ToolKind::Edit, "Write /tmp/n.md")
        );
        assert_eq!(look.locations, ["/tmp/n.md"]);
        assert_eq!(
            describe(&registry(), "glob '**/*.rs'", Path::new("/p")).kind,
            ToolKind::Search
        );
    }

    #[test]
    fn programs_lines_and_mixtures() {
        let r = registry();
        let cwd = Path::new("/p");
        assert_eq!(
            describe(&r, "grep -rn foo src | head", cwd).kind,
            ToolKind::Execute
        );
        assert_eq!(
            describe(&r, "cd src && grep -rn foo .", cwd).kind,
            ToolKind::Search
        );
        assert_eq!(describe(&r, "rm -rf build", cwd).kind, ToolKind::Delete);
        assert_eq!(describe(&r, "cargo test", cwd).kind, ToolKind::Execute);
        let look = describe(&r, "cargo test\necho done", cwd);
        assert_eq!(
            (look.kind, look.title.as_str()),
            (ToolKind::Execute, "cargo test…")
        );
        assert!(look.locations.is_empty());
        assert_eq!(describe(&r, "read a; read b", cwd).kind, ToolKind::Read);
        assert_eq!(
            describe(&r, "read a; write b x", cwd).kind,
            ToolKind::Execute
        );
    }
}
