//! Issue 17, end to end: while a command runs, its latest output reaches the client live.
//! `synapse run --output-format stream-json` emits `system`/`tool_progress` events before the command
//! finishes; text mode on a pipe keeps stdout to the answer and stderr free of redraws.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

/// Prints a line, then waits (up to 60 s) until the test creates `release`.
const WAITING_COMMAND: &str = "echo step-$((40+2)); for i in $(seq 600); do [ -e release ] && break; \
                               sleep 0.1; done; echo finished";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_reports_the_output_of_a_running_command() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(WAITING_COMMAND)
            .text("done")
            .tool_call("echo quick")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "wait for it", "--output-format", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let release = env.workdir().join("release");
    let lines = tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            // The command is still waiting for `release` when its first line shows up.
            if event["subtype"] == "tool_progress" && event["tail"] == "step-42" {
                std::fs::write(&release, "").unwrap();
            }
            seen.push(event);
        }
        seen
    })
    .await
    .unwrap();
    assert!(child.wait().unwrap().success());
    let progress = lines.iter().position(|e| e["subtype"] == "tool_progress");
    // The call's result (Claude Code's `user` message with the tool_result).
    let finished = lines.iter().position(|e| e["type"] == "user");
    assert!(
        matches!((progress, finished), (Some(p), Some(f)) if p < f),
        "{lines:?}"
    );
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("step-42\nfinished"), "{result}");

    // Text mode on a pipe: the answer alone on stdout, no live redraws on stderr.
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "quick one"]);
    let r = synapse_tests::run_async(cmd).await;
    assert_eq!(r.stdout, "done\n");
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
}
