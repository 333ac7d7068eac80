//! Issue 8 (self-growth): versions and rollback of an automatically enhanced skill, skill search
//! through the sub-agent with a BM25 prefilter over many skills, the local ranking when no model
//! is reachable, and `synapse skill evaluate`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

#[test]
fn an_automatic_enhancement_saves_a_version_that_rollback_restores_byte_for_byte() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"skillEnhance": {"autoEnhance": true}}"#,
    )
    .unwrap();
    let file = env.write_skill(
        "code-review",
        "Reviews Python code. Use when asked to review a change.",
        "# Code review\r\n\r\nCheck style.\r\n\u{00e9}\n",
    );
    let original = std::fs::read(&file).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new()
                .text("Reviewed; also ran mypy.")
                .tool_call(format!(
                    "edit {} 'Check style.' 'Check style. Run mypy first.'",
                    file.display()
                ))
                .text(
                    "Skill enhancement done:\n- Action: enhanced skill\n- Name: code-review\n\
                     - Changes:\n  - run mypy first",
                ),
        ))
        .unwrap();
    let out = env.cli_with_model(&fake, &["run", "review my change"]);
    assert!(out.success(), "{out:?}");
    let changed = std::fs::read_to_string(&file).unwrap();
    assert!(changed.contains("Run mypy first."), "{changed}");

    let versions = env.cli(&["skill", "versions", "code-review"]);
    assert!(versions.success(), "{versions:?}");
    assert!(
        versions.stdout.contains("1  ") && versions.stdout.contains("before an automatic change"),
        "{}",
        versions.stdout
    );
    let back = env.cli(&["skill", "rollback", "code-review"]);
    assert!(back.success(), "{back:?}");
    assert!(back.stdout.contains("version 1"), "{}", back.stdout);
    assert_eq!(std::fs::read(&file).unwrap(), original);
    // The rollback itself is undoable: the enhanced state was saved as version 2.
    let versions = env.cli(&["skill", "versions", "code-review"]);
    assert!(
        versions.stdout.contains("before rollback"),
        "{}",
        versions.stdout
    );
    assert!(
        !env.cli(&["skill", "rollback", "code-review", "9"])
            .success()
    );
}

#[test]
fn search_sends_only_the_top_candidates_and_falls_back_to_local_ranking() {
    let env = TestEnv::new();
    for i in 0..300 {
        env.write_skill(
            &format!("widget-{i:03}"),
            &format!("Handles widget case {i} of the assembly line. Use for widgets."),
            "# W\n",
        );
    }
    env.write_skill(
        "parsing-invoices",
        "Extracts totals and dates from PDF invoices. Use when asked about invoice totals.",
        "# Invoices\n",
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new()
                .tool_call("skill search \"sum the totals of my pdf invoices\"")
                .text(
                    "{\"matched_skills\":[{\"name\":\"parsing-invoices\",\"description\":\"x\"}]}",
                )
                .text("Use parsing-invoices."),
        ))
        .unwrap();
    let out = env.cli_with_model(&fake, &["run", "invoices"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let sub_system = requests[1].system_text().unwrap();
    let listed = sub_system.matches("\n- widget-").count();
    assert!(listed < 50, "{listed} widget skills sent");
    assert!(sub_system.contains("- parsing-invoices: Extracts totals"));
    let all_metadata: usize = 301 * 90;
    eprintln!(
        "search request system prompt: {} bytes (all metadata would add ~{all_metadata})",
        sub_system.len()
    );
    let result = requests[2].last_tool_result().unwrap();
    assert!(
        result.contains("<skill name=\"parsing-invoices\">"),
        "{result}"
    );
    assert!(!result.contains("local keyword ranking"), "{result}");

    // No model configured: the local ranking answers, and says so.
    let local = env.cli(&["exec", "skill search \"pdf invoice totals\""]);
    assert!(local.success(), "{local:?}");
    assert!(
        local.stdout.contains("<skill name=\"parsing-invoices\">"),
        "{}",
        local.stdout
    );
    assert!(
        local.stdout.contains("local keyword ranking"),
        "{}",
        local.stdout
    );
}

#[test]
fn evaluate_combines_structural_checks_with_the_review() {
    let env = TestEnv::new();
    env.write_skill(
        "analyzing-logs",
        "Finds errors in log files. Use when asked to analyze a log.",
        "# Logs\n\nSee references/missing.md for patterns.\n",
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(Script::new().text(
            "{\"score\": 80, \"findings\": [\"SKILL.md: no examples\"]}",
        )))
        .unwrap();
    let out = env.cli_with_model(&fake, &["skill", "evaluate", "analyzing-logs", "--json"]);
    assert!(out.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["score"], 65, "{v}");
    assert!(
        v["structural"][0]
            .as_str()
            .unwrap()
            .contains("references/missing.md")
    );
    assert_eq!(v["review"][0], "SKILL.md: no examples");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(system.contains("### evaluating-skills"));
}

#[test]
fn task_skill_enhance_by_hand_reads_this_session_and_reports() {
    let env = TestEnv::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new()
                .tool_call("task:skill:enhance --prompt 'Keep the invoice workflow' --description learn")
                .text("Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: one-off")
                .text("Nothing worth keeping."),
        ))
        .unwrap();
    let out = env.cli_with_model(&fake, &["run", "TASK-PROMPT-MARKER sum invoices"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    // Auto-enhance is off: exactly main, sub-agent, main.
    assert_eq!(requests.len(), 3);
    let task = requests[1].last_user_text().unwrap();
    assert!(task.starts_with("Keep the invoice workflow"), "{task}");
    assert!(task.contains("TASK-PROMPT-MARKER"), "{task}");
    let result = requests[2].last_tool_result().unwrap();
    assert!(result.contains("no change needed"), "{result}");
}
