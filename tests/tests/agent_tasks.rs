//! Issue 8 (task sub-agents): `task:explore` and `task:general` run a sub-agent with its own
//! shell and context through the same fake model; explore cannot write, neither can nest.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

async fn run_agent(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> Run {
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", prompt])
        .stdin(Stdio::null());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_reports_back_and_cannot_write_or_nest() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            // main agent
            .tool_call("task:explore --description 'look around' --prompt 'What files are here?'")
            // sub-agent
            .tool_call("write stolen.txt data")
            .tool_call("echo x > stolen2.txt")
            .tool_call("task:general --prompt nested")
            .tool_call("ls")
            .text("Found hello.txt; writing was refused.")
            // main agent again
            .text("The explorer found hello.txt."),
    )
    .await
    .unwrap();
    std::fs::write(env.workdir().join("hello.txt"), "hi").unwrap();
    let out = run_agent(&env, &fake, "explore please").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "The explorer found hello.txt.");
    assert!(!env.workdir().join("stolen.txt").exists());
    assert!(!env.workdir().join("stolen2.txt").exists());

    let requests = fake.requests();
    assert_eq!(requests.len(), 7);
    let sub_results: Vec<String> = (2..=5)
        .map(|i| requests[i].last_tool_result().unwrap())
        .collect();
    assert!(sub_results[0].contains("read-only"), "{}", sub_results[0]);
    assert!(sub_results[1].contains("read-only"), "{}", sub_results[1]);
    assert!(
        sub_results[2].contains("cannot start other sub-agents"),
        "{}",
        sub_results[2]
    );
    assert!(sub_results[3].contains("hello.txt"), "{}", sub_results[3]);
    // The sub-agent has its own context: it never saw the main agent's prompt.
    assert!(
        !serde_json::to_string(requests[1].messages())
            .unwrap()
            .contains("explore please")
    );
    let main_result = requests[6].last_tool_result().unwrap();
    assert!(
        main_result.starts_with("[task:explore · look around]"),
        "{main_result}"
    );
    assert!(main_result.contains("Found hello.txt"), "{main_result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn general_may_write_in_its_own_shell() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("task:general --description 'make file' --prompt 'Create made.txt'")
            .tool_call("cd /tmp")
            .tool_call(format!("write {}/made.txt ok", env.workdir().display()))
            .text("made it")
            .tool_call("pwd")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, "delegate").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("made.txt")).unwrap(),
        "ok"
    );
    // The sub-agent's `cd /tmp` happened in its own shell, not the main agent's.
    let pwd = fake.requests()[5].last_tool_result().unwrap();
    assert!(pwd.contains(&env.workdir().display().to_string()), "{pwd}");
}
