//! Issue 4, the live watcher through the real daemon: scripts and skill folders added, edited,
//! deleted and renamed on disk show up in wrappers, index.json and `tools search` without a
//! refresh; the skills folder may be deleted and recreated.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use synapse_tests::{DEADLINE, TestEnv, run, wait_until};

fn skills_root(env: &TestEnv) -> PathBuf {
    env.home().join("skills")
}

fn write_skill(env: &TestEnv, folder: &str, name: &str) -> PathBuf {
    let dir = skills_root(env).join(folder);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Watched skill.\n---\nbody\n"),
    )
    .unwrap();
    dir
}

fn wrapper(env: &TestEnv, cmd: &str) -> PathBuf {
    env.home().join("bin").join(cmd)
}

fn help(env: &TestEnv, cmd: &str) -> String {
    let mut c = Command::new(wrapper(env, cmd));
    env.apply_env(&mut c);
    run(c.arg("-h")).stdout
}

fn index_tools(env: &TestEnv) -> Vec<String> {
    let Ok(text) = fs::read_to_string(skills_root(env).join("index.json")) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    v["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect()
}

fn search(env: &TestEnv, q: &str) -> String {
    env.cli(&["tools", "search", q]).stdout
}

#[test]
fn scripts_added_edited_deleted_and_skill_renamed() {
    let env = TestEnv::new();
    let dir = write_skill(&env, "live", "live");
    env.start_daemon();

    fs::write(
        dir.join("scripts/count.py"),
        "\"\"\"Counts lines in a file.\"\"\"\n",
    )
    .unwrap();
    wait_until(DEADLINE, "new script → wrapper", || {
        wrapper(&env, "skill:live:count").exists()
    });
    wait_until(DEADLINE, "new script → index", || {
        index_tools(&env).contains(&"skill:live:count".to_string())
    });
    let hit = search(&env, "counts lines");
    assert!(
        hit.starts_with("skill:live:count  Counts lines in a file."),
        "{hit}"
    );

    fs::write(
        dir.join("scripts/count.py"),
        "\"\"\"Counts words instead.\"\"\"\n",
    )
    .unwrap();
    wait_until(DEADLINE, "edit → help updated", || {
        help(&env, "skill:live:count").contains("Counts words instead.")
    });

    fs::remove_file(dir.join("scripts/count.py")).unwrap();
    wait_until(DEADLINE, "delete → wrapper gone", || {
        !wrapper(&env, "skill:live:count").exists()
    });
    wait_until(DEADLINE, "delete → index", || {
        index_tools(&env).is_empty()
    });
    assert!(search(&env, "counts").starts_with("No tools match"));

    fs::write(dir.join("scripts/run.sh"), "# Runs it.\n").unwrap();
    wait_until(DEADLINE, "run wrapper", || {
        wrapper(&env, "skill:live:run").exists()
    });
    let renamed = skills_root(&env).join("alive");
    fs::rename(&dir, &renamed).unwrap();
    fs::write(
        renamed.join("SKILL.md"),
        "---\nname: alive\ndescription: Renamed.\n---\n",
    )
    .unwrap();
    wait_until(DEADLINE, "rename → new wrapper", || {
        wrapper(&env, "skill:alive:run").exists()
    });
    wait_until(DEADLINE, "rename → old wrapper gone", || {
        !wrapper(&env, "skill:live:run").exists()
    });
    assert!(search(&env, "skill:.*").starts_with("skill:alive:run"));
}

#[test]
fn skills_folder_deleted_and_recreated_and_user_roots_created_later() {
    let env = TestEnv::new();
    let dir = write_skill(&env, "one", "one");
    fs::write(dir.join("scripts/a.sh"), "# A.\n").unwrap();
    env.start_daemon();
    wait_until(DEADLINE, "initial wrapper", || {
        wrapper(&env, "skill:one:a").exists()
    });

    fs::remove_dir_all(skills_root(&env)).unwrap();
    wait_until(DEADLINE, "folder deleted → wrapper gone", || {
        !wrapper(&env, "skill:one:a").exists()
    });

    let dir = write_skill(&env, "two", "two");
    fs::write(dir.join("scripts/b.sh"), "# B.\n").unwrap();
    wait_until(DEADLINE, "folder recreated → wrapper", || {
        wrapper(&env, "skill:two:b").exists()
    });

    // ~/.claude/skills does not exist at start: watched through its ancestor.
    let claude = env.user_home().join(".claude/skills/cl");
    fs::create_dir_all(claude.join("scripts")).unwrap();
    fs::write(
        claude.join("SKILL.md"),
        "---\nname: cl\ndescription: From Claude.\n---\n",
    )
    .unwrap();
    fs::write(claude.join("scripts/c.py"), "\"\"\"C.\"\"\"\n").unwrap();
    wait_until(DEADLINE, "~/.claude/skills appears → wrapper", || {
        wrapper(&env, "skill:cl:c").exists()
    });
    let list = env.cli(&["skill", "list"]);
    assert!(list.stdout.contains("user:cl "), "{}", list.stdout);
}
