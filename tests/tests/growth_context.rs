//! Issue 8: one skill sub-agent per chat session, with a memory. Two `task:skill:search` calls
//! in one `synapse run` session reach the model as one conversation (the second request carries
//! the first exchange), while another session's sub-agent starts from nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Script};

fn is_skill_subagent(r: &RecordedRequest) -> bool {
    r.system_text()
        .is_some_and(|s| s.starts_with("You are the Skill Sub-Agent"))
}

fn conversation(r: &RecordedRequest) -> String {
    serde_json::to_string(r.messages()).unwrap()
}

const INVOICES: &str =
    "{\"matched_skills\":[{\"name\":\"parsing-invoices\",\"description\":\"x\"}]}";

#[test]
fn the_skill_subagent_remembers_within_a_session_and_not_across_sessions() {
    let env = TestEnv::new();
    env.write_skill(
        "parsing-invoices",
        "Extracts totals from PDF invoices. Use when asked about invoices.",
        "# Invoices\n",
    );
    env.write_skill(
        "analyzing-logs",
        "Finds errors in log files. Use when asked to analyze logs.",
        "# Logs\n",
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new()
                // Session A: two searches.
                .tool_call(
                    "task:skill:search --prompt 'FIRST-QUERY sum my invoices' --description a",
                )
                .text(INVOICES)
                .tool_call("task:skill:search --prompt 'SECOND-QUERY and the logs' --description b")
                .text("{\"matched_skills\":[{\"name\":\"analyzing-logs\",\"description\":\"y\"}]}")
                .text("Use parsing-invoices, then analyzing-logs.")
                // Session B: one search.
                .tool_call("task:skill:search --prompt 'THIRD-QUERY logs again' --description c")
                .text("{\"matched_skills\":[{\"name\":\"analyzing-logs\",\"description\":\"y\"}]}")
                .text("Use analyzing-logs."),
        ))
        .unwrap();

    let out = env.cli_with_model(&fake, &["run", "invoices and logs"]);
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("Use parsing-invoices"), "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 5);
    let (first, second) = (&requests[1], &requests[3]);
    assert!(is_skill_subagent(first) && is_skill_subagent(second));
    assert_eq!(first.messages().len(), 1, "{}", conversation(first));
    // The second search is the same sub-agent: it sees its first question and answer.
    let seen = conversation(second);
    assert!(seen.contains("FIRST-QUERY"), "{seen}");
    let remembered_answer = second
        .messages()
        .iter()
        .any(|m| m["role"] == "assistant" && m["content"].to_string().contains("parsing-invoices"));
    assert!(remembered_answer, "{seen}");
    assert!(second.last_user_text().unwrap().contains("SECOND-QUERY"));
    assert_eq!(second.messages().len(), 3, "{seen}");
    // Both answers reached the main agent.
    assert!(
        requests[2]
            .last_tool_result()
            .unwrap()
            .contains("<skill name=\"parsing-invoices\">")
    );
    assert!(
        requests[4]
            .last_tool_result()
            .unwrap()
            .contains("<skill name=\"analyzing-logs\">")
    );

    // Another session has its own sub-agent, which remembers nothing of the first.
    let out = env.cli_with_model(&fake, &["run", "logs"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let other = &requests[6];
    assert!(is_skill_subagent(other));
    let seen = conversation(other);
    assert_eq!(other.messages().len(), 1, "{seen}");
    assert!(
        !seen.contains("FIRST-QUERY") && !seen.contains("SECOND-QUERY"),
        "{seen}"
    );
    assert!(seen.contains("THIRD-QUERY"), "{seen}");
}
