//! `synapse acp` under an editor nobody here wrote: the official ACP TypeScript client
//! (`tests/fixtures/acp_client.mjs` on npm `@agentclientprotocol/sdk`) spawns the real
//! `synapse acp` against the real daemon and the scripted fake model. One connection runs a turn
//! that reads, plans, is refused an edit and then allowed it (a diff arrives), streams text, then
//! a long command it cancels (its process is gone), then bad requests (each an ACP error, the
//! connection lives on); a second connection loads the session and sees its history.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, bin, processes_matching, run_async, wait_until};

fn client_script() -> PathBuf {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/acp_client.mjs");
    let sdk = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/node_modules/@agentclientprotocol/sdk/package.json");
    assert!(
        sdk.is_file(),
        "the ACP TypeScript SDK is missing: run tests/fixtures/install.sh"
    );
    script
}

/// Runs one scenario of the TypeScript client and returns what it saw.
async fn editor(env: &TestEnv, fake: &FakeLlm, scenario: &str, extra: &str) -> Value {
    let mut cmd = Command::new("node");
    env.apply_env(&mut cmd);
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg(client_script())
        .arg(bin("synapse"))
        .arg(scenario)
        .arg(env.workdir())
        .arg(extra);
    let out = run_async(cmd).await;
    assert!(out.success(), "the ACP client failed: {}", out.stderr);
    let seen: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("the ACP client printed no record ({e}): {}", out.stdout));
    assert!(seen["fatal"].is_null(), "{}\n{}", seen["fatal"], out.stderr);
    seen
}

fn updates<'a>(seen: &'a Value, kind: &str) -> Vec<&'a Value> {
    seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_runs_a_turn_cancels_one_and_loads_the_session_again() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "buy milk\nand eggs\n").unwrap();
    env.write_skill(
        "greet",
        "Greets the user. Use when asked to say hello.",
        "Say hello.",
    );
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("todo add 'write the tests' 'ship it'")
            .tool_call("edit notes.txt milk bread")
            .tool_call("edit notes.txt milk bread")
            .text("done")
            // The unfinished todo items bring one reminder before the turn may end.
            .text("the items stay for later")
            .tool_call("echo started-417; sleep 417"),
    )
    .await
    .unwrap();
    let seen = editor(&env, &fake, "main", "no,yes").await;

    let init = &seen["initialize"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    assert_eq!(init["agentInfo"]["name"], "synapse");
    let modes: Vec<&str> = seen["session"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["ask", "auto", "read-only", "yolo"]);

    // The skill is offered as a slash command.
    let commands = updates(&seen, "available_commands_update");
    assert!(
        commands.iter().any(|c| c["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "greet")),
        "{commands:?}"
    );

    // The read: its kind, title and file.
    let calls = updates(&seen, "tool_call");
    let read = calls
        .iter()
        .find(|c| c["kind"] == "read")
        .expect("a read call");
    assert_eq!(read["title"], "Read notes.txt");
    let notes = env.workdir().join("notes.txt").display().to_string();
    assert_eq!(read["locations"][0]["path"], notes.as_str());

    // The plan from the todo list.
    let plan = updates(&seen, "plan");
    let entries = &plan.last().expect("a plan update")["entries"];
    assert_eq!(entries[0]["content"], "write the tests");
    assert_eq!(entries[1]["status"], "pending");

    // Two questions about the edits, each with the gate's answers; the first refused.
    let permissions = seen["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 2, "{permissions:?}");
    let edits: Vec<&&Value> = calls.iter().filter(|c| c["kind"] == "edit").collect();
    assert_eq!(edits.len(), 2);
    assert_eq!(
        permissions[0]["toolCall"]["toolCallId"],
        edits[0]["toolCallId"]
    );
    let options = permissions[0]["options"].as_array().unwrap();
    assert_eq!(options.first().unwrap()["optionId"], "yes");
    assert_eq!(options.first().unwrap()["kind"], "allow_once");
    assert_eq!(options.last().unwrap()["optionId"], "no");
    assert_eq!(options.last().unwrap()["kind"], "reject_once");

    // The allowed edit ends with a diff, and the file changed.
    let done = updates(&seen, "tool_call_update");
    let diff = done
        .iter()
        .filter(|u| u["toolCallId"] == edits[1]["toolCallId"])
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "diff")
        .expect("a diff for the allowed edit");
    assert_eq!(diff["path"], notes.as_str());
    assert!(
        diff["oldText"].as_str().unwrap().contains("buy milk"),
        "{diff}"
    );
    assert!(
        diff["newText"].as_str().unwrap().contains("buy bread"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("notes.txt")).unwrap(),
        "buy bread\nand eggs\n"
    );
    let text: String = updates(&seen, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(text.contains("done"), "{text}");
    assert_eq!(seen["prompt1"]["stopReason"], "end_turn");

    // The cancelled turn: its answer says so, and what it ran is gone.
    assert_eq!(seen["prompt2"]["stopReason"], "cancelled");
    wait_until(
        Duration::from_secs(10),
        "the cancelled sleep to die",
        || processes_matching("sleep 417").is_empty(),
    );

    // Bad requests: ACP errors that say what was wrong; the connection went on.
    let errors = &seen["errors"];
    assert_eq!(errors["unknownSession"]["code"], -32002);
    assert!(
        errors["unknownSession"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown session no-such-session"),
        "{errors}"
    );
    assert_eq!(errors["badMode"]["code"], -32602);
    assert!(
        errors["badMode"]["message"]
            .as_str()
            .unwrap()
            .contains("turbo")
    );
    assert_eq!(errors["unknownMethod"]["code"], -32601);
    assert_eq!(errors["relativeCwd"]["code"], -32602);
    assert!(seen["afterErrors"].is_object(), "{seen}");

    // A second connection loads the session and sees its history.
    let id = seen["session"]["sessionId"].as_str().unwrap();
    let loaded = editor(&env, &fake, "load", id).await;
    let replayed = loaded["replayed"].as_array().unwrap();
    let kinds: Vec<&str> = replayed
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"user_message_chunk"), "{kinds:?}");
    assert_eq!(replayed[0]["content"]["text"], "tidy up");
    assert!(
        replayed
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["title"] == "read notes.txt"),
        "{kinds:?}"
    );
    assert!(
        replayed
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk"
                && u["content"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("done")),
        "{kinds:?}"
    );
    assert_eq!(
        loaded["load"]["modes"]["availableModes"][0]["id"], "ask",
        "{loaded}"
    );
    assert_eq!(
        loaded["errors"]["unknownSession"]["code"], -32002,
        "{loaded}"
    );
}

/// An editor that offers `fs` holds an unsaved buffer of notes.txt: the agent's `read` sees the
/// buffer (not the disk), its `edit` applies to the buffer and is written through the editor
/// (with the diff), and a `write` of a new file goes through the editor too; the disk stays as
/// it was, because saving is the editor's business.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_offers_its_files_is_read_and_written_through() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "on disk\n").unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("edit notes.txt unsaved edited")
            .tool_call("write fresh.txt 'made in the editor'")
            .text("done"),
    )
    .await
    .unwrap();
    let notes = env.workdir().join("notes.txt").display().to_string();
    let fresh = env.workdir().join("fresh.txt").display().to_string();
    let buffer = format!("{notes}=unsaved buffer text\n");
    let seen = editor(&env, &fake, "fs", &buffer).await;
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");

    // The model read the buffer.
    let requests = fake.requests();
    let read = &requests[1].tool_results()[0].1;
    assert!(read.contains("unsaved buffer text"), "{read}");
    assert!(!read.contains("on disk"), "{read}");

    // The edit and the write went to the editor, with the new text.
    let writes = seen["writes"].as_array().unwrap();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert_eq!(writes[0]["path"], notes.as_str());
    assert_eq!(writes[0]["content"], "edited buffer text\n");
    assert_eq!(writes[1]["path"], fresh.as_str());
    assert_eq!(writes[1]["content"], "made in the editor");
    let edited = &requests[2].tool_results()[0].1;
    assert!(edited.contains("Replaced 1 occurrence"), "{edited}");
    let created = &requests[3].tool_results()[0].1;
    assert!(created.contains("Created fresh.txt"), "{created}");

    // The edit's diff is against the buffer.
    let diff = updates(&seen, "tool_call_update")
        .iter()
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "diff" && c["path"] == notes.as_str())
        .expect("a diff of notes.txt");
    assert_eq!(diff["oldText"], "unsaved buffer text\n");
    assert_eq!(diff["newText"], "edited buffer text\n");

    // Synapse did not touch the disk: the editor owns the files it serves.
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("notes.txt")).unwrap(),
        "on disk\n"
    );
    assert!(!env.workdir().join("fresh.txt").exists());
}
