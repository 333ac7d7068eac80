//! Issue 39, a written skill script is a command at once: the `skill:<skill>:<script>` wrapper
//! exists when the `write` (or the shell line that wrote the file) returns, so one line can
//! write a script and run its command; a line that writes a project skill under
//! `.claude/skills/` and runs it is not taken for a write to the rules file; a line looping over
//! found commands is refused with what to run instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

/// One `synapse run` (with `args`) whose model runs `command` once; the result the model got.
async fn one_call(env: &TestEnv, args: &[&str], command: &str) -> String {
    let fake = FakeLlm::start(Script::new().tool_call(command).text("done"))
        .await
        .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.arg("run").args(args).arg("go");
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    fake.requests()[1].last_tool_result().unwrap()
}

const SCRIPT: &str = "\"\"\"Greets whoever is named.\"\"\"\nprint('hi')\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_written_by_write_runs_as_its_command_in_the_same_line() {
    let env = TestEnv::new();
    let skill_md = env.write_skill("greet", "Greets people.", "Run the script.");
    env.start_daemon();
    let script = skill_md.parent().unwrap().join("scripts/hello.py");
    let line = format!(
        "write {} <<'EOF'\n{SCRIPT}EOF\nskill:greet:hello -h",
        script.display()
    );
    let result = one_call(&env, &["--yes"], &line).await;
    assert!(
        result.contains("Usage: skill:greet:hello") && result.contains("Greets whoever is named."),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_written_by_the_shell_is_a_command_when_the_line_returns() {
    let env = TestEnv::new();
    let skill_md = env.write_skill("greet", "Greets people.", "Run the script.");
    env.start_daemon();
    let script = skill_md.parent().unwrap().join("scripts/wave.py");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    let line = format!("cat > {} <<'EOF'\n{SCRIPT}EOF", script.display());
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(line)
            .tool_call("skill:greet:wave -h")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--yes", "go"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[2].last_tool_result().unwrap();
    assert!(
        result.contains("Usage: skill:greet:wave") && result.contains("Greets whoever is named."),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_writing_and_running_a_project_skill_is_no_rules_write() {
    let env = TestEnv::new();
    let work = env.workdir();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::create_dir_all(work.join(".claude")).unwrap();
    std::fs::write(work.join(".claude/settings.json"), "{}\n").unwrap();
    env.start_daemon();
    let line = format!(
        "mkdir -p .claude/skills/tally/scripts && cat > .claude/skills/tally/SKILL.md <<'EOF'\n\
         ---\nname: tally\ndescription: Counts things.\n---\nRun the script.\nEOF\n\
         write .claude/skills/tally/scripts/count.py <<'EOF'\n{SCRIPT}EOF\n\
         skill:tally:count -h; echo ran"
    );
    // The line is not refused as a write of the rules file (it names none) and runs whole.
    // (A project skill folder created by this very line is not yet a skills root when its
    // `skill:` command runs in it; a user skill's is: see the test above.)
    let result = one_call(&env, &[], &line).await;
    assert!(!result.contains("Permission denied"), "{result}");
    assert!(result.contains("ran"), "{result}");
    assert!(work.join(".claude/skills/tally/scripts/count.py").is_file());
    assert_eq!(
        std::fs::read_to_string(work.join(".claude/settings.json")).unwrap(),
        "{}\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_over_found_commands_is_refused_with_what_to_run_instead() {
    let env = TestEnv::new();
    env.start_daemon();
    let result = one_call(
        &env,
        &[],
        "for c in $(tools search memory | awk '{print $1}'); do $c -h; done",
    )
    .await;
    assert!(
        result.contains("`$c` is only known at run time"),
        "{result}"
    );
    assert!(
        result.contains("name each program in the line")
            && result.contains("`tools search memory`")
            && result.contains("one after another"),
        "{result}"
    );
}
