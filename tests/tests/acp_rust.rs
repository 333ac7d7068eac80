//! `synapse acp`'s main flow through the Rust crate's own client side (`agent-client-protocol`),
//! in this process: initialize, a new session in `ask` mode, a turn that reads, plans, is refused
//! an edit and then allowed it (the diff arrives), streams text and ends the turn; then a long
//! command cancelled with `session/cancel` (the prompt answers `cancelled`, its process is gone).

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, ByteStreams, Client};
use parking_lot::Mutex;
use serde_json::Value;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, processes_matching, wait_until};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(Default)]
struct Seen {
    updates: Vec<Value>,
    permissions: Vec<Value>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_runs_a_turn_and_cancels_one() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "buy milk\n").unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("todo add 'check the list'")
            .tool_call("edit notes.txt milk bread")
            .tool_call("edit notes.txt milk bread")
            .text("done")
            .text("the item stays for later")
            .tool_call("echo started-418; sleep 418"),
    )
    .await
    .unwrap();
    let mut cmd = tokio::process::Command::from(env.synapse_with_model(&fake));
    let mut child = cmd
        .arg("acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    let answers = Arc::new(Mutex::new(vec!["yes", "no"]));
    let workdir = env.workdir();
    let outcome = Client
        .v1()
        .on_receive_notification(
            async move |n: acp::SessionNotification, _cx| {
                s1.lock()
                    .updates
                    .push(serde_json::to_value(&n.update).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: acp::RequestPermissionRequest, responder, _cx| {
                s2.lock()
                    .permissions
                    .push(serde_json::to_value(&r).unwrap());
                let id = answers.lock().pop().unwrap_or("no");
                responder.respond(acp::RequestPermissionResponse::new(
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(
                        id,
                    )),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let init = cx
                .send_request(acp::InitializeRequest::new(
                    agent_client_protocol::schema::ProtocolVersion::V1,
                ))
                .block_task()
                .await?;
            assert!(init.agent_capabilities.load_session);
            let session = cx
                .send_request(acp::NewSessionRequest::new(workdir.clone()))
                .block_task()
                .await?;
            let id = session.session_id.clone();
            cx.send_request(acp::SetSessionModeRequest::new(id.clone(), "ask"))
                .block_task()
                .await?;
            let first = cx
                .send_request(acp::PromptRequest::new(
                    id.clone(),
                    vec![acp::ContentBlock::Text(acp::TextContent::new("tidy up"))],
                ))
                .block_task()
                .await?;
            cx.send_request(acp::SetSessionModeRequest::new(id.clone(), "yolo"))
                .block_task()
                .await?;
            let long = cx.send_request(acp::PromptRequest::new(
                id.clone(),
                vec![acp::ContentBlock::Text(acp::TextContent::new("run it"))],
            ));
            let started = {
                let seen = s3.clone();
                move || {
                    seen.lock()
                        .updates
                        .iter()
                        .any(|u| u.to_string().contains("started-418"))
                }
            };
            tokio::task::spawn_blocking(move || {
                wait_until(
                    Duration::from_secs(20),
                    "the long command to start",
                    started,
                )
            })
            .await
            .unwrap();
            cx.send_notification(acp::CancelNotification::new(id.clone()))?;
            let second = long.block_task().await?;
            Ok((first.stop_reason, second.stop_reason))
        })
        .await
        .unwrap();
    assert_eq!(
        outcome,
        (acp::StopReason::EndTurn, acp::StopReason::Cancelled)
    );
    wait_until(
        Duration::from_secs(10),
        "the cancelled sleep to die",
        || processes_matching("sleep 418").is_empty(),
    );

    let seen = seen.lock();
    let of = |kind: &str| -> Vec<&Value> {
        seen.updates
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    };
    assert!(of("tool_call").iter().any(|c| c["kind"] == "read"));
    assert_eq!(
        of("plan").last().unwrap()["entries"][0]["content"],
        "check the list"
    );
    assert_eq!(seen.permissions.len(), 2);
    let diff = of("tool_call_update")
        .iter()
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "diff")
        .expect("the allowed edit's diff");
    assert_eq!(diff["newText"], "buy bread\n");
    assert_eq!(diff["oldText"], "buy milk\n");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("notes.txt")).unwrap(),
        "buy bread\n"
    );
    let text: String = of("agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(text.contains("done"), "{text}");
    drop(child);
}

/// The same client offering `fs`, holding an unsaved buffer of notes.txt: `read` shows the
/// buffer, `edit` is written through the editor, and a file the editor refuses to read fails
/// with the editor's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_serves_its_buffers_to_read_and_edit() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "on disk\n").unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("edit notes.txt unsaved edited")
            .tool_call("read locked.txt")
            .text("done"),
    )
    .await
    .unwrap();
    let mut cmd = tokio::process::Command::from(env.synapse_with_model(&fake));
    let mut child = cmd
        .arg("acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let workdir = env.workdir();
    let notes = workdir.join("notes.txt");
    let buffer = Arc::new(Mutex::new("unsaved buffer text\n".to_string()));
    let writes: Arc<Mutex<Vec<(std::path::PathBuf, String)>>> = Arc::default();
    let (b1, b2, w1) = (buffer.clone(), buffer.clone(), writes.clone());
    let (n1, n2) = (notes.clone(), notes.clone());
    let stop = Client
        .v1()
        .on_receive_notification(
            async move |_n: acp::SessionNotification, _cx| Ok(()),
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: acp::ReadTextFileRequest, responder, _cx| {
                if r.path == n1 {
                    responder.respond(acp::ReadTextFileResponse::new(b1.lock().clone()))
                } else {
                    responder.respond_with_error(agent_client_protocol::Error::new(
                        agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND,
                        "the buffer is locked by another view",
                    ))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::WriteTextFileRequest, responder, _cx| {
                if r.path == n2 {
                    *b2.lock() = r.content.clone();
                }
                w1.lock().push((r.path, r.content));
                responder.respond(acp::WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            cx.send_request(
                acp::InitializeRequest::new(agent_client_protocol::schema::ProtocolVersion::V1)
                    .client_capabilities(
                        acp::ClientCapabilities::new().fs(acp::FileSystemCapabilities::new()
                            .read_text_file(true)
                            .write_text_file(true)),
                    ),
            )
            .block_task()
            .await?;
            let session = cx
                .send_request(acp::NewSessionRequest::new(workdir.clone()))
                .block_task()
                .await?;
            let done = cx
                .send_request(acp::PromptRequest::new(
                    session.session_id.clone(),
                    vec![acp::ContentBlock::Text(acp::TextContent::new("look"))],
                ))
                .block_task()
                .await?;
            Ok(done.stop_reason)
        })
        .await
        .unwrap();
    assert_eq!(stop, acp::StopReason::EndTurn);
    let requests = fake.requests();
    let read = &requests[1].tool_results()[0].1;
    assert!(read.contains("unsaved buffer text"), "{read}");
    assert_eq!(
        writes.lock().as_slice(),
        [(notes.clone(), "edited buffer text\n".to_string())]
    );
    assert_eq!(*buffer.lock(), "edited buffer text\n");
    let refused = &requests[3].tool_results()[0].1;
    assert!(
        refused.contains("locked.txt: the editor could not read it")
            && refused.contains("the buffer is locked by another view"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "on disk\n");
    drop(child);
}
