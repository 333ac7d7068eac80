//! Approval requests end to end: a skill marked `ask` in permissions.skill is loaded only when
//! the user says yes — in the REPL (y / n / a) and in `synapse run` (denied unless `--yes`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use repl_support::Screen;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

fn env_with_asking_skill() -> TestEnv {
    let env = TestEnv::new();
    let skill = env.home().join("skills/secret-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: secret-notes\ndescription: Private notes workflow.\n---\nThe secret steps.\n",
    )
    .unwrap();
    std::fs::write(
        env.home().join("settings.json"),
        r#"{"permissions": {"skill": {"secret-*": "ask"}}}"#,
    )
    .unwrap();
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repl_killed_while_asking_leaves_the_question_answered_no_and_the_daemon_stoppable() {
    let env = env_with_asking_skill();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("skill load secret-notes")
            .text("after the question"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("load it");
    screen.wait_for("Load skill `secret-notes`");
    screen.kill_client();
    // Nobody is left to answer: the question resolves as "no" and the turn ends.
    synapse_tests::wait_until(synapse_tests::DEADLINE, "the turn ended", || {
        fake.requests().len() == 2
    });
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("was not approved"), "{result}");
    // And the daemon stops when asked, within its deadline.
    let started = std::time::Instant::now();
    let stop = env.cli(&["daemon", "stop"]);
    assert!(stop.success(), "{stop:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

async fn run(env: &TestEnv, fake: &FakeLlm, extra: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(["run", "use the secret skill"]).args(extra);
    synapse_tests::run_async(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_interactive_runs_deny_unless_yes() {
    let env = env_with_asking_skill();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("skill load secret-notes")
            .text("no luck")
            .tool_call("skill load secret-notes")
            .text("loaded"),
    )
    .await
    .unwrap();
    let denied = run(&env, &fake, &[]).await;
    assert!(denied.success(), "{denied:?}");
    assert!(
        denied
            .stderr
            .contains("denied (non-interactive run; --yes allows it): Load skill `secret-notes`"),
        "{}",
        denied.stderr
    );
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("was not approved"), "{result}");

    let allowed = run(&env, &fake, &["--yes"]).await;
    assert!(
        allowed.stderr.contains("allowed (--yes)"),
        "{}",
        allowed.stderr
    );
    let result = fake.requests()[3].last_tool_result().unwrap();
    assert!(result.starts_with("# Skill: secret-notes"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_asks_and_the_answer_decides() {
    let env = env_with_asking_skill();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("skill load secret-notes")
            .text("first answer")
            .tool_call("skill load secret-notes")
            .text("second answer"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("load it");
    screen.wait_for("Load skill `secret-notes`");
    screen.line("n");
    screen.wait_for("You (2)>");
    assert!(
        fake.requests()[1]
            .last_tool_result()
            .unwrap()
            .contains("was not approved")
    );

    screen.line("again");
    screen.wait_for_count("Load skill `secret-notes`", 2);
    screen.line("y");
    screen.wait_for("You (3)>");
    let result = fake.requests()[3].last_tool_result().unwrap();
    assert!(result.starts_with("# Skill: secret-notes"), "{result}");
}
