//! The text the agent's `skill` and `tools` commands return, for the shell router to wire in:
//! `skill load <name>` (via [`SkillStore::load_text`] → [`render_load`]), the keyword
//! `skill search` fallback ([`skill_search_text`]), and the usage texts. Also the "closest
//! names" used in not-found errors.

use std::path::Path;

use super::record::SkillRecord;
use super::store::{SkillStore, SkillSummary};

/// Usage of the agent's `skill` command.
pub const SKILL_USAGE: &str = "\
Usage:
  skill search \"<what you need>\"   find skills for a task (name and description of each)
  skill load <name>                 print a skill's SKILL.md instructions and list its bundled files
  skill:load <name>                 same as skill load

A skill is a folder with a SKILL.md; its scripts are commands named skill:<skill>:<script>
(find them with `tools search`, run `<command> -h` for usage). Load a skill before following it;
read its bundled files with `read <skill folder>/<file>` only when the instructions point to them.
";

/// `# Skill: <name>`, the body, then the bundled files (paths only) and the skill's commands.
pub fn render_load(rec: &SkillRecord, body: &str, files: &[String], cut: bool) -> String {
    let mut out = format!("# Skill: {}\n\n{}\n", rec.meta.name, body.trim_end());
    if !files.is_empty() {
        out.push_str(&format!(
            "\n## Bundled files\nIn {}/ (read one with `read {}/<file>` when the instructions need it):\n",
            rec.dir.display(),
            rec.dir.display()
        ));
        for f in files {
            match rec
                .scripts
                .iter()
                .find(|s| f == &format!("scripts/{}", s.file_name))
            {
                Some(s) => out.push_str(&format!("- {f}  (command: {})\n", s.command)),
                None => out.push_str(&format!("- {f}\n")),
            }
        }
        if cut {
            out.push_str("- … more files not listed\n");
        }
    }
    out
}

/// Skills a caller in `cwd` sees matching `query` by keyword, in seed 000's
/// `<available-skills>` form.
pub fn skill_search_text(store: &SkillStore, query: &str, limit: usize, cwd: &Path) -> String {
    if query.trim().is_empty() {
        return SKILL_USAGE.to_string();
    }
    render_available(&store.search_skills_in(query, limit, cwd))
}

/// `<available-skills><skill name="…">description</skill>…</available-skills>`, XML-escaped.
pub fn render_available(skills: &[SkillSummary]) -> String {
    if skills.is_empty() {
        return "<available-skills>\n</available-skills>\nNo skill matches; try other words.\n"
            .to_string();
    }
    let mut out = String::from("<available-skills>\n");
    for s in skills {
        out.push_str(&format!(
            "  <skill name=\"{}\">{}</skill>\n",
            xml_escape(&s.name),
            xml_escape(&s.description)
        ));
    }
    out.push_str("</available-skills>\n");
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Up to three names closest to `wanted`: substring matches first, then small edit distance.
pub fn closest(wanted: &str, names: &[&str]) -> Vec<String> {
    let w = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .filter_map(|n| {
            let d = if n.contains(w.as_str()) || (w.len() >= 3 && w.contains(*n)) {
                0
            } else {
                strsim::levenshtein(&w, n)
            };
            let limit = (w.chars().count().max(n.chars().count()) / 2).max(2);
            (d <= limit).then_some((d, *n))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names() {
        let names = ["pdf-editor", "pdf-tools", "git-helper", "notes"];
        assert_eq!(closest("pdf-edit", &names), vec!["pdf-editor"]);
        assert_eq!(closest("pdf", &names), vec!["pdf-editor", "pdf-tools"]);
        assert_eq!(closest("gti-helper", &names), vec!["git-helper"]);
        assert!(closest("../../etc/passwd", &names).is_empty());
    }

    #[test]
    fn xml_is_escaped() {
        let s = SkillSummary::for_test("a", "x < y & \"z\"");
        assert!(
            render_available(&[s])
                .contains("<skill name=\"a\">x &lt; y &amp; &quot;z&quot;</skill>")
        );
    }
}
