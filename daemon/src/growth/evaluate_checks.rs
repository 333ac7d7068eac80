//! The static half of `skill evaluate`: checks made by reading the skill's files, never by
//! running anything. Each finding names the file and says how to fix it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::skills::script::{Runner, SkillScript};

/// A SKILL.md body longer than this is costly to load (the spec's advice: keep it under 500
/// lines and move details into `references/`).
pub const BODY_MAX_LINES: usize = 500;

/// Spec validity, referenced files, scripts' runners, help of the scripts the skill tells the
/// model to run, description voice, body size.
pub fn structural_checks(
    dir: &Path,
    skill_md: &Path,
    name: &str,
    scripts: &[SkillScript],
) -> Vec<String> {
    let mut findings = Vec::new();
    let text = match synapse_shared::bounded::read_text(
        skill_md,
        None,
        synapse_shared::bounded::SKILL_MD_MAX_BYTES,
    ) {
        Ok(t) => t,
        Err(e) => return vec![format!("{}: {e}", skill_md.display())],
    };
    let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned());
    match synapse_shared::skill::parse_skill_md(skill_md, &text, folder.as_deref().or(Some(name))) {
        Ok(parsed) => {
            findings.extend(parsed.warnings.iter().map(|w| w.to_string()));
            if let Some(why) = first_person(&parsed.meta.description) {
                findings.push(format!(
                    "{}: the description is in the first or second person ({why}); write it in \
                     the third person: what the skill does and when to use it",
                    skill_md.display()
                ));
            }
            let body_lines = text[parsed.body_offset..].lines().count();
            if body_lines > BODY_MAX_LINES {
                findings.push(format!(
                    "{}: the body has {body_lines} lines (more than {BODY_MAX_LINES}); move \
                     details into references/ files",
                    skill_md.display()
                ));
            }
        }
        Err(e) => findings.push(e.to_string()),
    }
    for word in text.split(|c: char| c.is_whitespace() || "()[]`'\"<>,".contains(c)) {
        let word = word.trim_end_matches(['.', ':', ';']);
        if (word.starts_with("scripts/") || word.starts_with("references/"))
            && !word.contains('*')
            && !dir.join(word).exists()
        {
            findings.push(format!("SKILL.md refers to {word}, which does not exist"));
        }
    }
    let instructions = instructions_text(dir, &text);
    for s in scripts {
        let label = format!("scripts/{}", s.rel_path);
        let executable = std::fs::metadata(&s.path)
            .map(|m| m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if s.runner == Runner::Direct && !executable {
            findings.push(format!(
                "{label}: cannot be started (no shebang, no known extension, not executable); \
                 add a `#!` line"
            ));
        }
        // What a user would miss: a script the instructions tell the model to run that cannot
        // say how it is called. Helper modules nobody is told to run need no docstring.
        let told_to_run = instructions.contains(&label)
            || instructions.contains(&s.command)
            || instructions.contains(&format!("{} ", s.file_name));
        if told_to_run && s.doc.summary.is_none() && s.doc.usage_args.is_none() && !s.doc.own_help {
            findings.push(format!(
                "{label}: the skill tells the model to run it, but it has no usage or help; add \
                 a docstring or leading comment with a `Usage:` line (its `{} -h` shows no \
                 description)",
                s.command
            ));
        }
    }
    findings
}

/// Bytes read from each reference file when looking for the scripts the skill tells the
/// model to run.
const REFERENCE_READ_MAX_BYTES: u64 = 256 * 1024;

/// The SKILL.md text plus the Markdown files beside it and under `references/` (where published
/// skills put their step-by-step instructions), bounded.
fn instructions_text(dir: &Path, skill_md: &str) -> String {
    let mut out = skill_md.to_string();
    for folder in [dir.to_path_buf(), dir.join("references")] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "md")
                    && p.file_name().is_some_and(|n| n != "SKILL.md")
                    && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
            })
            .collect();
        files.sort();
        for p in files.into_iter().take(50) {
            let buf = synapse_shared::bounded::read_bytes_head(&p, None, REFERENCE_READ_MAX_BYTES)
                .map(|(head, _)| head)
                .unwrap_or_default();
            out.push('\n');
            out.push_str(&String::from_utf8_lossy(&buf));
        }
    }
    out
}

/// Why `description` reads as first or second person, if it does.
fn first_person(description: &str) -> Option<&'static str> {
    let lower = format!(" {} ", description.to_lowercase());
    let words = [
        (" i ", "\"I\""),
        (" i'm ", "\"I'm\""),
        (" i'll ", "\"I'll\""),
        (" my ", "\"my\""),
        (" we ", "\"we\""),
        (" you can ", "\"you can\""),
    ];
    words
        .iter()
        .find(|(w, _)| lower.contains(w))
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn first_and_second_person_descriptions_are_found() {
        assert_eq!(first_person("I can help you with PDFs."), Some("\"I\""));
        assert_eq!(
            first_person("You can use this for PDFs."),
            Some("\"you can\"")
        );
        assert_eq!(
            first_person("Extracts text from PDFs. Use for invoices."),
            None
        );
    }

    #[test]
    fn only_scripts_the_skill_tells_the_model_to_run_need_help() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("forms");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::create_dir_all(dir.join("references")).unwrap();
        let md = dir.join("SKILL.md");
        std::fs::write(
            &md,
            "---\nname: forms\ndescription: Fills forms. Use for forms.\n---\n# Forms\nSee references/steps.md.\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("references/steps.md"),
            "Run `python scripts/fill.py in.pdf` then `python scripts/check.py`.\n",
        )
        .unwrap();
        for (f, src) in [
            (
                "fill.py",
                "import sys\nif __name__ == '__main__':\n    print(sys.argv)\n",
            ),
            (
                "check.py",
                "import sys\nif __name__ == '__main__':\n    if len(sys.argv) != 2:\n        print('Usage: check.py <fields.json>')\n",
            ),
            (
                "geometry.py",
                "import sys\nif __name__ == '__main__':\n    print(1)\n",
            ),
        ] {
            std::fs::write(dir.join("scripts").join(f), src).unwrap();
        }
        let mut w = Vec::new();
        let scripts = crate::skills::script::scan_scripts("forms", &dir, "", &mut w);
        assert_eq!(scripts.len(), 3);
        let f = structural_checks(&dir, &md, "forms", &scripts);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].starts_with("scripts/fill.py: the skill tells the model to run it"),
            "{f:?}"
        );
    }

    #[test]
    fn a_long_body_is_a_finding() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("long");
        std::fs::create_dir_all(&dir).unwrap();
        let md = dir.join("SKILL.md");
        let body = "line\n".repeat(700);
        std::fs::write(
            &md,
            format!("---\nname: long\ndescription: Does a thing.\n---\n{body}"),
        )
        .unwrap();
        let f = structural_checks(&dir, &md, "long", &[]);
        assert!(f.iter().any(|f| f.contains("700 lines")), "{f:?}");
    }
}
