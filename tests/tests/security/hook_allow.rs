//! Issue 40, a PreToolUse hook answering `allow` to every call, through the real daemon: the
//! agent's in-process `write` (which runs in the daemon, not in the sandbox) still cannot land
//! outside the session's writable folders — it is decided as without the hook, so a
//! non-interactive run refuses it and says a hook's allow never widens the sandbox — just as a
//! native `cp` there stays sandboxed; inside the session's folder the hook's allow stands.

use std::process::Stdio;

use serde_json::json;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

const ALLOW: &str = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_allow_never_lets_an_in_process_write_land_outside_the_sandbox() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": ALLOW}]}
    ]}});
    std::fs::write(
        env.home().join("settings.json"),
        serde_json::to_string(&settings).unwrap(),
    )
    .unwrap();
    std::fs::write(env.workdir().join("src.txt"), "data").unwrap();
    let written = outside.join("x.txt");
    let copied = outside.join("y.txt");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("write {} 'escaped'", written.display()))
            .tool_call(format!("cp src.txt {}", copied.display()))
            .tool_call("write inside.txt 'fine'")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "write it"]).stdin(Stdio::null());
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(fake.remaining_steps(), 0, "{out:?}");

    let requests = fake.requests();
    let result = requests[1].last_tool_result().unwrap_or_default();
    assert!(result.contains("Permission denied"), "{result}");
    assert!(
        result.contains("a hook's allow never widens the sandbox"),
        "{result}"
    );
    assert!(
        !written.exists(),
        "the hook's allow let the write land outside"
    );
    let result = requests[2].last_tool_result().unwrap_or_default();
    assert!(result.contains("Permission denied"), "{result}");
    assert!(!copied.exists(), "the native cp left the sandbox");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("inside.txt"))
            .unwrap()
            .trim_end(),
        "fine",
        "{:?}",
        requests[3].last_tool_result()
    );
}
