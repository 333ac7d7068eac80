//! Issue 31's small things, as a user meets them on the command line: `synapse completions bash
//! | head` ends quietly, `synapse skill enhance --on` says what it costs, `skill reinforce`
//! points at `task:skill:enhance`, `synapse mcp call --help` prints its usage, and a model server configured as Anthropic is never asked
//! llama.cpp's or Ollama's own routes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, bin, run, run_async};

#[test]
fn completions_into_a_pipe_that_closes_early_end_quietly() {
    let env = TestEnv::new();
    // As typed: the first line arrives, and the pipeline (synapse's status too) succeeds.
    let mut cmd = std::process::Command::new("bash");
    env.apply_env(&mut cmd);
    cmd.arg("-c").arg(format!(
        "set -o pipefail; '{}' completions bash | head -1",
        bin("synapse").display()
    ));
    let out = run(&mut cmd);
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);

    // A reader that is gone before the first byte: still exit 0, nothing on stderr.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = run(env.synapse().args(["completions", "bash"]).stdout(writer));
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stderr, "");
}

#[test]
fn turning_enhancement_on_says_it_costs_tokens_on_every_turn() {
    let env = TestEnv::new();
    let on = env.cli(&["skill", "enhance", "--on"]);
    assert!(on.success(), "{on:?}");
    assert!(
        on.stderr.contains("Turning on automatic skill enhancement"),
        "{}",
        on.stderr
    );
    assert!(
        on.stderr.contains("This costs extra tokens on every turn."),
        "{}",
        on.stderr
    );
    assert!(
        on.stderr
            .contains("Turn it off any time with synapse skill enhance --off"),
        "{}",
        on.stderr
    );
    assert!(on.stdout.contains("is on"), "{}", on.stdout);
    let off = env.cli(&["skill", "enhance", "--off"]);
    assert!(off.success(), "{off:?}");
    assert!(!off.stderr.contains("costs extra tokens"), "{}", off.stderr);
    assert!(off.stdout.contains("is off"), "{}", off.stdout);
}

#[test]
fn mcp_call_help_alone_prints_its_usage() {
    let env = TestEnv::new();
    for flag in ["--help", "-h"] {
        let help = env.cli(&["mcp", "call", flag]);
        assert!(help.success(), "{help:?}");
        assert!(
            help.stdout.contains("Usage: synapse mcp call"),
            "{}",
            help.stdout
        );
    }
    // A server without a tool names what is missing instead of clap's bare usage error.
    let missing = env.cli(&["mcp", "call", "memory"]);
    assert_eq!(missing.code, Some(2), "{missing:?}");
    assert!(
        missing.stderr.contains("synapse mcp call memory <tool>"),
        "{}",
        missing.stderr
    );
}

#[test]
fn skill_reinforce_points_at_task_skill_enhance() {
    let env = TestEnv::new();
    let out = env.cli(&["exec", "skill reinforce the pdf skill"]);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(!out.success(), "{text}");
    assert!(
        text.contains("task:skill:enhance --prompt \"<what to learn>\""),
        "{text}"
    );
    // On the command line it is another word for `enhance`.
    let help = env.cli(&["skill", "reinforce", "--help"]);
    assert!(help.success(), "{help:?}");
    assert!(
        help.stdout.contains("Create or improve a skill"),
        "{}",
        help.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_endpoint_is_not_probed_for_local_servers_routes() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(Script::new().text("hello")).await.unwrap();
    let out = run_async({
        let mut cmd = env.synapse_with_model(&fake);
        cmd.args(["run", "say hello"]);
        cmd
    })
    .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("hello"), "{}", out.stdout);
    let side = fake.side_requests();
    assert!(
        !side
            .iter()
            .any(|r| r.ends_with("/props") || r.ends_with("/api/show")),
        "llama.cpp/Ollama routes asked of an Anthropic endpoint: {side:?}"
    );
    // What it may ask is the Anthropic API's own models list.
    assert!(side.iter().all(|r| r == "GET /v1/models"), "{side:?}");
}
