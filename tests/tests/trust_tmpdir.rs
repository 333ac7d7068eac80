//! Issue 16, the daemon's own files out of the sandbox's reach when `SYNAPSE_HOME` lives in
//! the temp dir (as in every test and CI run): each chat session gets a private `TMPDIR`, the
//! only temporary folder its sandbox may write, removed when the session ends; writes into the
//! home through paths only known at run time are stopped by the sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, TestEnv, bin, wait_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_under_the_temp_dir_is_not_writable_from_the_sandbox() {
    let probe = std::process::Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!("Landlock is not available here: no sandbox to test");
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join("bin")).unwrap();
    let trust_file = env.home().join("trusted_folders.json");
    std::fs::write(&trust_file, "{\"folders\": []}\n").unwrap();
    let home = env.home().display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(
                "echo \"tmp=$TMPDIR\"; touch \"$TMPDIR/mine\" && echo private-ok; \
                 mktemp >/dev/null && echo mktemp-ok",
            )
            // A script the rules cannot see into (a line naming the home would be asked about
            // first): only the sandbox stands between it and the daemon's files.
            .tool_call(format!(
                "write evil.sh <<'EOF'\nH={home}; echo evil > \"$H/bin/mcp:x:y\"; \
                 echo '{{\"folders\": [\"/\"]}}' > \"$H/trusted_folders.json\"\nEOF"
            ))
            .tool_call("bash evil.sh; echo tried")
            .text("done"),
    )
    .await
    .unwrap();
    // The daemon's temp dir is the test root, which holds SYNAPSE_HOME.
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", env.root())
        .args(["run", "--yes", "do it"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let first = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        first.contains("private-ok") && first.contains("mktemp-ok"),
        "the private TMPDIR is writable: {first}"
    );
    let tmp = first
        .lines()
        .find_map(|l| l.strip_prefix("tmp="))
        .unwrap()
        .to_string();
    assert!(
        tmp.starts_with(&env.root().display().to_string()) && tmp.contains("/session-"),
        "{tmp}"
    );
    let second = fake.requests()[3].last_tool_result().unwrap();
    assert!(second.contains("tried"), "{second}");
    assert!(!env.home().join("bin/mcp:x:y").exists(), "{second}");
    assert_eq!(
        std::fs::read_to_string(&trust_file).unwrap(),
        "{\"folders\": []}\n",
        "{second}"
    );
    wait_until(DEADLINE, "the session's TMPDIR to be removed", || {
        !std::path::Path::new(&tmp).exists()
    });
}
