//! Issue 4, Skill2Bash through the real daemon: wrappers answer `-h`/`--help` from the script's
//! docstring without running it (.py, .sh, .js), pass arguments verbatim, and refuse script
//! names that cannot be commands.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use synapse_tests::{DEADLINE, TestEnv, run, wait_until};

fn skill(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.home().join("skills").join(name);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Test skill {name}.\n---\n# {name}\n"),
    )
    .unwrap();
    dir
}

fn wrapper(env: &TestEnv, cmd: &str) -> PathBuf {
    env.home().join("bin").join(cmd)
}

fn call(env: &TestEnv, cmd: &str, args: &[&str], cwd: &Path) -> synapse_tests::Run {
    let mut c = Command::new(wrapper(env, cmd));
    env.apply_env(&mut c);
    run(c.args(args).current_dir(cwd))
}

#[test]
fn wrappers_print_help_from_docstrings_without_running_the_script() {
    let env = TestEnv::new();
    let dir = skill(&env, "docs");
    let marker = env.root().join("ran");
    let m = marker.display();
    fs::write(
        dir.join("scripts/extract.py"),
        format!("#!/usr/bin/env python3\n\"\"\"Extract text from PDF files.\n\nUsage:\n    extract.py <pdf> [--pages N]\n\nParameters:\n    pdf: input file\n\"\"\"\nopen('{m}', 'w')\n"),
    )
    .unwrap();
    fs::write(
        dir.join("scripts/greet.sh"),
        format!("#!/bin/bash\n# Greets someone politely.\n#\n# Usage: greet.sh NAME\n# Examples:\n#   greet.sh bob\ntouch '{m}'\n"),
    )
    .unwrap();
    fs::write(
        dir.join("scripts/ports.js"),
        format!("/**\n * Lists open ports.\n *\n * Usage: ports.js [--json]\n */\nrequire('fs').writeFileSync('{m}', '')\n"),
    )
    .unwrap();
    env.start_daemon();
    wait_until(DEADLINE, "three wrappers", || {
        ["extract", "greet", "ports"]
            .iter()
            .all(|s| wrapper(&env, &format!("skill:docs:{s}")).exists())
    });

    let cases = [
        (
            "extract",
            "Usage: skill:docs:extract <pdf> [--pages N]\nExtract text from PDF files.\n",
            "pdf: input file",
        ),
        (
            "greet",
            "Usage: skill:docs:greet NAME\nGreets someone politely.\n",
            "Examples:\n  greet.sh bob",
        ),
        (
            "ports",
            "Usage: skill:docs:ports [--json]\nLists open ports.\n",
            "Usage: ports.js [--json]",
        ),
    ];
    for (script, short, in_full) in cases {
        let cmd = format!("skill:docs:{script}");
        let h = call(&env, &cmd, &["-h"], &env.workdir());
        assert!(h.success(), "{h:?}");
        assert_eq!(h.stdout, short);
        let full = call(&env, &cmd, &["--help"], &env.workdir());
        assert!(
            full.stdout.starts_with(&format!("{cmd} - ")),
            "{}",
            full.stdout
        );
        assert!(full.stdout.contains(in_full), "{}", full.stdout);
    }
    assert!(!marker.exists(), "help must not run the script");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &fs::metadata(wrapper(&env, "skill:docs:greet"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn arguments_reach_the_script_literally_and_bad_names_are_skipped() {
    let env = TestEnv::new();
    let dir = skill(&env, "args");
    fs::write(
        dir.join("scripts/echo.sh"),
        "for a in \"$@\"; do printf '<%s>\\n' \"$a\"; done\n",
    )
    .unwrap();
    fs::write(dir.join("scripts/a;b.sh"), "echo injected\n").unwrap();
    env.start_daemon();
    wait_until(DEADLINE, "echo wrapper", || {
        wrapper(&env, "skill:args:echo").exists()
    });

    let work = env.workdir();
    fs::create_dir_all(work.join("x")).unwrap();
    let out = call(
        &env,
        "skill:args:echo",
        &["$HOME; rm -rf x", "`id`", "--help-me", ""],
        &work,
    );
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "<$HOME; rm -rf x>\n<`id`>\n<--help-me>\n<>\n");
    assert!(work.join("x").exists(), "the argument was executed");

    let names: Vec<String> = fs::read_dir(env.home().join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["skill:args:echo".to_string()]);
    let refresh = env.cli(&["tools", "refresh", "skills"]);
    assert!(refresh.success(), "{refresh:?}");
    assert!(
        // Synapse's meta skills live apart (synapse:*) and are not user skills.
        refresh.stdout.contains("1 skills, 1 commands"),
        "{}",
        refresh.stdout
    );
    assert!(
        refresh
            .stderr
            .contains("a;b.sh: skipped: \"a;b\" cannot be a command name"),
        "{}",
        refresh.stderr
    );
}
