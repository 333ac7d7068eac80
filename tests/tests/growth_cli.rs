//! Issue 8 from the command line: `synapse skill search` through the skill sub-agent (and the
//! local ranking, marked, when no model is reachable; `--local` for keywords only),
//! `synapse skill enhance` creating a skill and printing the report, every automatic change
//! versioned even when a shell command makes it (`sed -i`, `perl -pi`), and the enhancer
//! refused to sandboxed clients.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

fn two_skills(env: &TestEnv) {
    env.write_skill(
        "parsing-invoices",
        "Extracts totals and dates from PDF invoices. Use when asked about invoice totals.",
        "# Invoices\n",
    );
    env.write_skill(
        "analyzing-logs",
        "Finds errors in log files. Use when asked to analyze a log.",
        "# Logs\n",
    );
}

#[test]
fn skill_search_matches_by_meaning_through_the_model() {
    let env = TestEnv::new();
    two_skills(&env);
    let (_rt, fake) = fake(
        Script::new()
            .text("{\"matched_skills\":[{\"name\":\"parsing-invoices\",\"description\":\"x\"}]}")
            .text("```json\n{\"matched_skills\":[{\"name\":\"analyzing-logs\",\"description\":\"y\"}]}\n```"),
    );
    // No word in common with the skill: only the model can match it.
    let out = env.cli_with_model(
        &fake,
        &["skill", "search", "how much do I owe my suppliers"],
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.starts_with("user:parsing-invoices"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("analyzing-logs"), "{}", out.stdout);
    assert!(!out.stdout.contains("local ranking"), "{}", out.stdout);
    let request = &fake.requests()[0];
    assert!(
        request
            .system_text()
            .unwrap()
            .starts_with("You are the Skill Sub-Agent")
    );
    assert!(
        request
            .last_user_text()
            .unwrap()
            .contains("how much do I owe my suppliers")
    );

    let out = env.cli_with_model(
        &fake,
        &["skill", "search", "what broke last night", "--json"],
    );
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["matched_skills"][0]["name"], "analyzing-logs", "{v}");
    assert!(
        v["matched_skills"][0]["description"]
            .as_str()
            .unwrap()
            .starts_with("Finds errors")
    );
    assert_eq!(v["ranking"], "model");
    assert!(v["local_reason"].is_null());
}

#[test]
fn skill_search_without_a_model_falls_back_to_the_local_ranking_and_says_so() {
    let env = TestEnv::new();
    two_skills(&env);
    assert!(env.cli(&["daemon", "start"]).success());
    let out = env.cli(&["skill", "search", "pdf invoice totals"]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.starts_with("user:parsing-invoices"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("(local ranking: no model reachable: "),
        "{}",
        out.stdout
    );
    let out = env.cli(&["skill", "search", "pdf invoice totals", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["ranking"], "local");
    assert!(
        v["local_reason"]
            .as_str()
            .unwrap()
            .starts_with("no model reachable")
    );
    assert_eq!(v["matched_skills"][0]["name"], "parsing-invoices");

    // --local: keywords only, asked for, so nothing to excuse.
    let out = env.cli(&["skill", "search", "invoices", "--local"]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("user:parsing-invoices"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("local ranking"), "{}", out.stdout);
}

const CSV_SKILL: &str = "---
name: csv-report
description: Summarises a CSV file into a Markdown report. Use when asked to report on a CSV.
---

# CSV report

1. Read the header with `head -1 file.csv`.
2. Count rows with `wc -l`.
";

#[test]
fn skill_enhance_creates_a_skill_and_prints_the_report() {
    let env = TestEnv::new();
    let skills = env.home().join("skills");
    let (_rt, fake) = fake(
        Script::new()
            // A task, so there is a session to learn from.
            .text("The CSV has 3 rows; SESSION-MARKER.")
            // The enhancer, from that session.
            .tool_call(format!(
                "write {}/csv-report/SKILL.md <<'EOF'\n{CSV_SKILL}EOF",
                skills.display()
            ))
            .text(
                "Skill enhancement done:\n- Action: created skill\n- Name: csv-report\n\
                 - Tools: head, wc\n- Contents:\n  - summarise a CSV file",
            ),
    );
    let task = env.cli_with_model(
        &fake,
        &["run", "--output-format", "json", "report on data.csv"],
    );
    assert!(task.success(), "{task:?}");
    let session: serde_json::Value = serde_json::from_str(task.stdout.trim()).unwrap();
    let id = session["session_id"].as_str().unwrap().to_string();

    let out = env.cli_with_model(
        &fake,
        &[
            "skill",
            "enhance",
            "keep the CSV reporting steps",
            "--from-session",
            &id,
        ],
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.starts_with("Skill enhancement done:"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("- Name: csv-report"), "{}", out.stdout);
    assert!(
        out.stdout.contains("csv-report/SKILL.md new ("),
        "the files changed, as Synapse saw them:\n{}",
        out.stdout
    );
    let prompt = fake.requests()[1].last_user_text().unwrap();
    assert!(
        prompt.starts_with("keep the CSV reporting steps"),
        "{prompt}"
    );
    assert!(prompt.contains("SESSION-MARKER"), "{prompt}");

    // The skill is there, listed, and loadable.
    assert_eq!(
        std::fs::read_to_string(skills.join("csv-report/SKILL.md")).unwrap(),
        CSV_SKILL
    );
    let list = env.cli(&["skill", "list"]);
    assert!(list.stdout.contains("user:csv-report"), "{}", list.stdout);

    // --json, and an unknown session is named as such.
    fake.push(synapse_tests::fake_llm::Reply::new().text(
        "Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: covered",
    ));
    let out = env.cli_with_model(&fake, &["skill", "enhance", "csv again", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["action"], "none", "{v}");
    assert!(v["report"].as_str().unwrap().contains("no change needed"));
    // Synapse lists what changed on disk itself: the real files of the first run, nothing now.
    assert!(
        v["report"]
            .as_str()
            .unwrap()
            .contains("Changed on disk (checked by Synapse): nothing."),
        "{v}"
    );

    // A report that claims a skill nobody wrote is corrected, not repeated.
    fake.push(synapse_tests::fake_llm::Reply::new().text(
        "Skill enhancement done:\n- Action: created skill\n- Name: fake-claim\n- Summary: made it",
    ));
    let out = env.cli_with_model(&fake, &["skill", "enhance", "claim something", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["action"], "none", "{v}");
    let report = v["report"].as_str().unwrap();
    assert!(
        report.contains("\"fake-claim\" was created, but no file of it changed on disk"),
        "{report}"
    );
    assert!(!skills.join("fake-claim").exists());
    let out = env.cli_with_model(
        &fake,
        &[
            "skill",
            "enhance",
            "x",
            "--from-session",
            "20000101-000000-000000",
        ],
    );
    assert!(!out.success());
    assert!(
        out.stderr.contains("no session 20000101-000000-000000"),
        "{}",
        out.stderr
    );
}

#[test]
fn changes_made_by_shell_commands_are_versioned_and_roll_back_byte_for_byte() {
    let env = TestEnv::new();
    let review = env.write_skill(
        "code-review",
        "Reviews Python code. Use when asked to review a change.",
        "# Code review\r\n\r\nCheck style.\r\n\u{00e9}\n",
    );
    let notes = env.write_skill(
        "release-notes",
        "Writes release notes from git history. Use when asked for release notes.",
        "# Release notes\n\nv1 steps.\n",
    );
    let (review_before, notes_before) = (
        std::fs::read(&review).unwrap(),
        std::fs::read(&notes).unwrap(),
    );
    let (_rt, fake) = fake(
        Script::new()
            // Seen by the command parser: saved before it runs.
            .tool_call(format!(
                "sed -i 's/Check style\\./Check style. Run mypy first./' {}",
                review.display()
            ))
            // Not seen (perl's -i is not read): found after the run, saved from the copy.
            .tool_call(format!(
                "perl -pi -e 's/v1 steps/v2 steps/' {}",
                notes.display()
            ))
            .text(
                "Skill enhancement done:\n- Action: enhanced skill\n- Name: code-review\n\
                 - Changes:\n  - run mypy first",
            ),
    );
    let out = env.cli_with_model(&fake, &["skill", "enhance", "run mypy before style review"]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout
            .contains("The previous code-review was saved as version 1"),
        "{}",
        out.stdout
    );
    assert!(
        std::fs::read_to_string(&review)
            .unwrap()
            .contains("Run mypy first.")
    );
    assert!(
        std::fs::read_to_string(&notes)
            .unwrap()
            .contains("v2 steps")
    );

    for (name, file, before, found_after) in [
        ("code-review", &review, &review_before, false),
        ("release-notes", &notes, &notes_before, true),
    ] {
        let versions = env.cli(&["skill", "versions", name]);
        assert!(versions.success(), "{versions:?}");
        assert!(
            versions.stdout.contains("  1  ")
                && versions.stdout.contains("before an automatic change"),
            "{name}: {}",
            versions.stdout
        );
        assert_eq!(
            versions.stdout.contains("found after a shell command"),
            found_after,
            "{name}: {}",
            versions.stdout
        );
        let back = env.cli(&["skill", "rollback", name]);
        assert!(back.success(), "{back:?}");
        assert!(back.stdout.contains("version 1"), "{}", back.stdout);
        assert_eq!(&std::fs::read(file).unwrap(), before, "{name}");
    }
}

#[test]
fn a_sandboxed_client_cannot_run_the_enhancer() {
    let own = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if own
        .lines()
        .any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1'))
    {
        return; // The daemon would run with no_new_privs too; nothing tells clients apart.
    }
    let env = TestEnv::new();
    assert!(env.cli(&["daemon", "start"]).success());
    let mut cmd = std::process::Command::new("setpriv");
    env.apply_env(&mut cmd);
    cmd.args(["--no-new-privs"])
        .arg(synapse_tests::bin("synapse"))
        .args(["skill", "enhance", "learn something"]);
    let out = synapse_tests::run(&mut cmd);
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr
            .contains("not available from inside a sandboxed agent shell"),
        "{}",
        out.stderr
    );
    assert!(!env.home().join("skills").join("learn-something").exists());
}

#[test]
fn the_enhancers_shell_cannot_write_outside_the_skills_folder() {
    let probe = std::process::Command::new(synapse_tests::bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!("Landlock is not available here: the OS sandbox assertion is skipped");
        return;
    }
    let env = TestEnv::new();
    let skill = env.write_skill(
        "code-review",
        "Reviews Python code. Use when asked to review a change.",
        "# Code review\n",
    );
    let stolen = env.workdir().join("copied.md");
    let (_rt, fake) = fake(
        Script::new()
            .tool_call(format!("cp {} {}", skill.display(), stolen.display()))
            .tool_call(format!("cp {} {}.bak", skill.display(), skill.display()))
            .text("Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: x"),
    );
    // The test's folders live in the system temp folder, which the sandbox leaves writable: the
    // daemon (started by this call) gets a temp folder of its own.
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = synapse_tests::run(
        env.synapse()
            .env("TMPDIR", &tmp)
            .env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .args(["skill", "enhance", "anything"]),
    );
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let refused = requests[1].last_tool_result().unwrap();
    assert!(refused.contains("Permission denied"), "{refused}");
    assert!(!stolen.exists());
    // Inside the skills folder the same command works.
    assert_eq!(
        requests[2].last_tool_result().unwrap(),
        "(no output, exit 0)",
        "{requests:?}"
    );
    assert!(skill.with_extension("md.bak").exists());
}
