//! Issue 38, skills written for other clients load as Claude Code loads them, through the real
//! daemon: an unquoted value containing `: ` is read again quoted (the Agent Skills client
//! guide's retry) and the skill loads with a notice naming `path:line`; a frontmatter the retry
//! cannot mend stays BROKEN with `path:line`; a title-case `name:` ("Agent Development") loads
//! by its folder name with a notice, also from `~/.claude/skills`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use synapse_tests::TestEnv;

fn skill_at(dir: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("SKILL.md");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn colon_values_titles_and_still_broken_skills() {
    let env = TestEnv::new();
    let colon = skill_at(
        &env.home().join("skills/code-review"),
        "---\nname: code-review\ndescription: Reviews a diff. Use when: the user asks for a review\n---\nReview it.\n",
    );
    let broken = skill_at(
        &env.home().join("skills/still-broken"),
        "---\nname: still-broken\ndescription: a: b\nmetadata: [unclosed\n---\nbody\n",
    );
    let titled = skill_at(
        &env.user_home().join(".claude/skills/agent-development"),
        "---\nname: Agent Development\ndescription: Builds agents. Use when the user writes an agent.\n---\nBuild it.\n",
    );

    let list = env.cli(&["skill", "list"]);
    assert!(list.success(), "{}{}", list.stdout, list.stderr);
    let line = |name: &str| {
        list.stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} missing from the list:\n{}", list.stdout))
            .to_string()
    };
    assert!(!line("code-review").contains("BROKEN"), "{}", list.stdout);
    assert!(
        !line("agent-development").contains("BROKEN"),
        "{}",
        list.stdout
    );
    let bad = line("still-broken");
    assert!(bad.contains("BROKEN"), "{bad}");
    assert!(
        bad.contains(&format!("{}:", broken.display())) || bad.contains("SKILL.md:"),
        "{bad}"
    );

    // The skills load: the model may load them by name, the colon kept in the description.
    let shown = env.cli(&["skill", "show", "code-review"]);
    assert!(shown.success(), "{}{}", shown.stdout, shown.stderr);
    assert!(
        shown
            .stdout
            .contains("Use when: the user asks for a review"),
        "{}",
        shown.stdout
    );
    // …with a notice naming the line that was read as if quoted.
    assert!(
        shown.stdout.contains(&format!("{}:3:", colon.display())),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("unquoted value"), "{}", shown.stdout);

    let shown = env.cli(&["skill", "show", "agent-development"]);
    assert!(shown.success(), "{}{}", shown.stdout, shown.stderr);
    assert!(
        shown.stdout.contains(&format!("{}:2:", titled.display())),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("using the folder name"),
        "{}",
        shown.stdout
    );

    let load = env.cli(&["exec", "skill load agent-development"]);
    assert!(load.success(), "{}{}", load.stdout, load.stderr);
    assert!(load.stdout.contains("Build it."), "{}", load.stdout);
}
