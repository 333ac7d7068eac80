//! Issue 8 (self-growth): the seed 002 §4.5.9 flow end to end with a scripted model — a task
//! with auto-enhance on makes the skill sub-agent create `analyzing-logs` (and its script
//! command); the next task finds it with `skill search`, loads it and uses it. Also: writes
//! outside the skills folder are refused, the log is truncated from its end, a cancelled turn
//! brings no report, and the meta skills are installed once and never overwritten.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use synapse_tests::fake_llm::{FakeLlm, Reply, Script, Step};
use synapse_tests::{Run, TestEnv};

fn enable_auto_enhance(env: &TestEnv, max_chars: Option<usize>) {
    std::fs::create_dir_all(env.home()).unwrap();
    let mut enhance = serde_json::json!({"autoEnhance": true});
    if let Some(max) = max_chars {
        enhance["maxEnhanceContextChars"] = max.into();
    }
    std::fs::write(
        env.paths().settings_file(),
        serde_json::json!({ "skillEnhance": enhance }).to_string(),
    )
    .unwrap();
}

fn run_cmd(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> tokio::process::Command {
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", "--output-format", "stream-json", prompt])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::process::Command::from(cmd)
}

async fn run_agent(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> Run {
    Run::from(run_cmd(env, fake, prompt).output().await.unwrap())
}

fn reports(out: &Run) -> Vec<String> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["subtype"] == "skill_enhance_report")
        .map(|v| v["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

const SKILL_MD: &str = "---
name: analyzing-logs
description: Finds and explains errors in log files. Use when asked to analyze a .log file.
---

# Analyzing logs

## Quick start
skill:analyzing-logs:count_errors app.log
";

const SCRIPT: &str = "#!/bin/sh
# Counts the ERROR lines of a log file.
if [ \"$1\" = \"-h\" ]; then echo 'usage: count_errors <file>'; exit 0; fi
echo \"errors: $(grep -c ERROR \"$1\")\"
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_grows_a_skill_that_the_next_task_finds_and_uses() {
    let env = TestEnv::new();
    enable_auto_enhance(&env, None);
    let skills = env.home().join("skills");
    std::fs::write(
        env.workdir().join("error.log"),
        "ok\nERROR disk\nERROR net\n",
    )
    .unwrap();
    std::fs::write(
        env.workdir().join("app.log"),
        "ERROR a\nok\nERROR b\nERROR c\n",
    )
    .unwrap();
    let outside = env.workdir().join("outside.txt");
    let fake = FakeLlm::start(
        Script::new()
            // task 1, main agent: nothing found, done by hand
            .tool_call("skill search \"analyze log files\"")
            .tool_call("search ERROR --path error.log")
            .text("error.log has 2 errors: disk and net.")
            // stop hook: the skill sub-agent creates the skill
            .tool_call(format!(
                "write {}/analyzing-logs/SKILL.md <<'EOF'\n{SKILL_MD}EOF",
                skills.display()
            ))
            .tool_call(format!(
                "write {}/analyzing-logs/scripts/count_errors.sh <<'EOF'\n{SCRIPT}EOF",
                skills.display()
            ))
            .tool_call(format!("write {} stolen", outside.display()))
            .text(
                "Skill enhancement done:\n- Action: created skill\n- Name: analyzing-logs\n\
                 - Tools: search, read\n- Contents:\n  - count errors in a log",
            ),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, "Analyze error.log and find every error").await;
    assert!(out.success(), "{out:?}");
    let got = reports(&out);
    assert_eq!(got.len(), 1, "{out:?}");
    assert!(got[0].contains("Name: analyzing-logs"), "{}", got[0]);
    // The report comes before the end of the turn.
    let report_at = out.stdout.find("skill_enhance_report").unwrap();
    let finished_at = out.stdout.rfind("turn_finished").unwrap_or(usize::MAX);
    assert!(report_at < finished_at, "{}", out.stdout);

    let requests = fake.requests();
    assert_eq!(requests.len(), 7);
    let sub = &requests[3];
    let system = sub.system_text().unwrap();
    assert!(
        system.starts_with("You are the Skill Sub-Agent"),
        "{system}"
    );
    for meta in ["skill-creator", "enhancing-skills", "evaluating-skills"] {
        assert!(system.contains(&format!("### {meta}")), "{meta} missing");
    }
    let task = sub.last_user_text().unwrap();
    assert!(task.contains("error.log has 2 errors"), "{task}");
    // The write outside the skills folder was refused and nothing was written.
    let refused = requests[6].last_tool_result().unwrap();
    assert!(refused.contains("refused"), "{refused}");
    assert!(!outside.exists());

    // The new skill is indexed and its script is a command.
    let index = std::fs::read_to_string(skills.join("index.json")).unwrap();
    assert!(index.contains("analyzing-logs"), "{index}");
    assert!(
        env.home()
            .join("bin/skill:analyzing-logs:count_errors")
            .exists()
    );

    // Task 2: search finds it (the sub-agent matches), the agent loads and uses it.
    fake.push(Reply::new().tool_call("skill search \"analyze the log file\""));
    fake.push(
        Reply::new()
            .text("{\"matched_skills\":[{\"name\":\"analyzing-logs\",\"description\":\"x\"}]}"),
    );
    fake.push(Reply::new().tool_call("skill:load analyzing-logs"));
    fake.push(Reply::new().tool_call("skill:analyzing-logs:count_errors app.log"));
    fake.push(Reply::new().text("app.log has 3 errors."));
    fake.push(Reply::new().text(
        "Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: covered",
    ));
    let out = run_agent(&env, &fake, "Analyze the errors in app.log").await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let search_result = requests[9].last_tool_result().unwrap();
    assert!(
        search_result.contains("<skill name=\"analyzing-logs\">"),
        "{search_result}"
    );
    // The sub-agent saw the skill's metadata, and not the meta skills as candidates.
    let sub_system = requests[8].system_text().unwrap();
    assert!(sub_system.contains("- analyzing-logs: Finds and explains errors"));
    assert!(!sub_system.contains("- skill-creator:"));
    let loaded = requests[10].last_tool_result().unwrap();
    assert!(loaded.contains("# Analyzing logs"), "{loaded}");
    let used = requests[11].last_tool_result().unwrap();
    assert!(used.contains("errors: 3"), "{used}");
    assert!(reports(&out)[0].contains("no change needed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_enhancer_reads_the_end_of_the_log_and_a_cancelled_turn_reports_nothing() {
    let env = TestEnv::new();
    enable_auto_enhance(&env, Some(400));
    let fake = FakeLlm::start(
        Script::new()
            .text(format!("{} THE-END-OF-THE-TASK", "words ".repeat(100)))
            .text("Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: simple"),
    )
    .await
    .unwrap();
    let out = run_agent(&env, &fake, "BEGIN-OF-THE-TASK please answer").await;
    assert!(out.success(), "{out:?}");
    let task = fake.requests()[1].last_user_text().unwrap();
    assert!(task.contains("THE-END-OF-THE-TASK"), "{task}");
    assert!(!task.contains("BEGIN-OF-THE-TASK"), "{task}");
    assert_eq!(reports(&out).len(), 1);

    // Cancelled while the enhancer runs: the turn ends cancelled and brings no report.
    fake.push(Reply::new().text("done"));
    fake.push(Step::Hang);
    let child = run_cmd(&env, &fake, "another task").spawn().unwrap();
    fake.wait_for_requests(4, Duration::from_secs(30)).await;
    let pid = child.id().unwrap();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let out = Run::from(child.wait_with_output().await.unwrap());
    // The task itself had completed; the enhancement was dropped without a report.
    assert!(out.stdout.contains("\"result\":\"done\""), "{out:?}");
    assert!(reports(&out).is_empty(), "{out:?}");

    // A turn cancelled before it completes never starts the enhancer.
    fake.push(Step::Hang);
    let child = run_cmd(&env, &fake, "a third task").spawn().unwrap();
    fake.wait_for_requests(5, Duration::from_secs(30)).await;
    let pid = child.id().unwrap();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let out = Run::from(child.wait_with_output().await.unwrap());
    assert!(!out.success(), "{out:?}");
    assert!(reports(&out).is_empty(), "{out:?}");
    assert_eq!(fake.requests().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_skills_are_installed_once_and_never_overwritten() {
    let env = TestEnv::new();
    let st = env.cli(&["daemon", "status"]);
    assert!(st.success(), "{st:?}");
    // Synapse's meta skills live apart from the user's skills (`synapse:<name>`).
    let creator = env.home().join("meta-skills/skill-creator/SKILL.md");
    let text = std::fs::read_to_string(&creator).unwrap();
    assert!(text.contains("type: meta"), "{text}");
    for name in ["enhancing-skills", "evaluating-skills"] {
        assert!(
            env.home()
                .join(format!("meta-skills/{name}/SKILL.md"))
                .exists()
        );
        assert!(!env.home().join(format!("skills/{name}")).exists());
    }
    let mine = text.replace("# Creating a skill", "# Creating a skill (my way)");
    std::fs::write(&creator, &mine).unwrap();
    env.stop_daemon();
    assert!(env.cli(&["daemon", "status"]).success());
    assert_eq!(std::fs::read_to_string(&creator).unwrap(), mine);
}
