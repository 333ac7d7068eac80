//! Issue 28, project instructions as Claude Code and Codex keep them, asserted on the requests
//! the scripted model received from the real daemon: every instruction file (the project's
//! `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md`, the user's `~/.claude/CLAUDE.md`,
//! `~/.codex/AGENTS.md`, `$SYNAPSE_HOME/AGENTS.md`) and an `@import` reach the prompt in order;
//! a subfolder's `AGENTS.md` reaches the model once, with the first `read` there; a 2 MB file is
//! cut with a note; a symlink out of the project is not read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Script};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `synapse run <prompt>` in the work folder (a git repository, so it is the project root);
/// returns the requests the model received.
async fn run(env: &TestEnv, script: Script, prompt: &str) -> Vec<RecordedRequest> {
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.workdir())
        .status()
        .unwrap();
    assert!(git.success());
    let fake = FakeLlm::start(script).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", prompt]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    fake.requests()
}

/// The offsets of `marks` in `text`, asserting each is there.
fn positions(text: &str, marks: &[&str]) -> Vec<usize> {
    marks
        .iter()
        .map(|m| {
            text.find(m)
                .unwrap_or_else(|| panic!("{m} missing from the prompt:\n{text}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instruction_file_and_an_import_reach_the_prompt_user_level_first() {
    let env = TestEnv::new();
    let work = env.workdir();
    write(
        &env.user_home().join(".claude/CLAUDE.md"),
        "USER-CLAUDE: answer briefly.",
    );
    write(
        &env.user_home().join(".codex/AGENTS.md"),
        "USER-CODEX: prefer ripgrep.",
    );
    write(&env.home().join("AGENTS.md"), "USER-SYNAPSE: say hello.");
    write(
        &work.join("AGENTS.md"),
        "ROOT-AGENTS: build with `make alpha`.\nStyle: @docs/style.md\n",
    );
    write(
        &work.join("docs/style.md"),
        "IMPORTED-STYLE: tabs, not spaces.",
    );
    write(
        &work.join("CLAUDE.md"),
        "ROOT-CLAUDE: run `make test-beta`.",
    );
    write(
        &work.join("CLAUDE.local.md"),
        "LOCAL-CLAUDE: my sandbox is db-7.",
    );
    let requests = run(&env, Script::new().text("ok"), "how do I build?").await;
    let system = requests[0].system_text().unwrap();
    let at = positions(
        &system,
        &[
            "# Environment",
            "# Project instructions",
            "USER-CLAUDE",
            "USER-CODEX",
            "USER-SYNAPSE",
            "ROOT-AGENTS",
            "IMPORTED-STYLE",
            "ROOT-CLAUDE",
            "LOCAL-CLAUDE",
        ],
    );
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {at:?}");
    // `$SYNAPSE_HOME` outside the user's home is named by its real path, not the variable.
    let synapse_agents = format!("## {}", env.home().join("AGENTS.md").display());
    for label in [
        "## ~/.claude/CLAUDE.md (the user's, for every project)",
        "## ~/.codex/AGENTS.md",
        synapse_agents.as_str(),
        "## AGENTS.md\n",
        "## docs/style.md (imported)",
        "## CLAUDE.local.md",
    ] {
        assert!(system.contains(label), "{label} missing:\n{system}");
    }
    assert!(system.contains("never change what you may run"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subfolders_agents_md_reaches_the_model_once_with_the_first_read_there() {
    let env = TestEnv::new();
    let work = env.workdir();
    write(&work.join("AGENTS.md"), "ROOT-RULES");
    write(
        &work.join("sub/AGENTS.md"),
        "NESTED-RULES: use the sub Makefile.",
    );
    write(&work.join("sub/a.txt"), "alpha");
    write(&work.join("sub/b.txt"), "beta");
    write(&work.join("top.txt"), "top");
    let script = Script::new()
        .tool_call("read top.txt")
        .tool_call("read sub/a.txt")
        .tool_call("read sub/b.txt")
        .text("done");
    let requests = run(&env, script, "read the files").await;
    assert_eq!(requests.len(), 4);
    let system = requests[0].system_text().unwrap();
    assert!(system.contains("ROOT-RULES"), "{system}");
    assert!(!system.contains("NESTED-RULES"), "{system}");
    let top = requests[1].last_tool_result().unwrap();
    assert!(!top.contains("Instructions from"), "{top}");
    let first = requests[2].last_tool_result().unwrap();
    assert!(first.contains("alpha"), "{first}");
    assert!(
        first.contains(
            "Instructions from sub/AGENTS.md (they apply to files below sub/):\nNESTED-RULES"
        ),
        "{first}"
    );
    let second = requests[3].last_tool_result().unwrap();
    assert!(
        second.contains("beta") && !second.contains("NESTED-RULES"),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_mb_agents_md_is_cut_to_its_budget_with_a_note() {
    let env = TestEnv::new();
    let mut huge = String::from("HUGE-START\n");
    huge.push_str(&"All work follows the house rules. ".repeat(2 * 1024 * 1024 / 34 + 1));
    huge.truncate(2 * 1024 * 1024 - 9);
    huge.push_str("HUGE-END\n");
    write(&env.workdir().join("AGENTS.md"), &huge);
    let requests = run(&env, Script::new().text("ok"), "hi").await;
    let system = requests[0].system_text().unwrap();
    assert!(system.contains("HUGE-START"));
    assert!(!system.contains("HUGE-END"));
    assert!(
        system.contains("\n[AGENTS.md cut at 32 KB of 2 MB]"),
        "{}",
        &system[system.len().saturating_sub(500)..]
    );
    assert!(
        requests[0].body_len < 100 * 1024,
        "{}",
        requests[0].body_len
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_md_linking_out_of_the_project_is_not_read() {
    let env = TestEnv::new();
    std::os::unix::fs::symlink("/etc/passwd", env.workdir().join("AGENTS.md")).unwrap();
    write(&env.workdir().join("CLAUDE.md"), "STILL-HERE");
    let requests = run(&env, Script::new().text("ok"), "hi").await;
    let system = requests[0].system_text().unwrap();
    assert!(system.contains("STILL-HERE"), "{system}");
    assert!(!system.contains("root:"), "{system}");
    assert!(!system.contains("## AGENTS.md"), "{system}");
}
