//! Issue 39, sub-agents told only what they use, through the real daemon with a scripted model
//! (asserting on what the model was sent): the skill-search sub-agent is offered no tool and a
//! call it makes anyway does not run; the enhancer of a turn with nothing to learn makes one
//! request of at most 10 KB carrying a compact transcript (no session id, no timestamps, no
//! tool-call ids); `task:explore` gets a system prompt of at most 5 KB that documents none of
//! the commands it is refused; the main prompt documents every agent command with its
//! arguments and names the native layer, within 12 KB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Script};

const MAIN_ROLE: &str = "You are Synapse, a general-purpose agent";

fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

fn is_main(r: &RecordedRequest) -> bool {
    r.system_text().is_some_and(|s| s.starts_with(MAIN_ROLE))
}

fn is_skill_subagent(r: &RecordedRequest) -> bool {
    r.system_text()
        .is_some_and(|s| s.starts_with("You are the Skill Sub-Agent"))
}

/// An RFC 3339 timestamp such as the session file's `"ts"` (`2026-12-02T01:05:03…`).
fn has_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(13).any(|w| {
        w[..4].iter().all(u8::is_ascii_digit)
            && w[4] == b'-'
            && w[5..7].iter().all(u8::is_ascii_digit)
            && w[7] == b'-'
            && w[8..10].iter().all(u8::is_ascii_digit)
            && w[10] == b'T'
            && w[11..13].iter().all(u8::is_ascii_digit)
    })
}

/// A search through the main agent with the model behind `api`: its requests, and whether the
/// searcher's command ran.
fn search_through(api: &str) -> (Vec<RecordedRequest>, bool) {
    let env = TestEnv::new();
    env.write_skill(
        "csv-charts",
        "Turns a csv file into a chart. Use when the user wants a chart of a csv file.",
        "# CSV charts\n",
    );
    let marker = env.workdir().join("the-searcher-ran-this");
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("skill search \"chart of a csv file\"")
            // The searcher answers with a command instead of its JSON.
            .tool_call(format!("touch {}", marker.display()))
            .text("done"),
    );
    let mut cmd = env.synapse();
    if api == "openai" {
        cmd.env("SYNAPSE_PROVIDER", "openai")
            .env("OPENAI_BASE_URL", fake.openai_base_url())
            .env("SYNAPSE_MODEL", "local-model");
    } else {
        cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "sk-test");
    }
    let out = synapse_tests::run(cmd.args(["run", "--yes", "make a chart"]));
    assert!(out.success(), "{api}: {out:?}");
    (fake.requests(), marker.exists())
}

#[test]
fn the_skill_search_subagent_is_offered_no_tool_and_its_calls_do_not_run() {
    for api in ["anthropic", "openai"] {
        let (requests, ran) = search_through(api);
        let search = requests.iter().find(|r| is_skill_subagent(r)).unwrap();
        assert!(search.tool_names().is_empty(), "{api}: {}", search.body);
        assert!(search.body.get("tools").is_none(), "{api}: {}", search.body);
        // The main agent still offers its one tool, and the searcher's call never ran.
        assert_eq!(requests[0].tool_names(), ["Bash"], "{api}");
        assert!(!ran, "{api}: the searcher's command ran");
        let result = requests.last().unwrap().last_tool_result().unwrap();
        assert!(result.contains("csv-charts"), "{api}: {result}");
    }
}

#[test]
fn the_enhancer_of_a_turn_with_nothing_to_learn_makes_one_small_request_without_ids() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"skillEnhance": {"autoEnhance": true}}"#,
    )
    .unwrap();
    std::fs::write(env.workdir().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("wc -l notes.txt")
            .text("notes.txt has 2 lines.")
            .text(
                "Skill enhancement analysis done:\n- Conclusion: no change needed\n- Reason: \
                 a one-command task",
            ),
    );
    let out = env.cli_with_model(
        &fake,
        &[
            "run",
            "--output-format",
            "json",
            "How many lines has notes.txt?",
        ],
    );
    assert!(out.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let session = json["session_id"].as_str().unwrap().to_string();
    let requests = fake.requests();
    let enhancer: Vec<&RecordedRequest> =
        requests.iter().filter(|r| is_skill_subagent(r)).collect();
    assert_eq!(enhancer.len(), 1, "{} requests", requests.len());
    let request = enhancer[0];
    assert!(
        request.body_len <= 10 * 1024,
        "the enhancer's request is {} bytes",
        request.body_len
    );
    let body = request.body.to_string();
    assert!(
        !body.contains(&session),
        "the session id {session} is in {body}"
    );
    assert!(!has_timestamp(&body), "a timestamp is in {body}");
    assert!(
        !body.contains("toolu_") && !body.contains("tool_use_id"),
        "{body}"
    );
    // What happened, in reading order: the user's words, the command and its output, the answer.
    let task = request.last_user_text().unwrap();
    let at = |needle: &str| {
        task.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing in {task}"))
    };
    assert!(at("How many lines has notes.txt?") < at("$ wc -l notes.txt"));
    assert!(at("$ wc -l notes.txt") < at("2 notes.txt"));
    assert!(at("2 notes.txt") < at("notes.txt has 2 lines."));
    // Its prompt documents what it writes skills with, not the commands of the main agent.
    let system = request.system_text().unwrap();
    for used in [
        "`write <path>",
        "`edit <path>",
        "`read <path>",
        "### skill-creator",
    ] {
        assert!(system.contains(used), "{used} missing in {system}");
    }
    for unused in ["todo", "web_search", "`job", "task:"] {
        assert!(!system.contains(unused), "{unused} in {system}");
    }
}

#[test]
fn task_explore_gets_a_lean_prompt_without_the_commands_it_is_refused() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("task:explore --prompt \"Which files are here?\" --description files")
            .text("Nothing here.")
            .text("done"),
    );
    let out = env.cli_with_model(&fake, &["run", "--yes", "explore"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let explore = requests
        .iter()
        .find(|r| {
            r.system_text()
                .is_some_and(|s| s.starts_with("You are a Synapse sub-agent"))
        })
        .unwrap();
    let system = explore.system_text().unwrap();
    assert!(
        system.len() <= 5 * 1024,
        "{} bytes:\n{system}",
        system.len()
    );
    assert!(system.contains("read-only"), "{system}");
    for kept in ["### read", "### glob", "### search"] {
        assert!(system.contains(kept), "{kept} missing in {system}");
    }
    for refused in [
        "### write",
        "### edit",
        "### bash",
        "`job`",
        "### job",
        "`todo`",
        "### todo",
        "### task:",
        "- `task:",
    ] {
        assert!(!system.contains(refused), "{refused} in {system}");
    }
}

#[test]
fn the_main_prompt_documents_every_agent_command_with_its_arguments_within_12_kb() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(Script::new().text("hello"));
    let out = env.cli_with_model(&fake, &["run", "hi"]);
    assert!(out.success(), "{out:?}");
    let request = &fake.requests()[0];
    assert!(is_main(request));
    let system = request.system_text().unwrap();
    assert!(system.len() <= 12 * 1024, "{} bytes", system.len());
    assert!(
        request.body_len <= 12 * 1024,
        "the first request is {} bytes",
        request.body_len
    );
    for section in [
        "### todo",
        "### web_fetch",
        "### web_search",
        "### task:skill:search",
        "### task:skill:enhance",
        "### task:general",
        "### task:explore",
        "### skill",
        "### tools",
    ] {
        assert!(system.contains(section), "{section} missing in {system}");
    }
    for argument in [
        "done N",
        "--max-chars",
        "--max N",
        "--prompt",
        "--description",
    ] {
        assert!(system.contains(argument), "{argument} missing in {system}");
    }
    // The native layer, named in a sentence.
    for native in [
        "`ls`", "`cd`", "`pwd`", "`grep`", "`find`", "`git`", "`curl`", "`wget`",
    ] {
        assert!(system.contains(native), "{native} missing in {system}");
    }
}
