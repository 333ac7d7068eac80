use super::*;
use serde_json::{Value, json};
use synapse_session::{Decision, FileChange, Usage};

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialises")
}

fn question() -> ApprovalQuestion {
    ApprovalQuestion {
        id: "q1".into(),
        call_id: "toolu_1".into(),
        title: "Run `rm -rf build`?".into(),
        detail: "it deletes files".into(),
        options: vec![
            AnswerOption {
                decision: Decision::Yes,
                label: "Yes".into(),
            },
            AnswerOption {
                decision: Decision::Always,
                label: "Yes, and don't ask again for rm in this project".into(),
            },
            AnswerOption {
                decision: Decision::No,
                label: "No".into(),
            },
        ],
        pattern: "rm:*".into(),
        rules_file: "/p/.synapse/settings.local.json".into(),
    }
}

fn chose(id: &str) -> acp::RequestPermissionOutcome {
    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id.to_string()))
}

#[test]
fn permission_options_are_the_gates_answers_and_map_back_exactly() {
    let q = question();
    let options = to_json(&permission_options(&q));
    assert_eq!(
        options,
        json!([
            {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
            {"optionId": "always", "name": "Yes, and don't ask again for rm in this project", "kind": "allow_always"},
            {"optionId": "no", "name": "No", "kind": "reject_once"},
        ])
    );
    assert_eq!(decision(&q, &chose("yes")), Decision::Yes);
    assert_eq!(decision(&q, &chose("always")), Decision::Always);
    assert_eq!(decision(&q, &chose("no")), Decision::No);
    // Not offered for this question, unknown, or dismissed: refused.
    assert_eq!(decision(&q, &chose("session")), Decision::No);
    assert_eq!(decision(&q, &chose("allow")), Decision::No);
    assert_eq!(
        decision(&q, &acp::RequestPermissionOutcome::Cancelled),
        Decision::No
    );
    let subject = to_json(&permission_subject(&q));
    assert_eq!(subject["toolCallId"], "toolu_1");
    assert_eq!(subject["title"], "Run `rm -rf build`?");
}

#[test]
fn a_tool_call_carries_kind_title_and_locations() {
    let call = ToolCall {
        id: "toolu_2".into(),
        command: "read src/main.rs".into(),
        kind: ToolKind::Read,
        title: "Read src/main.rs".into(),
        locations: vec!["/p/src/main.rs".into()],
    };
    let got = to_json(&updates(&Event::ToolCall(call))[0]);
    assert_eq!(got["sessionUpdate"], "tool_call");
    assert_eq!(got["toolCallId"], "toolu_2");
    assert_eq!(got["kind"], "read");
    assert_eq!(got["title"], "Read src/main.rs");
    assert_eq!(got["locations"], json!([{"path": "/p/src/main.rs"}]));
    assert_eq!(got["rawInput"]["command"], "read src/main.rs");
}

#[test]
fn an_edit_ends_with_a_diff_of_the_changed_region() {
    let done = ToolDone {
        id: "toolu_3".into(),
        command: "edit a.txt hello bye".into(),
        exit_code: 0,
        output: "edited a.txt".into(),
        changes: vec![FileChange {
            path: "/p/a.txt".into(),
            hunks: "@@ -1,2 +1,2 @@\n-hello\n+bye\n world\n".into(),
            added: 1,
            removed: 1,
        }],
        ..Default::default()
    };
    let got = to_json(&updates(&Event::ToolDone(done))[0]);
    assert_eq!(got["sessionUpdate"], "tool_call_update");
    assert_eq!(got["status"], "completed");
    assert_eq!(
        got["content"][0],
        json!({"type": "diff", "path": "/p/a.txt", "oldText": "hello\nworld\n", "newText": "bye\nworld\n"})
    );
    assert_eq!(got["content"][1]["content"]["text"], "edited a.txt");
}

#[test]
fn a_created_file_has_no_old_text_and_a_failed_call_is_failed() {
    let created = diff(&FileChange {
        path: "/p/new.txt".into(),
        hunks: "@@ -0,0 +1,2 @@\n+one\n+two\n".into(),
        added: 2,
        removed: 0,
    });
    let json = to_json(&created);
    assert_eq!(json["newText"], "one\ntwo\n");
    assert!(json.get("oldText").is_none_or(Value::is_null), "{json}");
    let failed = tool_done(&ToolDone {
        id: "t".into(),
        exit_code: 2,
        ..Default::default()
    });
    assert_eq!(to_json(&failed)["status"], "failed");
}

#[test]
fn stop_reasons_map_to_acps() {
    let cases = [
        (StopReason::Completed, Some(acp::StopReason::EndTurn)),
        (StopReason::Cancelled, Some(acp::StopReason::Cancelled)),
        (StopReason::Truncated, Some(acp::StopReason::MaxTokens)),
        (
            StopReason::MaxIterations,
            Some(acp::StopReason::MaxTurnRequests),
        ),
        (StopReason::MaxTurns, Some(acp::StopReason::MaxTurnRequests)),
        (StopReason::TooManyFailures, Some(acp::StopReason::EndTurn)),
        (StopReason::Error, None),
    ];
    for (reason, want) in cases {
        assert_eq!(stop_reason(&reason), want, "{reason:?}");
    }
}

#[test]
fn plan_text_usage_and_mode_become_their_updates() {
    let plan = to_json(
        &updates(&Event::Plan(vec![PlanEntry {
            content: "write tests".into(),
            status: PlanStatus::InProgress,
            priority: PlanPriority::High,
        }]))[0],
    );
    assert_eq!(
        plan,
        json!({"sessionUpdate": "plan", "entries": [{"content": "write tests", "priority": "high", "status": "in_progress"}]})
    );
    let text = to_json(&updates(&Event::Text("hi".into()))[0]);
    assert_eq!(text["sessionUpdate"], "agent_message_chunk");
    assert_eq!(text["content"], json!({"type": "text", "text": "hi"}));
    let usage = to_json(
        &updates(&Event::Usage(Usage {
            context_tokens: 1200,
            context_window: 200_000,
            ..Default::default()
        }))[0],
    );
    assert_eq!(usage["used"], 1200);
    assert_eq!(usage["size"], 200_000);
    let mode = to_json(
        &updates(&Event::ModeChanged {
            mode: "read-only".into(),
            summary: String::new(),
        })[0],
    );
    assert_eq!(mode["currentModeId"], "read-only");
    let modes = to_json(&modes(Mode::Auto));
    assert_eq!(modes["currentModeId"], "auto");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["ask", "auto", "read-only", "yolo"]);
}

#[test]
fn editor_mcp_servers_take_claude_codes_shape() {
    let stdio: acp::McpServer = serde_json::from_value(json!({
        "name": "fs", "command": "/usr/bin/node", "args": ["server.js"],
        "env": [{"name": "TOKEN", "value": "t"}]
    }))
    .unwrap();
    let got = mcp_server(&stdio).unwrap();
    assert_eq!(got.name, "fs");
    assert_eq!(
        serde_json::from_str::<Value>(&got.config_json).unwrap(),
        json!({"command": "/usr/bin/node", "args": ["server.js"], "env": {"TOKEN": "t"}})
    );
    let http: acp::McpServer = serde_json::from_value(json!({
        "type": "http", "name": "remote", "url": "https://example.test/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer x"}]
    }))
    .unwrap();
    let got = mcp_server(&http).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&got.config_json).unwrap(),
        json!({"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}})
    );
}

#[test]
fn prompt_blocks_become_input_and_audio_is_refused() {
    let prompt: Vec<acp::ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": "explain"},
        {"type": "resource_link", "uri": "file:///p/a.rs", "name": "a.rs"},
        {"type": "resource", "resource": {"uri": "file:///p/b.rs", "text": "fn b() {}", "mimeType": "text/x-rust"}},
        {"type": "image", "mimeType": "image/png", "data": "iVBOR"}
    ]))
    .unwrap();
    let got = input(&prompt).unwrap();
    assert_eq!(
        got.blocks,
        vec![
            InputBlock::Text("explain".into()),
            InputBlock::ResourceLink {
                uri: "file:///p/a.rs".into(),
                name: "a.rs".into()
            },
            InputBlock::Resource {
                uri: "file:///p/b.rs".into(),
                mime_type: "text/x-rust".into(),
                text: "fn b() {}".into()
            },
            InputBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBOR".into()
            },
        ]
    );
    let audio: Vec<acp::ContentBlock> =
        serde_json::from_value(json!([{"type": "audio", "mimeType": "audio/wav", "data": "UklG"}]))
            .unwrap();
    assert!(input(&audio).unwrap_err().contains("audio"));
}
