//! Command permissions end to end (issue 11): the rules, modes and approvals a user sets decide
//! what the model's commands may do, through a real daemon, real shells under Landlock, the
//! REPL in a real terminal and the scripted fake LLM.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;
use crate::repl_support;

use std::path::PathBuf;

use repl_support::Screen;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, bin, wait_until};

/// A test home whose temp dir is private, so a folder next to the work folder is outside
/// everything the sandbox lets the shell write.
fn env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    (env, outside)
}

async fn run(env: &TestEnv, fake: &FakeLlm, extra: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.env("TMPDIR", env.root().join("tmp"))
        .arg("run")
        .args(extra)
        .arg("do the task");
    synapse_tests::run_async(cmd).await
}

fn landlock() -> bool {
    let out = std::process::Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    let ok = out.status.success();
    if !ok {
        eprintln!(
            "Landlock is not available here ({}): sandbox assertions skipped",
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }
    ok
}

fn session_file_text(env: &TestEnv) -> String {
    let dir = env.home().join("sessions");
    std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn risky_commands_are_denied_in_a_non_interactive_run_unless_allowed() {
    let (env, _) = env();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("ls && git push --force origin main")
            .text("could not push")
            .tool_call("git push --force origin main")
            .text("pushed")
            .tool_call("git push --force origin main")
            .text("pushed again"),
    )
    .await
    .unwrap();

    let denied = run(&env, &fake, &[]).await;
    assert!(denied.success(), "{denied:?}");
    assert!(
        denied
            .stderr
            .contains("denied: `ls && git push --force origin main`")
            && denied.stderr.contains("--allow 'git push"),
        "{}",
        denied.stderr
    );
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains("Permission denied") && result.contains("non-interactive"),
        "{result}"
    );
    assert!(
        session_file_text(&env).contains("\"outcome\":\"denied\""),
        "the denial is in the session log"
    );
    // The daemon's log is written by a background thread: wait for the line.
    wait_until(DEADLINE, "the denial in the daemon log", || {
        let log = std::fs::read_dir(env.home().join("logs"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect::<String>();
        log.contains("permission") && log.contains("denied")
    });

    // --allow with the pattern the message suggested lets exactly that through (git then
    // fails on its own: there is no repository here).
    let allowed = run(&env, &fake, &["--allow", "git push --force:*"]).await;
    assert!(allowed.success(), "{allowed:?}");
    let result = fake.requests()[3].last_tool_result().unwrap();
    assert!(
        !result.contains("Permission denied") && result.to_lowercase().contains("git"),
        "{result}"
    );

    // --yes approves every ask.
    let yes = run(&env, &fake, &["--yes"]).await;
    assert!(yes.success(), "{yes:?}");
    let result = fake.requests()[5].last_tool_result().unwrap();
    assert!(!result.contains("Permission denied"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_blocks_writes_outside_the_project_that_rules_cannot_see() {
    let (env, outside) = env();
    if !landlock() {
        return;
    }
    // python3 writes the files itself: no redirect or writer the rules could see, so only
    // the kernel stands between the command and the file.
    let write = |p: &str| format!("python3 -c \"open('{p}', 'w').write('x')\" && echo wrote {p}");
    let inside = env.workdir().join("inside.txt");
    let blocked = outside.join("blocked.txt");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(write(&inside.display().to_string()))
            .tool_call(write(&blocked.display().to_string()))
            .text("done"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    assert!(inside.exists(), "a write in the project works");
    assert!(!blocked.exists(), "a write outside it is stopped");
    let result = fake.requests()[2].last_tool_result().unwrap();
    assert!(result.contains("Permission denied"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_refuses_writes_and_yolo_runs_everything() {
    let (env, outside) = env();
    let sandboxed = landlock();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("write notes.txt hello")
            .tool_call("python3 -c \"open('made.txt', 'w')\"")
            .tool_call("cat /etc/hostname >/dev/null && echo read-ok")
            .text("looked only")
            .tool_call(format!("echo x > {}/yolo.txt", outside.display()))
            .text("wrote"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &["--permission-mode", "read-only"]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let write = requests[1].last_tool_result().unwrap();
    assert!(write.contains("read-only"), "{write}");
    assert!(!env.workdir().join("notes.txt").exists());
    let python = requests[2].last_tool_result().unwrap();
    assert!(!env.workdir().join("made.txt").exists(), "{python}");
    if sandboxed {
        assert!(python.contains("Permission denied"), "{python}");
    }
    let read = requests[3].last_tool_result().unwrap();
    assert!(read.contains("read-ok"), "{read}");

    let yolo = run(&env, &fake, &["--permission-mode", "yolo"]).await;
    assert!(yolo.success(), "{yolo:?}");
    assert!(yolo.stderr.contains("yolo"), "{}", yolo.stderr);
    assert!(outside.join("yolo.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_rules_count_only_in_a_trusted_folder() {
    let (env, _) = env();
    std::fs::create_dir_all(env.workdir().join(".synapse")).unwrap();
    std::fs::write(
        env.workdir().join(".synapse/settings.json"),
        r#"{"permissions": {"bash": {"allow": ["git push --force:*"]}}}"#,
    )
    .unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("git push --force origin main")
            .text("first")
            .tool_call("git push --force origin main")
            .text("second"),
    )
    .await
    .unwrap();
    let untrusted = run(&env, &fake, &[]).await;
    assert!(untrusted.success(), "{untrusted:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("Permission denied"), "{result}");

    let trust = env.cli(&["trust", "--yes"]);
    assert!(
        trust.success() && trust.stdout.contains("Trusted:"),
        "{trust:?}"
    );
    let trusted = run(&env, &fake, &[]).await;
    assert!(trusted.success(), "{trusted:?}");
    let result = fake.requests()[3].last_tool_result().unwrap();
    assert!(!result.contains("Permission denied"), "{result}");
    let list = env.cli(&["trust", "--list"]);
    assert!(
        list.stdout
            .contains(&env.workdir().canonicalize().unwrap().display().to_string()),
        "{list:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_cannot_create_a_file_anywhere() {
    let (env, outside) = env();
    if !landlock() {
        return;
    }
    let here = env.workdir().join("explored.txt");
    let there = outside.join("explored.txt");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("task:explore --prompt 'look around' --description 'look'")
            // The sub-agent's turn: two writes the rules cannot see, then its answer.
            .tool_call(format!(
                "python3 -c \"open('{}', 'w')\"; python3 -c \"open('{}', 'w')\"; echo tried",
                here.display(),
                there.display()
            ))
            .text("nothing written")
            .text("explored"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    let sub = fake.requests()[2].last_tool_result().unwrap();
    assert!(!here.exists(), "{sub}");
    assert!(!there.exists(), "{sub}");
    assert!(sub.contains("Permission denied"), "{sub}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_asks_and_always_saves_the_rule() {
    let (env, _) = env();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("git push --force origin main")
            .text("tried once")
            .tool_call("git push --force origin main")
            .text("tried twice"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("push it");
    screen.wait_for("Run `git push --force origin main`?");
    screen.wait_for("[a]lways saves the rule");
    screen.line("a");
    screen.wait_for("You (2)>");
    let settings = std::fs::read_to_string(env.home().join("settings.json")).unwrap();
    assert!(settings.contains("git push --force"), "{settings}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(!result.contains("Permission denied"), "{result}");

    // The saved rule answers the second time: no question.
    screen.line("again");
    screen.wait_for("You (3)>");
    assert_eq!(
        screen
            .text()
            .matches("Run `git push --force origin main`?")
            .count(),
        1
    );

    screen.line("/permissions read-only");
    screen.wait_for("Permission mode: read-only");
    screen.line("/permissions");
    screen.wait_for_count("Permission mode: read-only", 2);
}

/// "Always" saves the narrowest useful prefix (the module, not the file it was given), shows it
/// before saving, and the rule answers the same module with other arguments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_saves_a_prefix_rule_that_answers_other_arguments() {
    let (env, _) = env();
    std::fs::write(env.workdir().join("a.json"), "{\"a\": 1}").unwrap();
    std::fs::write(env.workdir().join("b.json"), "{\"b\": 2}").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("python3 -m json.tool a.json")
            .text("formatted a")
            .tool_call("python3 -m json.tool b.json")
            .text("formatted b"),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat", "--permission-mode", "ask"]);
    screen.wait_for("You (1)>");
    screen.line("format a.json");
    screen.wait_for("Run `python3 -m json.tool a.json`?");
    screen.wait_for("[a]lways saves the rule `python3 -m json.tool:*`");
    screen.line("a");
    screen.wait_for("You (2)>");
    let settings = std::fs::read_to_string(env.home().join("settings.json")).unwrap();
    assert!(settings.contains("python3 -m json.tool:*"), "{settings}");
    assert!(
        fake.requests()[1]
            .last_tool_result()
            .unwrap()
            .contains("\"a\": 1")
    );

    screen.line("now b.json");
    screen.wait_for("You (3)>");
    assert!(
        !screen.text().contains("Run `python3 -m json.tool b.json`?"),
        "the saved prefix rule answers: {}",
        screen.text()
    );
    assert!(
        fake.requests()[3]
            .last_tool_result()
            .unwrap()
            .contains("\"b\": 2")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_use_the_daemon_to_escape() {
    let (env, outside) = env();
    if !landlock() {
        return;
    }
    let escaped = outside.join("escaped.txt");
    let synapse = bin("synapse").display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            // Hidden from the rules inside a variable, so only the daemon's own check stops it.
            .tool_call(format!(
                "S={synapse}; $S exec 'echo x > {}' ; $S daemon status >/dev/null && echo status-ok",
                escaped.display()
            ))
            .text("tried"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &["--yes"]).await;
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(!escaped.exists(), "{result}");
    assert!(
        result.contains("not available from inside a sandboxed agent shell"),
        "{result}"
    );
    assert!(
        result.contains("status-ok"),
        "read-only calls still work: {result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_asks_for_every_native_command_and_write_but_not_for_reads() {
    let (env, _) = env();
    std::fs::write(env.workdir().join("a.txt"), "alpha\n").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read a.txt")
            .tool_call("ls")
            .tool_call("write b.txt beta")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &["--permission-mode", "ask"]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    assert!(requests[1].last_tool_result().unwrap().contains("alpha"));
    for (i, what) in [(2, "`ls`"), (3, "`write b.txt beta`")] {
        let result = requests[i].last_tool_result().unwrap();
        assert!(result.contains("Permission denied"), "{result}");
        assert!(
            out.stderr.contains(&format!("denied: {what}")),
            "{}",
            out.stderr
        );
    }
    assert!(!env.workdir().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_follow_their_annotations_and_the_mcp_rules() {
    let (env, _) = env();
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let config = serde_json::json!({"mcpServers": {
        "fs": {"command": "node", "args": [mcp_support::fs_server_js(), env.workdir()]}
    }});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    std::fs::write(env.workdir().join("note.txt"), "alpha\n").unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:fs:write_file");
    wait_until(DEADLINE, "the fs server's wrappers", || wrapper.exists());

    let read = format!(
        "mcp:fs:read_text_file --path {}/note.txt",
        env.workdir().display()
    );
    let write = format!(
        "mcp:fs:write_file --path {}/out.txt --content beta",
        env.workdir().display()
    );
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(read.as_str())
            .tool_call(write.as_str())
            .text("first")
            .tool_call(write.as_str())
            .text("second"),
    )
    .await
    .unwrap();
    // readOnlyHint: runs; destructiveHint (write_file): asks, so a run without --allow refuses.
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    assert!(requests[1].last_tool_result().unwrap().contains("alpha"));
    let refused = requests[2].last_tool_result().unwrap();
    assert!(refused.contains("Permission denied"), "{refused}");
    assert!(
        out.stderr.contains("--allow 'mcp:fs:write_file'"),
        "{}",
        out.stderr
    );
    assert!(!env.workdir().join("out.txt").exists());

    let allowed = run(&env, &fake, &["--allow", "mcp:fs:write_file"]).await;
    assert!(allowed.success(), "{allowed:?}");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("out.txt")).unwrap(),
        "beta"
    );
}

/// Issue 28: `skill` is the agent's command inside lists, pipes and `$(…)` too — never judged as
/// procps' `skill` (which ends processes) — so a non-interactive run lets it through unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skill_composes_in_lists_pipes_and_substitutions_without_a_question() {
    let (env, _) = env();
    env.write_skill(
        "csv-plots",
        "Plots CSV columns. Use when asked to chart a CSV file.",
        "Plot it.",
    );
    std::fs::write(env.workdir().join("data.csv"), "a,b\n1,2\n").unwrap();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("head -1 data.csv; skill load csv-plots")
            .tool_call("skill load csv-plots | grep -c 'Plot it'")
            .tool_call("echo \"found: $(skill load csv-plots | head -1)\"")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run(&env, &fake, &[]).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    for (n, request) in requests.iter().enumerate().take(4).skip(1) {
        let r = request.last_tool_result().unwrap();
        assert!(
            !r.contains("Permission denied") && !r.contains("can end processes"),
            "call {n}: {r}"
        );
        assert!(
            r.contains("csv-plots") || r.trim_end().ends_with('1'),
            "call {n}: {r}"
        );
    }
}
