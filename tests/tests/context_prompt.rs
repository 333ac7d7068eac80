//! Issue 28, what the model is told about its context, asserted on the requests the scripted
//! model received from the real daemon: the skills that fit the user's words named in the turn's
//! message (issue 39 moved them there from the system prompt, which stays put; see
//! `context_cache`), connected MCP servers named with a memory server pointed at from
//! the Memory section, git facts in the environment, broken skills counted in one line, and a
//! lean prompt for the skill-search sub-agent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::mcp_support::fixtures_dir;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

const INVOICES: &str = "Extracts totals and line items from PDF invoices. Use when the user \
                        asks about an invoice or its totals.";
const PHOTOS: &str = "Resizes and crops photographs in bulk. Use when the user wants a smaller \
                      photo or a thumbnail.";

/// The scripted model, with the runtime its server runs on (kept for the whole test).
fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

/// Sets a file's modification time `days` back.
fn age(file: &Path, days: u64) {
    let f = std::fs::File::options().write(true).open(file).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(days * 86_400))
        .unwrap();
}

/// 38 newer filler skills whose descriptions share no word with the requests below, and the
/// two oldest skills that fit them.
fn forty_skills(env: &TestEnv) {
    age(&env.write_skill("parsing-invoices", INVOICES, "# I\n"), 30);
    age(&env.write_skill("resizing-photos", PHOTOS, "# P\n"), 29);
    for i in 0..38 {
        env.write_skill(
            &format!("filler-{i:02}"),
            &format!(
                "Keeps widget number {i} calibrated on assembly lines through careful \
                 lubrication, torque checking, vibration logging, spare parts ordering."
            ),
            "# F\n",
        );
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn with_forty_skills_the_one_that_fits_the_words_is_listed_although_it_is_the_oldest() {
    let env = TestEnv::new();
    forty_skills(&env);
    let (_rt, fake) = fake(Script::new().text("Looked.").text("Resized."));
    let out = env.cli_with_model(
        &fake,
        &["run", "What do the totals of the ACME invoice add up to?"],
    );
    assert!(out.success(), "{out:?}");
    let out = env.cli_with_model(
        &fake,
        &[
            "run",
            "--continue",
            "Now make that photo smaller, a thumbnail.",
        ],
    );
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let system = requests[0].system_text().unwrap();
    assert!(!system.contains("- parsing-invoices:"), "{system}");
    assert!(system.contains("more skills not listed"), "{system}");
    assert!(system.contains("skill search"), "{system}");
    let turn_text = |r: &synapse_tests::fake_llm::RecordedRequest| {
        r.messages().last().unwrap()["content"].to_string()
    };
    let first = turn_text(&requests[0]);
    assert!(
        first.contains("- parsing-invoices: Extracts totals"),
        "{first}"
    );
    assert!(!first.contains("- resizing-photos:"), "{first}");

    let last = requests.last().unwrap();
    assert_eq!(last.system_text().unwrap(), system);
    let second = turn_text(last);
    assert!(
        second.contains("- resizing-photos: Resizes and crops"),
        "{second}"
    );
}

#[test]
fn a_configured_memory_server_is_named_and_the_memory_section_points_at_it() {
    let env = TestEnv::new();
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let add = env.cli(&[
        "mcp",
        "add",
        "memory",
        "--",
        "node",
        &server.display().to_string(),
    ]);
    assert!(add.success(), "{}{}", add.stdout, add.stderr);
    let (_rt, fake) = fake(Script::new().text("ok"));
    let out = env.cli_with_model(&fake, &["run", "What did we decide last time?"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(system.contains("# Connected MCP servers"), "{system}");
    assert!(
        system.contains("- memory (9 tools)") && system.contains("`mcp:memory:read_graph`"),
        "{system}"
    );
    let memory = &system[system.find("# Memory").unwrap()..];
    assert!(
        memory.contains("A memory MCP server is connected (`memory`)"),
        "{memory}"
    );
}

#[test]
fn the_environment_names_the_git_branch_changes_and_last_commits() {
    let env = TestEnv::new();
    let work = env.workdir();
    git(&work, &["init", "-q"]);
    std::fs::write(work.join("parser.py"), "print(1)\n").unwrap();
    git(&work, &["add", "parser.py"]);
    git(&work, &["commit", "-q", "-m", "Add the parser"]);
    std::fs::write(work.join("parser.py"), "print(2)\n").unwrap();
    git(&work, &["commit", "-qam", "Fix the parser for empty lines"]);
    git(&work, &["checkout", "-qb", "feature-empty-lines"]);
    std::fs::write(work.join("notes.txt"), "wip\n").unwrap();

    let (_rt, fake) = fake(Script::new().text("ok"));
    let out = env.cli_with_model(&fake, &["run", "hello"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(
        system.contains("- Git repository: yes (branch feature-empty-lines, 1 changed file)\n"),
        "{system}"
    );
    assert!(
        system
            .contains("- Recent commits: \"Fix the parser for empty lines\"; \"Add the parser\"\n"),
        "{system}"
    );
}

#[test]
fn outside_a_repository_the_prompt_says_so_and_broken_skills_are_counted_in_one_line() {
    let env = TestEnv::new();
    env.write_skill("working", "Works fine. Use when testing.", "# W\n");
    for name in ["broken-one", "broken-two"] {
        let dir = env.home().join("skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: [never closed\n---\n# B\n"),
        )
        .unwrap();
    }
    let (_rt, fake) = fake(Script::new().text("ok"));
    let out = env.cli_with_model(&fake, &["run", "hello"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert_eq!(
        system
            .matches("2 skills could not be loaded; `skill list` shows why.\n")
            .count(),
        1,
        "{system}"
    );
    assert!(!system.contains("broken-one"), "{system}");
    assert!(system.contains("- Git repository: no\n"), "{system}");
}

#[test]
fn the_search_sub_agent_gets_the_metadata_and_the_answer_format_only() {
    let env = TestEnv::new();
    forty_skills(&env);
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("skill search \"sum the totals of my invoices\"")
            .text("{\"matched_skills\":[{\"name\":\"parsing-invoices\",\"description\":\"x\"}]}")
            .text("Use parsing-invoices."),
    );
    let out = env.cli_with_model(&fake, &["run", "my invoices"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let search = requests[1].system_text().unwrap();
    eprintln!("search sub-agent system prompt: {} bytes", search.len());
    assert!(search.len() < 8 * 1024, "{} bytes: {search}", search.len());
    assert!(
        search.contains("- parsing-invoices: Extracts totals"),
        "{search}"
    );
    assert!(search.contains("matched_skills"), "{search}");
    assert!(!search.contains("## Agent shell commands"), "{search}");
    assert!(!search.contains("skill-creator"), "{search}");
    let result = requests[2].last_tool_result().unwrap();
    assert!(
        result.contains("<skill name=\"parsing-invoices\">"),
        "{result}"
    );
}

#[test]
fn task_explore_is_not_told_about_the_task_commands_it_may_not_run() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("task:explore --prompt 'Which files are here?' --description files")
            .text("Nothing but an empty folder.")
            .text("The folder is empty."),
    );
    let out = env.cli_with_model(&fake, &["run", "what is in this folder?"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let main = requests[0].system_text().unwrap();
    assert!(main.contains("task:explore"), "{main}");
    let explore = requests[1].system_text().unwrap();
    assert!(explore.contains("### read"), "{explore}");
    for absent in ["task:general", "task:explore", "task:skill:search"] {
        assert!(!explore.contains(absent), "{absent} in {explore}");
    }
}
