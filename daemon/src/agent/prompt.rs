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
3. **Native shell**: everything else (`ls`/`cd`/`pwd`, `grep`/`find`, `git`, `curl`/`wget` and \
every other program) runs in a persistent bash. `cd` and `export` persist, stdin is closed (pass `--yes`/`-y` instead of waiting for input), commands time out after 120 s \
(`bash --timeout SECS '<cmd>'` allows more), and long output is cut in the middle with the whole \
saved to a file the result names. Servers and longer work go in background jobs (`job`).

Take one step at a time and read each result. On a non-zero exit, fix the cause instead of \
repeating the command.";

const SKILLS: &str = "# Skills

Skills are folders with a SKILL.md that teach you a task; their scripts are \
`skill:<skill>:<script>` commands. When a task needs domain knowledge or a repeatable \
procedure, find one with `skill search \"<what you need>\"`, read it with `skill load <name>` \
and follow it.";

const MEMORY: &str = "# Memory

The filesystem is your memory. Keep important results, notes and new tools in files, organise \
them sensibly, and reuse them instead of redoing work.";

/// `prompt` with its role paragraph replaced by `role` (`synapse run --system-prompt`): what
/// follows it, the tool's and the commands' documentation, stays, since the model cannot act
/// without it.
pub fn with_role(prompt: &str, role: &str) -> String {
    let rest = prompt.strip_prefix(ROLE).unwrap_or(prompt);
    let rest = rest.trim_start_matches('\n');
    format!("{}\n\n{rest}", role.trim_end())
}

/// The role of a session without its tool (`synapse run --disallowedTools Bash`).
const ROLE_WITHOUT_TOOL: &str = "You are Synapse, a general-purpose agent working in the \
user's terminal. In this session you have no tools: you cannot run commands or read files, so \
answer from what you know and what the user gives you.";

/// `prompt` for a session whose `Bash` tool was removed (`--disallowedTools Bash`): the role
/// says there are no tools, and everything from "# How you act" up to the environment (the
/// three layers, every command's documentation, skills, memory and MCP servers, all reached
/// through the tool) is left out. The environment and what follows it (the project's
/// instructions) stay. `role` (`--system-prompt`) replaces the role paragraph.
pub fn without_tool(prompt: &str, role: Option<&str>) -> String {
    let tail = prompt
        .find("\n\n# Environment\n")
        .map_or("", |at| &prompt[at..]);
    format!("{}{tail}", role.map_or(ROLE_WITHOUT_TOOL, str::trim_end))
}

/// The parts of the prompt that depend on the session (fixed at its first turn, see
/// [`super::turn_prompt`]); empty ones are left out.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptSections<'a> {
    /// The stable skills listing (`crate::skills` renders it).
    pub skills: &'a str,
    /// `# Connected MCP servers` with their commands (`synapse_mcp::instructions` renders it).
    pub servers: &'a str,
    /// Connected servers that keep memory, for the Memory section.
    pub memory_servers: &'a [String],
    /// The environment's git lines (`crate::workspace::git` renders them).
    pub git: &'a str,
}

/// Renders the full system prompt. `commands_doc` is the agent shell commands' documentation
/// from the command registry.
pub fn system_prompt(env: &PromptEnv<'_>, commands_doc: &str) -> String {
    system_prompt_with_skills(env, commands_doc, "")
}

/// [`system_prompt`] with the skills listing (`crate::skills` renders it) after the skills
/// instructions.
pub fn system_prompt_with_skills(
    env: &PromptEnv<'_>,
    commands_doc: &str,
    skills_awareness: &str,
) -> String {
    system_prompt_with_sections(
        env,
        commands_doc,
        &PromptSections {
            skills: skills_awareness,
            ..PromptSections::default()
        },
    )
}

/// The full system prompt with the session's sections. What is the same for every session
/// comes first, so sessions of other projects share that prefix in a provider's cache too.
pub fn system_prompt_with_sections(
    env: &PromptEnv<'_>,
    commands_doc: &str,
    sections: &PromptSections<'_>,
) -> String {
    let mut out = String::with_capacity(ROLE.len() + LAYERS.len() + commands_doc.len() + 4096);
    out.push_str(ROLE);
    out.push_str("\n\n");
    out.push_str(LAYERS);
    out.push_str("\n\n");
    out.push_str(commands_doc.trim_end());
    out.push_str("\n\n");
    out.push_str(SKILLS);
    push_section(&mut out, sections.skills);
    out.push_str("\n\n");
    out.push_str(MEMORY);
    if !sections.memory_servers.is_empty() {
        let names: Vec<String> = sections
            .memory_servers
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        out.push_str(&format!(
            "\n\nA memory MCP server is connected ({}): look there first for what earlier \
             sessions kept (`tools search <server>` lists its `mcp:<server>:*` commands), and \
             store lasting facts in it as well as in files.",
            names.join(", ")
        ));
    }
    push_section(&mut out, sections.servers);
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
    out.push_str(sections.git);
    out
}

fn push_section(out: &mut String, section: &str) {
    if !section.trim().is_empty() {
        out.push_str("\n\n");
        out.push_str(section.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::builtin_registry;

    #[test]
    fn without_the_tool_the_prompt_keeps_the_environment_and_drops_the_commands() {
        let full = render();
        let bare = without_tool(&full, None);
        assert!(bare.starts_with("You are Synapse"), "{bare}");
        assert!(bare.contains("no tools"), "{bare}");
        assert!(bare.contains("# Environment"), "{bare}");
        for gone in [
            "# How you act",
            "## Agent shell commands",
            "# Skills",
            "`Bash`",
        ] {
            assert!(!bare.contains(gone), "{gone} in {bare}");
        }
        // --system-prompt still replaces the role.
        let custom = without_tool(&full, Some("You are Terse.\n"));
        assert!(
            custom.starts_with("You are Terse.\n\n# Environment"),
            "{custom}"
        );
    }

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
            prompt.len() <= 12 * 1024,
            "system prompt is {} bytes",
            prompt.len()
        );
    }
}
