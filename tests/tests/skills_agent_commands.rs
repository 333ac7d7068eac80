//! The skill system as the model reaches it: `skill search`, `skill load`, `skill:load` and
//! `tools search` through the Bash tool (`synapse exec`) against a real daemon.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::{DEADLINE, TestEnv, wait_until};

#[test]
fn the_model_finds_loads_and_runs_a_skill_through_bash() {
    let env = TestEnv::new();
    let skill = env.home().join("skills/analyzing-logs");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: analyzing-logs\ndescription: Count errors in log files and summarise them. Use when asked about logs.\n---\n# Analyzing logs\n\nRun `skill:analyzing-logs:count_errors <file>`.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/count_errors.sh"),
        "#!/bin/sh\n# Count ERROR lines in a log file.\n# Usage: count_errors <file>\ngrep -c ERROR \"$1\"\n",
    )
    .unwrap();
    env.start_daemon();
    wait_until(DEADLINE, "the skill's wrapper", || {
        env.home()
            .join("bin/skill:analyzing-logs:count_errors")
            .exists()
    });

    let found = env.cli(&["exec", "skill search \"count errors in logs\""]);
    assert!(found.success(), "{found:?}");
    assert!(
        found.stdout.contains("<skill name=\"analyzing-logs\">"),
        "{}",
        found.stdout
    );

    for cmd in ["skill load analyzing-logs", "skill:load analyzing-logs"] {
        let loaded = env.cli(&["exec", cmd]);
        assert!(
            loaded.stdout.starts_with("# Skill: analyzing-logs"),
            "{}",
            loaded.stdout
        );
        assert!(
            loaded.stdout.contains("skill:analyzing-logs:count_errors"),
            "{}",
            loaded.stdout
        );
    }
    let missing = env.cli(&["exec", "skill load analyzing-log"]);
    assert_eq!(missing.code, Some(1));
    assert!(
        missing.stdout.contains("analyzing-logs"),
        "closest name suggested: {}",
        missing.stdout
    );

    let tools = env.cli(&["exec", "tools search errors"]);
    assert!(
        tools.stdout.contains("skill:analyzing-logs:count_errors"),
        "{}",
        tools.stdout
    );
    let agent = env.cli(&["exec", "tools search todo"]);
    assert!(
        agent.stdout.contains("todo"),
        "agent commands are listed too: {}",
        agent.stdout
    );

    std::fs::write(env.workdir().join("app.log"), "ok\nERROR a\nERROR b\n").unwrap();
    let ran = env.cli(&["exec", "skill:analyzing-logs:count_errors app.log"]);
    assert_eq!(ran.stdout.trim(), "2", "{ran:?}");
}
