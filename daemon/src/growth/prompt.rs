//! The skill sub-agent's system prompt (seed 003): its role, its tools, the full text of the
//! meta skills, and the metadata of the skills it works with.

use std::path::Path;

use crate::skills::SkillSummary;

/// Builds the prompt. `skills` are the ones the task concerns (all of them, or the prefiltered
/// candidates when there are many).
pub fn system_prompt(
    skills_dir: &Path,
    commands_doc: &str,
    meta_contents: &str,
    skills: &[SkillSummary],
) -> String {
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
         Manage the skill library: search skills, create new skills, enhance existing skills and \
         evaluate skill quality. You work silently; only your final answer is shown.\n\n\
         ## 2. Tools\n\
         You have the one `Bash` tool with the agent shell commands below. Write skills only \
         with `write` and `edit`, and only below the user skills folder {dir} (anything else is \
         refused). New scripts in a skill's scripts/ folder become `skill:<skill>:<script>` \
         commands by themselves.\n\n{commands_doc}\n\n\
         ## 3. Meta skills (full content)\n\
         - To CREATE a skill, follow skill-creator.\n\
         - To ENHANCE a skill, follow enhancing-skills.\n\
         - To EVALUATE a skill, follow evaluating-skills.\n\n\
         {meta_contents}\n\n\
         ## 4. Available skills (metadata)\n\
         For skill search, match the query against these skills by meaning:\n{metadata}",
        dir = skills_dir.display(),
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
