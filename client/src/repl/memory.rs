//! `/memory` and `/init`: the instruction files (`AGENTS.md`, `CLAUDE.md`, …) the daemon gave
//! the session's agent, as `Opened.instructions` names them, listed with their sizes and
//! opened in `$VISUAL`/`$EDITOR`; and the message `/init` sends so the agent writes the
//! project's `AGENTS.md`.

use std::path::PathBuf;

use synapse_session::InstructionFile;

use super::Repl;
use super::commands::MemoryTarget;

/// The user message `/init` sends (a normal turn).
pub const INIT_PROMPT: &str = "\
Please analyse this project and write an AGENTS.md file at its root. It will be given to future \
sessions of coding agents (Synapse, Codex, Claude Code) working in this repository.

What to add:
1. The commands people use: how to build, lint and run the tests, including how to run a single test.
2. The architecture at a high level: the big picture that takes reading several files to \
understand, not a list of every file.
3. The house rules: code style, naming, conventions the code follows, and what a contributor \
must not do.

Notes:
- If there is an AGENTS.md already, improve it instead of starting over. Fold in what matters \
from a CLAUDE.md, .cursorrules, .cursor/rules/, .github/copilot-instructions.md or the README.
- Include only what you found in the repository; do not invent commands. Skip generic advice \
(\"write tests\", \"handle errors\").
- Keep it short, under 200 lines, and start it with \"# AGENTS.md\" and one line saying it \
guides coding agents working in this repository.";

impl Repl {
    pub(super) fn memory(&mut self, target: MemoryTarget) -> anyhow::Result<()> {
        let files = self.link.opened().instructions.clone();
        let path = match target {
            MemoryTarget::List => {
                self.say(&listing(&files, self.paths.home()));
                return Ok(());
            }
            MemoryTarget::Open(n) => match files.get(n - 1) {
                Some(f) => PathBuf::from(&f.path),
                None => {
                    self.say(&format!(
                        "There is no instruction file {n}; /memory lists {}.\n",
                        files.len()
                    ));
                    return Ok(());
                }
            },
            MemoryTarget::Edit => match files
                .iter()
                .rev()
                .find(|f| !f.shown.starts_with(['~', '$']))
            {
                Some(f) => PathBuf::from(&f.path),
                None => std::env::current_dir()?.join("AGENTS.md"),
            },
        };
        open_in_editor(&path)?;
        self.say(&format!(
            "Edited {}. New sessions (/clear) get the change.\n",
            path.display()
        ));
        Ok(())
    }
}

/// The `/memory` text: each file with its size, numbered for `/memory <N>`.
pub fn listing(files: &[InstructionFile], synapse_home: &std::path::Path) -> String {
    if files.is_empty() {
        return format!(
            "No instruction files were given to the agent. It reads AGENTS.md, CLAUDE.md and \
             CLAUDE.local.md in the project, ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md and {}. \
             /init asks the agent to write an AGENTS.md; /memory edit opens one here.\n",
            synapse_home.join("AGENTS.md").display()
        );
    }
    let width = files.iter().map(|f| f.shown.len()).max().unwrap_or(0);
    let mut out = format!("Instruction files the agent was given ({}):\n", files.len());
    for (i, f) in files.iter().enumerate() {
        let cut = if f.cut { " (cut to its budget)" } else { "" };
        out.push_str(&format!(
            "  {:>2}. {:<width$}  {}{cut}\n",
            i + 1,
            f.shown,
            size(f.bytes)
        ));
    }
    out.push_str(
        "Open one in $EDITOR with /memory <N>, the closest project file with /memory edit.\n",
    );
    out
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Runs `$VISUAL` (else `$EDITOR`, else `vi`) on `path` in this terminal and waits for it.
fn open_in_editor(path: &std::path::Path) -> anyhow::Result<()> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    // Through sh, so an editor with arguments (`code -w`) works; the path stays one argument.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()?;
    if !status.success() {
        anyhow::bail!("{editor} exited with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(shown: &str, bytes: u64, cut: bool) -> InstructionFile {
        InstructionFile {
            path: format!("/p/{shown}"),
            shown: shown.into(),
            bytes,
            cut,
        }
    }

    #[test]
    fn the_listing_names_each_file_with_its_size() {
        let home = std::path::Path::new("/h/.synapse");
        let text = listing(
            &[
                file("~/.claude/CLAUDE.md", 300, false),
                file("AGENTS.md", 2 * 1024 * 1024, true),
                file("sub/CLAUDE.md", 1536, false),
            ],
            home,
        );
        assert_eq!(
            text,
            "Instruction files the agent was given (3):\n   1. ~/.claude/CLAUDE.md  300 bytes\n   \
             2. AGENTS.md            2.0 MB (cut to its budget)\n   3. sub/CLAUDE.md        1.5 KB\n\
             Open one in $EDITOR with /memory <N>, the closest project file with /memory edit.\n"
        );
        let none = listing(&[], home);
        assert!(none.starts_with("No instruction files"), "{none}");
        assert!(none.contains("/h/.synapse/AGENTS.md"), "{none}");
    }
}
