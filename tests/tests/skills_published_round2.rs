//! Issue 31's skill items through the real daemon, with fixtures written here in the shapes the
//! published collections use (never copied): a description over the spec's 1,024 characters
//! loads with a warning and reaches the model; library modules (functions only, a `__main__`
//! that only raises) get no wrapper while an argparse-only script's `-h` shows its description;
//! `skill evaluate` scores a well-made skill with undocumented helpers well and names only a
//! script the skill tells the model to run without usage; the user's `index.json` keeps the
//! user's skill when a project has a same-named one, every entry with a `version`; `tools
//! refresh skills` warns about the caller's workspace only; `SYNAPSE_SKILLS_DIR` in force is
//! shown and a client whose value differs is told to restart the daemon.

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

fn skill_dir(skill_md: PathBuf) -> PathBuf {
    skill_md.parent().unwrap().to_path_buf()
}

fn wrappers_of(env: &TestEnv, skill: &str) -> Vec<String> {
    let prefix = format!("skill:{skill}:");
    let mut names: Vec<String> = fs::read_dir(env.home().join("bin"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn call(env: &TestEnv, cmd: &str, args: &[&str]) -> synapse_tests::Run {
    let mut c = Command::new(env.home().join("bin").join(cmd));
    env.apply_env(&mut c);
    run(c.args(args).current_dir(env.root()))
}

/// A description of exactly `len` characters: what and when, then more detail, as long
/// reference skills write them.
fn long_description(len: usize) -> String {
    let mut d = String::from(
        "Answers questions about the Widget HTTP API and its SDKs: endpoints, parameters, \
         streaming, errors, rate limits, pagination and version migration. Use when code \
         calls the Widget API or the user asks how to.",
    );
    let filler = " Covers the Python, TypeScript, Go and Java clients, their retries and timeouts.";
    while d.chars().count() < len {
        d.push_str(filler);
    }
    let mut d: String = d.chars().take(len - 1).collect();
    d.push('.');
    d
}

#[test]
fn a_description_over_the_limit_loads_with_a_warning_and_is_listed_to_the_model() {
    let env = TestEnv::new();
    let description = long_description(1068);
    assert_eq!(description.chars().count(), 1068);
    env.write_skill(
        "widget-api",
        &format!("\"{description}\""),
        "# Widget API\n\nRead the endpoint table first.\n",
    );

    let list = env.cli(&["skill", "list"]);
    assert!(list.success(), "{list:?}");
    assert!(!list.stdout.contains("BROKEN"), "{}", list.stdout);
    let row = list
        .stdout
        .lines()
        .position(|l| l.starts_with("user:widget-api"))
        .unwrap_or_else(|| panic!("the skill is not listed:\n{}", list.stdout));
    let warning = list.stdout.lines().nth(row + 1).unwrap_or("");
    assert!(
        warning.contains("warning:")
            && warning.contains("`description` has 1068 characters, over the limit of 1024"),
        "{}",
        list.stdout
    );

    let show = env.cli(&["skill", "show", "widget-api"]);
    assert!(show.success(), "{show:?}");
    assert!(
        show.stdout.contains("warnings:") && show.stdout.contains("over the limit of 1024"),
        "{}",
        show.stdout
    );
    let load = env.cli(&["skill", "load", "widget-api"]);
    assert!(load.success(), "{load:?}");
    assert!(
        load.stdout.contains("Read the endpoint table first."),
        "{}",
        load.stdout
    );

    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(Script::new().text("ok")))
        .unwrap();
    let out = env.cli_with_model(&fake, &["run", "how do I page through Widget API results"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(
        system.contains("widget-api") && system.contains("Answers questions about the Widget"),
        "the skill is not listed to the model:\n{system}"
    );
}

#[test]
fn library_modules_get_no_wrapper_and_argparse_descriptions_are_the_help() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    let m = marker.display();
    let office = skill_dir(env.write_skill(
        "sheets",
        "Edits spreadsheet files. Use for .xlsx work.",
        "# Sheets\n\nRecalculate with `python scripts/recalc.py book.xlsx`.\nThe checks live in \
         scripts/checks/schema.py.\n",
    ));
    write(
        &office.join("scripts/recalc.py"),
        &format!(
            "\"\"\"Recalculate every formula of a workbook.\n\nUsage: recalc.py <book.xlsx>\n\"\"\"\nimport sys\nfrom cells import parse_ref\n\ndef main():\n    open('{m}', 'w')\n\nif __name__ == \"__main__\":\n    main()\n"
        ),
    );
    // Functions only, with a shebang as shared helpers often have.
    write(
        &office.join("scripts/cells.py"),
        "#!/usr/bin/env python3\nimport re\n\nREF = re.compile(r'([A-Z]+)([0-9]+)')\n\ndef parse_ref(text):\n    return REF.match(text)\n",
    );
    // A module that refuses to run, named by SKILL.md as a file.
    write(
        &office.join("scripts/checks/schema.py"),
        "\"\"\"Schema checks shared by the tools.\"\"\"\nimport sys\n\nclass SchemaCheck:\n    def run(self):\n        return []\n\n\nif __name__ == \"__main__\":\n    raise RuntimeError(\"This module should not be run directly.\")\n",
    );
    write(&office.join("scripts/checks/__init__.py"), "");

    let tables = skill_dir(env.write_skill(
        "tables",
        "Merges CSV tables. Use when joining CSV files.",
        "# Tables\n",
    ));
    write(
        &tables.join("scripts/merge.py"),
        &format!(
            "#!/usr/bin/env python3\nimport argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser(\n        description=(\n            \"Merge two CSV files \"\n            \"on a shared key column.\"\n        ),\n    )\n    parser.add_argument(\"left\")\n    parser.add_argument(\"right\")\n    parser.add_argument(\"--key\", default=\"id\")\n    parser.parse_args()\n    open('{m}', 'w')\n\n\nif __name__ == \"__main__\":\n    main()\n"
        ),
    );
    env.start_daemon();
    wait_until(DEADLINE, "the program wrappers", || {
        !wrappers_of(&env, "sheets").is_empty() && !wrappers_of(&env, "tables").is_empty()
    });
    assert_eq!(
        wrappers_of(&env, "sheets"),
        ["skill:sheets:recalc"],
        "library modules got wrappers"
    );
    let recalc = call(&env, "skill:sheets:recalc", &["-h"]);
    assert_eq!(
        recalc.stdout,
        "Usage: skill:sheets:recalc <book.xlsx>\nRecalculate every formula of a workbook.\n"
    );

    let merge = call(&env, "skill:tables:merge", &["-h"]);
    assert!(merge.success(), "{merge:?}");
    assert_eq!(
        merge.stdout,
        "Usage: skill:tables:merge <left> <right> [--key]\nMerge two CSV files on a shared key column.\n"
    );
    let search = env.cli(&["tools", "search", "merge"]);
    assert!(
        search
            .stdout
            .contains("Merge two CSV files on a shared key column."),
        "{}",
        search.stdout
    );
    assert!(
        !search.stdout.contains("no description"),
        "{}",
        search.stdout
    );
    assert!(!marker.exists(), "asking for help ran a script");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluate_scores_a_well_made_skill_with_undocumented_helpers_well() {
    let env = TestEnv::new();
    let dir = skill_dir(env.write_skill(
        "forms",
        "Fills PDF forms from JSON field values. Use when a user wants a PDF form filled in.",
        "# Forms\n\n## Quick start\n\n```bash\npython scripts/fill_fields.py form.pdf values.json out.pdf\n```\n\nSee references/layout.md for forms without fields.\n",
    ));
    write(
        &dir.join("references/layout.md"),
        "# Forms without fields\n\nRun `python scripts/fill_fields.py --annotate form.pdf values.json out.pdf`.\n",
    );
    write(
        &dir.join("scripts/fill_fields.py"),
        "\"\"\"Fill the fields of a PDF form.\n\nUsage: fill_fields.py [--annotate] <form.pdf> <values.json> <out.pdf>\n\"\"\"\nimport sys\nimport geometry, pdf_io, values, render\n\nif __name__ == \"__main__\":\n    pdf_io.write(sys.argv[1:])\n",
    );
    // Helpers the filler imports: no docstrings, each with a self-test entry point, so they are
    // commands too — but nothing tells the model to run them.
    for helper in ["geometry", "pdf_io", "values", "render"] {
        write(
            &dir.join(format!("scripts/{helper}.py")),
            "import sys\n\ndef write(args):\n    return args\n\nif __name__ == \"__main__\":\n    print(write(sys.argv[1:]))\n",
        );
    }
    env.start_daemon();
    wait_until(DEADLINE, "the skill's commands", || {
        wrappers_of(&env, "forms").len() == 5
    });

    let fake = FakeLlm::start(
        Script::new()
            .text("{\"score\": 90, \"findings\": []}")
            .text("{\"score\": 90, \"findings\": []}"),
    )
    .await
    .unwrap();
    let out = env.cli_with_model(&fake, &["skill", "evaluate", "forms", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert!(v["score"].as_u64().unwrap() >= 80, "{v}");
    let text = v["structural"].to_string();
    for helper in ["geometry", "pdf_io", "values", "render"] {
        assert!(
            !text.contains(helper),
            "helper {helper} listed as a fault: {v}"
        );
    }
    assert_eq!(v["structural"], serde_json::json!([]), "{v}");

    // The skill now tells the model to run a script that cannot say how it is called.
    let md = dir.join("SKILL.md");
    let body = fs::read_to_string(&md).unwrap();
    fs::write(
        &md,
        body + "\nThen check the result with `python scripts/verify.py out.pdf`.\n",
    )
    .unwrap();
    write(
        &dir.join("scripts/verify.py"),
        "import sys\n\nif __name__ == \"__main__\":\n    print(sys.argv)\n",
    );
    wait_until(DEADLINE, "the new command", || {
        wrappers_of(&env, "forms").contains(&"skill:forms:verify".to_string())
    });
    let out = env.cli_with_model(&fake, &["skill", "evaluate", "forms", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let findings = v["structural"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    let finding = findings[0].as_str().unwrap();
    assert!(
        finding.starts_with(
            "scripts/verify.py: the skill tells the model to run it, but it has no usage or help"
        ),
        "{finding}"
    );
    assert_eq!(v["score"], 75, "{v}");
}

/// A project folder with a `.claude/skills/<name>` of its own.
fn project_with_skill(env: &TestEnv, project: &str, name: &str, description: &str) -> PathBuf {
    let root = env.workdir().join(project);
    fs::create_dir_all(root.join(".git")).unwrap();
    write(
        &root.join(format!(".claude/skills/{name}/SKILL.md")),
        &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    );
    root
}

fn index(env: &TestEnv) -> serde_json::Value {
    let text = fs::read_to_string(env.home().join("skills/index.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_user_index_holds_the_users_skills_with_versions_after_a_project_opens() {
    let env = TestEnv::new();
    let notes = skill_dir(env.write_skill(
        "notes",
        "Keeps the user's notes. Use when asked to note something.",
        "# Notes\n",
    ));
    let tagged = env.write_skill(
        "release",
        "Writes release notes. Use before a release.",
        "# Release\n",
    );
    let text = fs::read_to_string(&tagged).unwrap();
    fs::write(
        &tagged,
        text.replacen("---\n", "---\nversion: 2.1.0\nauthor: Dana\n", 1),
    )
    .unwrap();
    let project = project_with_skill(&env, "proj", "notes", "The project's own notes.");

    let list = run(env.synapse().args(["skill", "list"]).current_dir(&project));
    assert!(list.success(), "{list:?}");
    assert!(list.stdout.contains("project:notes"), "{}", list.stdout);
    let refresh = run(env
        .synapse()
        .args(["tools", "refresh", "skills"])
        .current_dir(&project));
    assert!(refresh.success(), "{refresh:?}");

    let v = index(&env);
    let skills = v["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2, "{v}");
    assert!(
        skills.iter().all(|s| s["source"] == "user"),
        "a project skill is in the user index: {v}"
    );
    let entry = |name: &str| {
        skills
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} is missing from the index: {v}"))
    };
    let n = entry("notes");
    assert_eq!(n["path"], notes.display().to_string(), "{v}");
    assert_eq!(
        n["description"],
        "Keeps the user's notes. Use when asked to note something."
    );
    assert_eq!(n["version"], "1.0.0", "{v}");
    assert!(n.get("author").is_none(), "{v}");
    let r = entry("release");
    assert_eq!(r["version"], "2.1.0", "{v}");
    assert_eq!(r["author"], "Dana", "{v}");
    assert_eq!(v["totalSkills"], 2);
}

#[test]
fn tools_refresh_skills_warns_about_the_callers_workspace_only() {
    let env = TestEnv::new();
    env.write_skill("notes", "The user's notes.", "# Notes\n");
    let alpha = project_with_skill(&env, "alpha", "notes", "Alpha's notes.");
    let beta = project_with_skill(&env, "beta", "notes", "Beta's notes.");
    let alpha_dir = alpha.join(".claude/skills/notes").display().to_string();
    let beta_dir = beta.join(".claude/skills/notes").display().to_string();

    let list = run(env.synapse().args(["skill", "list"]).current_dir(&alpha));
    assert!(list.success(), "{list:?}");

    let refresh = |cwd: &Path| {
        run(env
            .synapse()
            .args(["tools", "refresh", "skills"])
            .current_dir(cwd))
    };
    let out = refresh(&beta);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr.contains(&beta_dir) && out.stderr.contains("shadows user:notes"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(&alpha_dir),
        "another project's warning: {}",
        out.stderr
    );
    let out = refresh(&env.workdir());
    assert!(out.success(), "{out:?}");
    assert!(!out.stderr.contains("shadows"), "{}", out.stderr);
}

#[test]
fn the_skills_dir_in_force_is_shown_and_a_different_client_value_is_named_once() {
    let env = TestEnv::new();
    let first = env.root().join("team-skills");
    let second = env.root().join("other-skills");
    for (dir, name) in [(&first, "team-style"), (&second, "other-style")] {
        write(
            &dir.join(format!("{name}/SKILL.md")),
            &format!("---\nname: {name}\ndescription: Styles {name} text.\n---\n# S\n"),
        );
    }
    let with_dir =
        |dir: &Path, args: &[&str]| run(env.synapse().env("SYNAPSE_SKILLS_DIR", dir).args(args));
    let start = with_dir(&first, &["daemon", "start"]);
    assert!(start.success(), "{start:?}");

    let list = with_dir(&first, &["skill", "list"]);
    assert!(list.stdout.contains("env:team-style"), "{}", list.stdout);
    assert!(
        list.stderr.contains(&format!(
            "skills from SYNAPSE_SKILLS_DIR: {}",
            first.display()
        )),
        "{}",
        list.stderr
    );
    let status = with_dir(&first, &["daemon", "status"]);
    assert!(
        status.stdout.contains(&format!(
            "skills dir  {} (SYNAPSE_SKILLS_DIR",
            first.display()
        )),
        "{}",
        status.stdout
    );

    let list = with_dir(&second, &["skill", "list"]);
    assert!(list.success(), "{list:?}");
    assert!(!list.stdout.contains("other-style"), "{}", list.stdout);
    assert_eq!(
        list.stderr.matches("SYNAPSE_SKILLS_DIR").count(),
        1,
        "{}",
        list.stderr
    );
    assert!(
        list.stderr.contains(&format!(
            "warning: SYNAPSE_SKILLS_DIR is {} in this shell, but the daemon uses {}",
            second.display(),
            first.display()
        )) && list.stderr.contains("synapse daemon stop"),
        "{}",
        list.stderr
    );
    let status = with_dir(&second, &["daemon", "status"]);
    assert!(
        status
            .stderr
            .contains("restart it with `synapse daemon stop`"),
        "{}",
        status.stderr
    );

    // The fix it names works: the next command starts the daemon with this shell's value.
    assert!(with_dir(&second, &["daemon", "stop"]).success());
    let list = with_dir(&second, &["skill", "list"]);
    assert!(list.stdout.contains("env:other-style"), "{}", list.stdout);
    assert!(!list.stderr.contains("warning"), "{}", list.stderr);
}
