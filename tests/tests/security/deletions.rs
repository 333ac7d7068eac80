//! Issue 40, deletions counted by the deny rules, through the real daemon and real bash: under a
//! deny rule for `rm` (the user's, in yolo mode; a trusted project's, in auto mode), every other
//! way of deleting a file — `unlink`, `shred -u`, `truncate`, `find -delete`, `find -exec rm`,
//! `rsync --remove-source-files`, `rsync --delete` — is refused with the rule named, and every
//! victim file is still there, whole. A command that deletes nothing still runs.

use std::path::Path;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

/// `(the victim file, relative to the work folder, and the command that deletes it)`.
const DELETIONS: &[(&str, &str)] = &[
    ("v0.txt", "unlink v0.txt"),
    ("v1.txt", "shred -u v1.txt"),
    ("v2.txt", "truncate -s 0 v2.txt"),
    ("v3.txt", "find . -name v3.txt -delete"),
    ("v4.txt", "find . -name v4.txt -exec rm {} \\;"),
    ("v5.txt", "rsync -a --remove-source-files v5.txt backup/"),
    ("dst/v6.txt", "rsync -a --delete src/ dst/"),
];

const KEEP: &str = "keep me";

fn victims(work: &Path) {
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("dst")).unwrap();
    for (victim, _) in DELETIONS {
        std::fs::write(work.join(victim), KEEP).unwrap();
    }
}

fn script() -> Script {
    let mut script = Script::new();
    for (_, command) in DELETIONS {
        // A harmless call between attacks, so the run does not stop at refusals in a row.
        script = script.tool_call(*command).tool_call("echo next");
    }
    script.text("done")
}

async fn run_in(env: &TestEnv, fake: &FakeLlm, cwd: &Path, extra: &[&str]) -> Run {
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("TMPDIR", tmp)
        .current_dir(cwd)
        .arg("run")
        .args(extra)
        .arg("clean up");
    synapse_tests::run_async(cmd).await
}

fn assert_refused_and_intact(fake: &FakeLlm, work: &Path, rule_file: &str) {
    let requests = fake.requests();
    assert_eq!(requests.len(), DELETIONS.len() * 2 + 1, "{requests:#?}");
    for (n, (victim, command)) in DELETIONS.iter().enumerate() {
        let result = requests[2 * n + 1].last_tool_result().unwrap();
        assert!(
            result.contains("Permission denied")
                && result.contains("rm:*")
                && result.contains(rule_file),
            "`{command}` was not refused by the rule: {result}"
        );
        let after = requests[2 * n + 2].last_tool_result().unwrap();
        assert!(after.contains("next"), "the harmless call ran: {after}");
        assert_eq!(
            std::fs::read_to_string(work.join(victim)).ok().as_deref(),
            Some(KEEP),
            "{victim} was touched by `{command}`"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_deny_rule_for_rm_refuses_every_deletion_in_yolo_mode() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"permissions": {"defaultMode": "yolo", "bash": {"deny": ["rm:*"]}}}"#,
    )
    .unwrap();
    let work = env.workdir();
    victims(&work);
    let fake = FakeLlm::start(script()).await.unwrap();
    let out = run_in(&env, &fake, &work, &[]).await;
    assert!(out.success(), "{out:?}");
    assert_refused_and_intact(&fake, &work, "settings.json");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_deny_rule_for_rm_refuses_every_deletion() {
    let env = TestEnv::new();
    let project = env.root().join("project");
    std::fs::create_dir_all(project.join(".synapse")).unwrap();
    std::fs::write(
        project.join(".synapse/settings.json"),
        r#"{"permissions": {"bash": {"deny": ["rm:*"]}}}"#,
    )
    .unwrap();
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    victims(&project);
    let fake = FakeLlm::start(script()).await.unwrap();
    let out = run_in(&env, &fake, &project, &["--permission-mode", "auto"]).await;
    assert!(out.success(), "{out:?}");
    assert_refused_and_intact(&fake, &project, ".synapse/settings.json");
}
