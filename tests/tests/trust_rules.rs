//! Issue 16, rules the agent cannot rewrite and that fail closed, through the real daemon:
//! a broken rules file (typo, byte-order mark, a list written as a string, `"Deny"`) never
//! silently drops deny rules — at first start every command asks, later the last good rules
//! stay in force — and it is said on every turn; the agent writing `.synapse/settings.json`
//! through any shell route asks even in yolo mode with `--yes`, so the file survives; a trusted
//! project's rules changed by anyone count only once the user runs `synapse trust` again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

async fn run(env: &TestEnv, fake: &FakeLlm, extra: &[&str]) -> Run {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("TMPDIR", tmp)
        .arg("run")
        .args(extra)
        .arg("do the task");
    synapse_tests::run_async(cmd).await
}

const BROKEN: [(&str, &str); 4] = [
    ("typo", r#"{"permissions": {"bash": {"deny": ["rm:*"]}"#),
    (
        "bom",
        "\u{feff}{\"permissions\": {\"bash\": {\"deny\": [\"rm:*\"]}}}",
    ),
    ("string", r#"{"permissions": {"bash": {"deny": "rm:*"}}}"#),
    (
        "capital",
        r#"{"permissions": {"bash": {"Deny": ["rm:*"]}}}"#,
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_rules_file_at_first_start_makes_every_command_ask_and_says_so() {
    for (case, text) in BROKEN {
        let env = TestEnv::new();
        std::fs::create_dir_all(env.home()).unwrap();
        std::fs::write(env.paths().settings_file(), text).unwrap();
        let victim = env.workdir().join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let fake = FakeLlm::start(
            Script::new()
                .tool_call("rm victim.txt")
                .text("first")
                .tool_call("rm victim.txt")
                .text("second"),
        )
        .await
        .unwrap();
        for turn in 0..2 {
            // yolo is capped while the file is broken: nothing runs without a question.
            let out = run(&env, &fake, &["--permission-mode", "yolo"]).await;
            assert!(out.success(), "{case}: {out:?}");
            assert!(
                out.stderr.contains("is broken"),
                "{case}, turn {turn}: the broken file is told: {}",
                out.stderr
            );
            let result = fake.requests()[turn * 2 + 1].last_tool_result().unwrap();
            assert!(result.contains("Permission denied"), "{case}: {result}");
            assert!(victim.exists(), "{case}: rm ran with its deny rule dropped");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rules_file_broken_later_keeps_its_last_good_rules() {
    for (case, text) in BROKEN {
        let env = TestEnv::new();
        std::fs::create_dir_all(env.home()).unwrap();
        let settings = env.paths().settings_file();
        std::fs::write(
            &settings,
            r#"{"permissions": {"bash": {"deny": ["rm:*"]}}}"#,
        )
        .unwrap();
        let victim = env.workdir().join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let fake = FakeLlm::start(
            Script::new()
                .tool_call("rm victim.txt")
                .text("first")
                .tool_call("rm victim.txt")
                .text("second"),
        )
        .await
        .unwrap();
        let good = run(&env, &fake, &["--yes"]).await;
        assert!(good.success(), "{case}: {good:?}");
        assert!(victim.exists(), "{case}: the deny rule holds");

        std::fs::write(&settings, text).unwrap();
        // --yes would approve any question: only the kept deny rule stops rm now.
        let broken = run(&env, &fake, &["--yes"]).await;
        assert!(broken.success(), "{case}: {broken:?}");
        assert!(
            broken.stderr.contains("last good rules"),
            "{case}: {}",
            broken.stderr
        );
        let result = fake.requests()[3].last_tool_result().unwrap();
        assert!(result.contains("Permission denied"), "{case}: {result}");
        assert!(victim.exists(), "{case}: rm ran after its rule file broke");
    }
}

/// The 9 shell routes of the issue, each writing a yolo settings file into the project.
const ROUTES: [&str; 9] = [
    r#"echo '{"permissions":{"defaultMode":"yolo"}}' > .synapse/settings.json"#,
    r#"echo '{"permissions":{"defaultMode":"yolo"}}' >> .synapse/settings.json"#,
    r#"echo '{"permissions":{"defaultMode":"yolo"}}' | tee .synapse/settings.json"#,
    "cp evil.json .synapse/settings.json",
    "cp evil.json .synapse/settings.json && true",
    "mv evil.json .synapse/settings.json",
    "cat evil.json > ./.synapse/settings.json",
    "dd if=evil.json of=.synapse/settings.json",
    "sed -i s/ask/yolo/ .synapse/settings.json",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_cannot_rewrite_the_project_rules_even_in_yolo_mode() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let dir = env.workdir().join(".synapse");
    std::fs::create_dir_all(&dir).unwrap();
    let original = r#"{"permissions": {"defaultMode": "ask"}}"#;
    std::fs::write(dir.join("settings.json"), original).unwrap();
    std::fs::write(
        env.workdir().join("evil.json"),
        r#"{"permissions":{"defaultMode":"yolo"}}"#,
    )
    .unwrap();
    let trust = env.cli(&["trust", "--yes"]);
    assert!(trust.success(), "{trust:?}");
    // Two runs: a run stops after 8 refused calls in a row.
    for routes in ROUTES.chunks(5) {
        let mut script = Script::new();
        for route in routes {
            script = script.tool_call(*route);
        }
        let fake = FakeLlm::start(script.text("done")).await.unwrap();
        let out = run(&env, &fake, &["--permission-mode", "yolo", "--yes"]).await;
        assert!(out.success(), "{out:?}");
        assert!(
            !out.stderr.contains("allow it with --yes"),
            "{}",
            out.stderr
        );
        for (i, route) in routes.iter().enumerate() {
            let result = fake.requests()[i + 1].last_tool_result().unwrap();
            assert!(
                result.contains("holds permission settings"),
                "{route}: {result}"
            );
            assert_eq!(
                std::fs::read_to_string(dir.join("settings.json")).unwrap(),
                original,
                "{route} rewrote the rules"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_rules_changed_by_anyone_wait_for_the_user_to_trust_again() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let dir = env.workdir().join(".synapse");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"defaultMode": "auto"}}"#).unwrap();
    let trust = env.cli(&["trust", "--yes"]);
    assert!(trust.success(), "{trust:?}");
    // A `git pull` (or anyone) makes the trusted project's rules permissive.
    std::fs::write(&settings, r#"{"permissions": {"defaultMode": "yolo"}}"#).unwrap();
    let outside = env.root().join("outside.txt");
    let touch = format!("touch {}", outside.display());
    let fake = FakeLlm::start(Script::new().tool_call(&touch).text("done"))
        .await
        .unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr.contains("changed since the folder was trusted")
            && out.stderr.contains("synapse trust"),
        "{out:?}"
    );
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("Permission denied"), "{result}");
    assert!(
        !outside.exists(),
        "the changed project file put yolo in force"
    );
    // Reviewed and trusted again, the same file counts.
    let again = env.cli(&["trust", "--yes"]);
    assert!(again.success(), "{again:?}");
    let fake = FakeLlm::start(Script::new().tool_call(&touch).text("done"))
        .await
        .unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    assert!(outside.exists(), "{out:?}");
}
