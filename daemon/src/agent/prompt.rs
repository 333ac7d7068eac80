//! The main agent's system prompt (seed 001 §4.3.2): role, the three command layers, the full
//! usage of every agent shell command (rendered from the same specs as their `--help`), how to
//! find extension commands and skills, "the filesystem is your memory", and environment facts.

use std::path::Path;

/// Facts about where the agent runs.
#[derive(Debug, Clone)]
pub struct PromptEnv<'a> {
    pub cwd: &'a Path,
    pub os: &'a str,
    pub shell: &'a str,
    /// Today's date, `YYYY-MM-DD`.
    pub date: &'a str,
    pub model: &'a str,
}

const ROLE: &str = "You are Synapse, a general-purpose agent working in the user's terminal. \
You get things done by running shell commands through your single tool, `Bash`, and you grow: \
what you learn is kept as skills that become commands you can run next time.";

const LAYERS: &str = "# How you act

Everything you do is a `Bash` tool call. Commands fall into three layers:

1. **Agent shell commands** (below) run inside Synapse and are fast. Prefer them to `cat`, \
`sed -i`, `find` and `grep` for files: paths follow the shell's current directory, writes are \
atomic, output has line numbers.
2. **Extension commands** `mcp:<server>:<tool>` (the user's MCP servers) and \
`skill:<skill>:<script>` (skill scripts) are executables on PATH, usable in pipelines too. Find \
them with `tools search <keyword or regex>`; run `<command> -h` (usage) or `--help` (full \
document) before first use.
3. **Native shell**: everything else runs in a persistent bash. `cd` and `export` persist, stdin \
is closed (pass `--yes`/`-y` instead of waiting for input), commands time out after 120 s \
(`bash --timeout SECS '<cmd>'` allows more), and long output is cut in the middle with the whole \
saved to a file the result names. Servers and longer work go in background jobs (`job`).

Take one step at a time and read each result. On a non-zero exit, fix the cause instead of \
repeating the command.";

const SKILLS: &str = "# Skills

Skills are folders with a SKILL.md that teach you a task (and may bundle scripts exposed as \
`skill:<skill>:<script>` commands). When a task needs domain knowledge or a repeatable \
procedure:
1. `skill search \"<what you need>\"` (or `tools search <keyword>`) to find candidates;
2. `skill load <name>` to read the chosen skill's instructions;
3. follow them, using its `skill:*` commands where it offers them.

# Memory

The filesystem is your memory. Keep important results, notes and new tools in files, organise \
them sensibly, and reuse them instead of redoing work.";

/// Renders the full system prompt. `commands_doc` is the agent shell commands' documentation
/// from the command registry.
pub fn system_prompt(env: &PromptEnv<'_>, commands_doc: &str) -> String {
    system_prompt_with_skills(env, commands_doc, "")
}

/// [`system_prompt`] with the skill awareness section (`crate::skills` renders it: the skills
/// this session may use, within its budget) after the skills instructions.
pub fn system_prompt_with_skills(
    env: &PromptEnv<'_>,
    commands_doc: &str,
    skills_awareness: &str,
) -> String {
    let mut out = String::with_capacity(ROLE.len() + LAYERS.len() + commands_doc.len() + 1024);
    out.push_str(ROLE);
    out.push_str("\n\n");
    out.push_str(LAYERS);
    out.push_str("\n\n");
    out.push_str(commands_doc.trim_end());
    out.push_str("\n\n");
    out.push_str(SKILLS);
    if !skills_awareness.trim().is_empty() {
        out.push_str("\n\n");
        out.push_str(skills_awareness.trim_end());
    }
    out.push_str("\n\n# Environment\n\n");
    out.push_str(&format!(
        "- Working directory: {}\n- Operating system: {}\n- Shell: {}\n- Today's date: {}\n",
        env.cwd.display(),
        env.os,
        env.shell,
        env.date,
    ));
    if !env.model.is_empty() {
        out.push_str(&format!("- Model: {}\n", env.model));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::builtin_registry;

    fn render() -> String {
        let env = PromptEnv {
            cwd: Path::new("/work/project"),
            os: "linux",
            shell: "bash",
            date: "2026-11-22",
            model: "test-model",
        };
        system_prompt(&env, &builtin_registry().system_prompt_section())
    }

    #[test]
    fn prompt_matches_snapshot() {
        insta::assert_snapshot!(render());
    }

    #[test]
    fn prompt_documents_every_agent_command_and_fits_the_budget() {
        let prompt = render();
        for cmd in [
            "### read",
            "### write",
            "### edit",
            "### glob",
            "### search",
            "### bash",
        ] {
            assert!(prompt.contains(cmd), "{cmd} missing");
        }
        assert!(prompt.contains("The filesystem is your memory"));
        assert!(
            prompt.len() <= 9 * 1024,
            "system prompt is {} bytes",
            prompt.len()
        );
    }
}
