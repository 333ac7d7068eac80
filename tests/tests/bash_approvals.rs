//! Issue 17, end to end: an agent command inside a compound line is judged once. The line is
//! asked about as a whole; the `write` it contains then runs (through the agent channel) without
//! a second question, because the gate remembers that the user approved that line in that call
//! (a line a rule allowed gets no such pass). The next call is asked about on its own.

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compound_line_with_an_agent_command_asks_once() {
    let env = TestEnv::new();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("write notes.txt 'hello' && echo saved")
            // A later call is asked about on its own: the approval covered one line only.
            .tool_call("write other.txt 'again'")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "save a note", "--yes", "--permission-mode", "ask"]);
    let r = synapse_tests::run_async(cmd).await;
    assert!(r.success(), "{r:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.ends_with("saved\n") || result.ends_with("saved"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("notes.txt")).unwrap(),
        "hello"
    );
    // Every question `--yes` answered is a `permission` record in the session file.
    let mut records = Vec::new();
    for entry in std::fs::read_dir(env.home().join("sessions")).unwrap() {
        // Session files only (the transcripts and per-session folders sit beside them).
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        records.extend(
            text.lines()
                .filter(|l| l.contains("\"by\":\"--yes\""))
                .map(str::to_owned),
        );
    }
    assert_eq!(
        records.len(),
        2,
        "asked {} times (once per call expected):\n{}",
        records.len(),
        records.join("\n")
    );
    assert!(records[1].contains("other.txt"), "{}", records[1]);
}
