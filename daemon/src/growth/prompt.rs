//! The skill sub-agent's system prompts (seed 003). The author's (create, enhance, evaluate):
//! its role, the commands it writes skills with, the full text of the meta skills, and the
//! metadata of the skills it works with. The searcher's: the candidates and the answer format
//! only (it runs no command and is offered no tool).

use std::path::Path;

use crate::skills::SkillSummary;

/// The agent commands the skill sub-agent's role uses: it reads skills and writes them.
/// Documented by their usage and summary (their `--help` has the rest), so its prompt holds
/// what it works with, not the main agent's manual.
fn authoring_commands() -> [&'static synapse_command::CommandSpec; 3] {
    use crate::shell::commands::{edit, read, write};
    [&read::SPEC, &write::SPEC, &edit::SPEC]
}

/// The commands section of the skill sub-agent's prompt, rendered from the commands' specs.
pub fn commands_doc() -> String {
    let mut out = String::new();
    for spec in authoring_commands() {
        out.push_str(&format!("- `{}`: {}\n", spec.usage, spec.summary));
    }
    out.push_str(
        "\nA script or any text with quotes or backslashes goes in the heredoc form, whose \
         body is written exactly as given. Other agent commands (`glob`, `search`, `skill \
         list`) and the usual programs run too; `<command> --help` documents any of them.",
    );
    out
}

/// Builds the prompt. `skills` are the ones the task concerns (all of them, or the prefiltered
/// candidates when there are many).
pub fn system_prompt(skills_dir: &Path, meta_contents: &str, skills: &[SkillSummary]) -> String {
    let mut metadata = String::new();
    for s in skills {
        metadata.push_str(&format!("- {}: {}\n", s.name, s.description.trim()));
    }
    if metadata.is_empty() {
        metadata.push_str("(no skills yet)\n");
    }
    format!(
        "You are the Skill Sub-Agent of Synapse.\n\n\
         ## 1. Your role\n\
         Manage the skill library: create new skills, enhance existing skills and evaluate \
         skill quality. You work silently; only your final answer is shown.\n\n\
         ## 2. Tools\n\
         You have the one `Bash` tool. Write skills only with `write` and `edit`, and only \
         below the user skills folder {dir} (anything else is refused). New scripts in a \
         skill's scripts/ folder become `skill:<skill>:<script>` commands by themselves.\n\n\
         {commands}\n\n\
         ## 3. Meta skills (full content)\n\
         - To CREATE a skill, follow skill-creator.\n\
         - To ENHANCE a skill, follow enhancing-skills.\n\
         - To EVALUATE a skill, follow evaluating-skills.\n\n\
         {meta_contents}\n\n\
         ## 4. Available skills (metadata)\n{metadata}",
        dir = skills_dir.display(),
        commands = commands_doc(),
    )
}

/// Most bytes of skill metadata in the search sub-agent's prompt (it stays under 8 KB).
pub const SEARCH_METADATA_MAX_BYTES: usize = 6 * 1024;
/// A description in the search prompt is never cut shorter than this many characters.
const SEARCH_DESCRIPTION_MIN_CHARS: usize = 80;

/// The search sub-agent's prompt: its role, the answer format and the candidates' metadata
/// (best first), within [`SEARCH_METADATA_MAX_BYTES`]. It runs no command, so it gets no
/// command docs and no meta skills.
pub fn search_system_prompt(skills: &[SkillSummary]) -> String {
    let flat = |d: &str| d.split_whitespace().collect::<Vec<_>>().join(" ");
    let full: usize = skills
        .iter()
        .map(|s| s.name.len() + flat(&s.description).len() + 4)
        .sum();
    // When everything does not fit, every description gets an equal share.
    let per_skill = (full > SEARCH_METADATA_MAX_BYTES).then(|| {
        (SEARCH_METADATA_MAX_BYTES / skills.len().max(1)).max(SEARCH_DESCRIPTION_MIN_CHARS)
    });
    let mut metadata = String::new();
    for s in skills {
        let mut desc = flat(&s.description);
        // The line's other bytes: "- ", ": ", the newline and a 3-byte "…".
        if let Some(max) = per_skill.map(|m| m.saturating_sub(s.name.len() + 8))
            && desc.chars().count() > max.max(SEARCH_DESCRIPTION_MIN_CHARS)
        {
            let keep = max.max(SEARCH_DESCRIPTION_MIN_CHARS) - 1;
            desc = format!(
                "{}…",
                desc.chars().take(keep).collect::<String>().trim_end()
            );
        }
        let line = format!("- {}: {desc}\n", s.name);
        if metadata.len() + line.len() > SEARCH_METADATA_MAX_BYTES {
            break;
        }
        metadata.push_str(&line);
    }
    if metadata.is_empty() {
        metadata.push_str("(no skills yet)\n");
    }
    format!(
        "You are the Skill Sub-Agent of Synapse, here for one skill search: you pick, from \
         the skills below, the ones that fit a request, by meaning (not only shared words). You run no commands and use no \
         tools; your whole answer is one JSON object:\n\
         {{\"matched_skills\":[{{\"name\":\"...\",\"description\":\"...\"}}]}}\n\
         best first, only names from the list, an empty list when nothing fits.\n\n\
         # Skills (name: description)\n{metadata}"
    )
}

/// What `task:skill:enhance` and the stop hook ask for.
pub const ENHANCE_INSTRUCTIONS: &str = "\
Decide by the evidence in the conversation: create a skill when the task found a reusable \
workflow no skill covers; enhance a skill when the task used one but had to deviate or found a \
better way; otherwise change nothing (simple tasks, or a skill that worked well). Do the work \
with write/edit, then answer with exactly one of these reports and nothing else:

Skill enhancement done:
- Action: created skill
- Name: <name>
- Tools: <commands the skill uses>
- Contents:
  - <one line per point>

Skill enhancement done:
- Action: enhanced skill
- Name: <name>
- Changes:
  - <one line per change>

Skill enhancement analysis done:
- Conclusion: no change needed
- Reason: <one line>";

/// What a search asks for.
pub fn search_prompt(query: &str) -> String {
    format!(
        "Search for skills matching: \"{query}\"\n\
         Match by meaning against the available skills. Use no tools. Answer with JSON only: \
         {{\"matched_skills\":[{{\"name\":\"...\",\"description\":\"...\"}}]}} (best first, empty \
         list when nothing fits)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(i: usize, description: &str) -> SkillSummary {
        SkillSummary::for_test(&format!("skill-number-{i}"), description)
    }

    #[test]
    fn the_authors_prompt_documents_only_the_commands_it_writes_skills_with() {
        let text = system_prompt(Path::new("/h/skills"), "### skill-creator\n", &[]);
        for used in [
            "`read <path>",
            "`write <path>",
            "`edit <path>",
            "### skill-creator",
        ] {
            assert!(text.contains(used), "{used} missing in {text}");
        }
        for unused in ["todo", "web_search", "`job", "task:"] {
            assert!(!text.contains(unused), "{unused} in {text}");
        }
        assert!(text.len() < 3 * 1024, "{} bytes", text.len());
    }

    #[test]
    fn the_search_prompt_is_lean_whatever_the_descriptions() {
        let long = "Parses things carefully. ".repeat(40);
        let skills: Vec<SkillSummary> = (0..50).map(|i| skill(i, &long)).collect();
        let text = search_system_prompt(&skills);
        assert!(text.len() < 8 * 1024, "{}", text.len());
        assert!(text.contains("- skill-number-49: Parses"), "{text}");
        assert!(text.contains("matched_skills"));
        assert!(!text.contains("skill-creator"));
        let short: Vec<SkillSummary> = (0..3).map(|i| skill(i, &long[..120])).collect();
        assert!(search_system_prompt(&short).contains(&long[..119]));
    }
}
