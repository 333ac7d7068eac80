//! Issue 20 through the real daemon, with fixtures shaped like the published skill collections
//! (written here, not copied): nested `scripts/office/*.py` with a shared package, argparse
//! scripts with no docstring, `set -e` shell scripts, node scripts, a user `skill-creator`, a
//! user `type: meta` skill, Claude Code frontmatter fields; `skill evaluate` never runs a
//! script; the system prompt lists the skills within its budget (10 and 10,000 skills);
//! `skill create` survives SIGKILLs without leaving a stuck half-skill.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, TestEnv, run, wait_until};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The folder of the SKILL.md that `TestEnv::write_skill` returns.
fn skill_dir(skill_md: PathBuf) -> PathBuf {
    skill_md.parent().unwrap().to_path_buf()
}

fn wrapper(env: &TestEnv, cmd: &str) -> PathBuf {
    env.home().join("bin").join(cmd)
}

fn call(env: &TestEnv, cmd: &str, args: &[&str]) -> synapse_tests::Run {
    let mut c = Command::new(wrapper(env, cmd));
    env.apply_env(&mut c);
    run(c.args(args).current_dir(env.root()))
}

#[test]
fn office_style_skill_gets_commands_for_its_programs_only_with_their_own_help() {
    let env = TestEnv::new();
    let dir = skill_dir(env.write_skill(
        "docx",
        "Creates and edits Word documents. Use for .docx files.",
        "# DOCX\n\nUnpack with `python scripts/office/unpack.py in.docx out/`.\n",
    ));
    let marker = env.root().join("ran");
    let m = marker.display();
    write(&dir.join("scripts/office/helpers/__init__.py"), "");
    write(
        &dir.join("scripts/office/helpers/xml_tools.py"),
        "import re\n\ndef pretty(x):\n    return x\n",
    );
    write(
        &dir.join("scripts/office/pack.py"),
        &format!(
            "import argparse\nfrom helpers import xml_tools\n\ndef main():\n    p = argparse.ArgumentParser(description='Pack a folder into a .docx file.')\n    p.add_argument('folder')\n    p.add_argument('-o', '--output')\n    p.parse_args()\n    open('{m}', 'w')\n\nif __name__ == '__main__':\n    main()\n"
        ),
    );
    write(
        &dir.join("scripts/office/unpack.py"),
        &format!("import sys\nfrom helpers import xml_tools\nopen('{m}', 'w')\n"),
    );
    write(
        &dir.join("scripts/build.sh"),
        &format!(
            "#!/bin/bash\n# Exit on error\nset -e\n[ $# -eq 0 ] && {{ echo \"Usage: $0 <dir> [depth]\"; exit 1; }}\ntouch '{m}'\n"
        ),
    );
    write(
        &dir.join("scripts/render.js"),
        &format!("const out = process.argv[2];\nrequire('fs').writeFileSync('{m}', out || '');\n"),
    );
    write(
        &dir.join("scripts/shared.js"),
        "module.exports = { pad: (s) => ' ' + s };\n",
    );
    env.start_daemon();
    let programs = ["office.pack", "office.unpack", "build", "render"];
    wait_until(DEADLINE, "the program wrappers", || {
        programs
            .iter()
            .all(|p| wrapper(&env, &format!("skill:docx:{p}")).exists())
    });
    let bin: Vec<String> = fs::read_dir(env.home().join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("skill:docx:"))
        .collect();
    assert_eq!(
        bin.len(),
        programs.len(),
        "library modules got wrappers: {bin:?}"
    );

    let pack = call(&env, "skill:docx:office.pack", &["-h"]);
    assert_eq!(
        pack.stdout,
        "Usage: skill:docx:office.pack <folder> [--output]\nPack a folder into a .docx file.\n"
    );
    let build = call(&env, "skill:docx:build", &["-h"]);
    assert!(!build.stdout.contains("Exit on error"), "{}", build.stdout);
    assert!(
        build
            .stdout
            .starts_with("Usage: skill:docx:build <dir> [depth]\n"),
        "{}",
        build.stdout
    );
    // argparse answers --help itself: the wrapper passes it through.
    let long = call(&env, "skill:docx:office.pack", &["--help"]);
    assert!(long.success(), "{long:?}");
    assert!(
        long.stdout.contains("show this help message and exit"),
        "{}",
        long.stdout
    );
    assert!(
        long.stdout
            .contains("skill:docx:office.pack - Pack a folder")
    );
    assert!(!marker.exists(), "asking for help ran the script");

    // The skill's own text calls unpack.py as a program: its wrapper runs it.
    let unpacked = call(&env, "skill:docx:office.unpack", &["in.docx"]);
    assert!(unpacked.success(), "{unpacked:?}");
    assert!(marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_skill_creator_stays_reachable_user_meta_skills_steer_and_evaluate_runs_nothing() {
    let env = TestEnv::new();
    env.write_skill(
        "skill-creator",
        "Creates skills the way my team likes them. Use when writing a new skill.",
        "# Our skill creator\n",
    );
    let md = env.write_skill("house-style", "House rules for skills.", "# House style\n");
    let text = fs::read_to_string(&md).unwrap();
    fs::write(&md, text.replacen("---\n", "---\ntype: meta\n", 1)).unwrap();
    let dir = skill_dir(env.write_skill(
        "marker",
        "Writes a marker file. Use to test evaluation.",
        "# Marker\n\nRun `scripts/mark.py`.\n",
    ));
    let marker = env.root().join("MARKER");
    write(
        &dir.join("scripts/mark.py"),
        &format!(
            "\"\"\"Write the marker.\"\"\"\nopen('{}', 'w')\n",
            marker.display()
        ),
    );

    let show = env.cli(&["skill", "show", "skill-creator"]);
    assert!(show.success(), "{show:?}");
    assert!(
        show.stdout.contains("user:skill-creator"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("the way my team likes them"),
        "{}",
        show.stdout
    );
    assert!(
        env.home()
            .join("meta-skills/skill-creator/SKILL.md")
            .is_file()
    );

    let fake = FakeLlm::start(
        Script::new()
            .text("{\"score\": 90, \"findings\": []}")
            .text("I could not review it."),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["skill", "evaluate", "marker", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["score"], 90, "{v}");
    assert_eq!(v["structural"], serde_json::json!([]), "{v}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(
        system.contains("### house-style (user:house-style)"),
        "user meta skill missing"
    );
    assert!(system.contains("### skill-creator (synapse:skill-creator, built in)"));

    let out = env.cli_with_model(&fake, &["skill", "evaluate", "marker"]);
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("(structural only"), "{}", out.stdout);
    assert!(!marker.exists(), "skill evaluate ran a script");
}

fn first_request(env: &TestEnv) -> synapse_tests::fake_llm::RecordedRequest {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(Script::new().text("ok")))
        .unwrap();
    let out = env.cli_with_model(&fake, &["run", "hello"]);
    assert!(out.success(), "{out:?}");
    fake.requests().remove(0)
}

#[test]
fn the_system_prompt_lists_the_usable_skills_within_its_budget() {
    let env = TestEnv::new();
    for i in 0..10 {
        env.write_skill(
            &format!("tool-{i}"),
            &format!("Does task number {i}. Use when asked for task {i}."),
            "# T\n",
        );
    }
    let md = env.write_skill("only-by-hand", "Deploys production.", "# D\n");
    let text = fs::read_to_string(&md).unwrap();
    fs::write(
        &md,
        text.replacen("---\n", "---\ndisable-model-invocation: true\n", 1),
    )
    .unwrap();
    let req = first_request(&env);
    let system = req.system_text().unwrap();
    assert!(system.contains("# Available skills"), "{system}");
    assert!(system.contains("- tool-7: Does task number 7. Use when asked for task 7.\n"));
    assert!(!system.contains("only-by-hand"));
    assert!(!system.contains("more skills not listed"));
    // The bare prompt (≤ 12 KB, every agent command in full) and the listing's budget.
    assert!(
        req.body_len <= 12 * 1024 + 2048 + 512,
        "first request is {} bytes",
        req.body_len
    );
}

#[test]
fn with_ten_thousand_skills_the_prompt_keeps_its_budget_and_points_to_search() {
    let env = TestEnv::new();
    let skills = env.home().join("skills");
    for i in 0..10_000 {
        write(
            &skills.join(format!("bulk-{i}/SKILL.md")),
            &format!(
                "---\nname: bulk-{i}\ndescription: Bulk skill {i} for load tests.\n---\n# B\n"
            ),
        );
    }
    let req = first_request(&env);
    let system = req.system_text().unwrap();
    assert!(system.contains("more skills not listed"), "{system}");
    assert!(system.contains("skill search"));
    assert!(
        req.body_len <= 12 * 1024 + 2048 + 512,
        "first request is {} bytes",
        req.body_len
    );
}

#[test]
fn skill_create_killed_at_any_moment_leaves_no_stuck_half_skill() {
    let env = TestEnv::new();
    let skills = env.home().join("skills");
    for i in 0..8 {
        let pid = env.daemon_pid().unwrap_or_else(|| env.start_daemon());
        let mut create = env.synapse();
        create.args([
            "skill",
            "create",
            &format!("made-{i}"),
            "-d",
            "Made in a loop.",
        ]);
        let child = create.spawn().unwrap();
        // SIGKILL right away on even rounds, once the create has reached the disk on odd ones.
        if i % 2 == 1 {
            wait_until(DEADLINE, "the create to reach the disk", || {
                fs::read_dir(&skills).unwrap().flatten().any(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.ends_with(&format!("made-{i}"))
                        || n.starts_with(&format!(".creating-made-{i}"))
                })
            });
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        wait_until(DEADLINE, "the killed daemon to exit", || {
            !synapse_tests::pid_alive(pid)
        });
        let _ = child.wait_with_output();
    }
    if env.daemon_pid().is_none() {
        env.start_daemon();
    }
    for e in fs::read_dir(&skills).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            assert!(
                !name.starts_with(".creating-"),
                "staging folder left: {name}"
            );
            assert!(
                e.path().join("SKILL.md").is_file(),
                "{name} has no SKILL.md"
            );
        }
    }
    for i in 0..8 {
        let name = format!("made-{i}");
        if !skills.join(&name).exists() {
            let again = env.cli(&["skill", "create", &name, "-d", "Made again."]);
            assert!(again.success(), "{name} is stuck: {again:?}");
        }
    }
}
