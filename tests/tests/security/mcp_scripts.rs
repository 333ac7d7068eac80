//! Issue 27, "one verdict wherever a command arrives": a destructive MCP tool whose wrapper a
//! script runs (`python3 -c 'subprocess.run(["mcp:fs:write_file", …])'`) gets the router's
//! verdict — the session could not be asked from there, so it is refused, as the same call
//! typed directly is in `synapse run` — while a read-only tool called the same way runs.
//! Through the real daemon and the real `@modelcontextprotocol/server-filesystem`.

use serde_json::json;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, TestEnv, wait_until};

use crate::mcp_support::fs_server_js;

fn from_python(command: &str, args: &[&str]) -> String {
    let argv: Vec<String> = std::iter::once(command)
        .chain(args.iter().copied())
        .map(|a| format!("{a:?}"))
        .collect();
    format!(
        "python3 -c 'import subprocess, sys; r = subprocess.run([{}], capture_output=True, text=True); \
         print(r.stdout); print(r.stderr, file=sys.stderr); print(\"exit=\" + str(r.returncode))'",
        argv.join(", ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_mcp_tool_called_from_a_script_is_refused_as_the_router_would() {
    let env = TestEnv::new();
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::write(served.join("notes.txt"), "kept\n").unwrap();
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp_servers.json"),
        json!({"mcpServers": {"fs": {"command": "node", "args": [fs_server_js(), &served]}}})
            .to_string(),
    )
    .unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:fs:write_file");
    wait_until(DEADLINE, "the fs server's wrappers", || wrapper.exists());

    let victim = served.join("written.txt");
    let victim_s = victim.display().to_string();
    let notes = served.join("notes.txt").display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(from_python(
                "mcp:fs:write_file",
                &["--path", &victim_s, "--content", "pwned"],
            ))
            .tool_call(from_python("mcp:fs:read_text_file", &["--path", &notes]))
            .tool_call(format!(
                "mcp:fs:write_file --path {victim_s} --content direct"
            ))
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "do the task"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert!(
        !victim.exists(),
        "the script's write_file ran unasked: {out:?}"
    );
    let requests = fake.requests();
    let script_write = requests[1].last_tool_result().unwrap();
    assert!(
        script_write.contains("needs the user's approval")
            && script_write.contains("run it as a command of its own")
            && !script_write.contains("exit=0"),
        "{script_write}"
    );
    // A tool that only reads runs from a script as it would typed.
    let script_read = requests[2].last_tool_result().unwrap();
    assert!(
        script_read.contains("kept") && script_read.contains("exit=0"),
        "{script_read}"
    );
    // And typed directly, the same write is refused too (nobody to ask in `synapse run`).
    let direct = requests[3].last_tool_result().unwrap();
    assert!(direct.contains("Permission denied"), "{direct}");
}
