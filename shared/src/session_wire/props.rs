//! Round trips through the wire: every session event and every front end's message comes back
//! from its proto form exactly as it went in.

use proptest::prelude::*;
use synapse_session::*;

use super::{event_from_wire, event_to_wire, message_from_wire, message_to_wire};

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn usage() -> impl Strategy<Value = Usage> {
    (any::<[u64; 6]>(), text()).prop_map(|(n, context_source)| Usage {
        input_tokens: n[0],
        output_tokens: n[1],
        cache_read_tokens: n[2],
        cache_creation_tokens: n[3],
        context_tokens: n[4],
        context_window: n[5],
        context_source,
    })
}

fn question_closed() -> impl Strategy<Value = QuestionClosed> {
    let why = prop_oneof![
        Just(ClosedWhy::Answered),
        Just(ClosedWhy::TimedOut),
        Just(ClosedWhy::Withdrawn),
    ];
    (text(), text(), why).prop_map(|(id, answer, why)| QuestionClosed { id, answer, why })
}

fn tool_kind() -> impl Strategy<Value = ToolKind> {
    prop_oneof![
        Just(ToolKind::Read),
        Just(ToolKind::Edit),
        Just(ToolKind::Delete),
        Just(ToolKind::Move),
        Just(ToolKind::Search),
        Just(ToolKind::Execute),
        Just(ToolKind::Think),
        Just(ToolKind::Fetch),
        Just(ToolKind::Other),
    ]
}

fn decision() -> impl Strategy<Value = Decision> {
    prop_oneof![
        Just(Decision::Yes),
        Just(Decision::Session),
        Just(Decision::Always),
        Just(Decision::No)
    ]
}

fn form_action() -> impl Strategy<Value = FormAction> {
    prop_oneof![
        Just(FormAction::Accept),
        Just(FormAction::Decline),
        Just(FormAction::Cancel)
    ]
}

fn stop_reason() -> impl Strategy<Value = StopReason> {
    prop_oneof![
        Just(StopReason::Completed),
        Just(StopReason::Cancelled),
        Just(StopReason::Error),
        Just(StopReason::Truncated),
        Just(StopReason::MaxIterations),
        Just(StopReason::TooManyFailures),
        Just(StopReason::MaxTurns),
        // A newer daemon's reason: never one of the words above.
        "x_[a-z]{1,8}".prop_map(StopReason::Other),
    ]
}

fn plan_entry() -> impl Strategy<Value = PlanEntry> {
    (
        text(),
        prop_oneof![
            Just(PlanStatus::Pending),
            Just(PlanStatus::InProgress),
            Just(PlanStatus::Completed)
        ],
        prop_oneof![
            Just(PlanPriority::High),
            Just(PlanPriority::Medium),
            Just(PlanPriority::Low)
        ],
    )
        .prop_map(|(content, status, priority)| PlanEntry {
            content,
            status,
            priority,
        })
}

fn question() -> impl Strategy<Value = Question> {
    let approval = (
        [text(), text(), text(), text(), text(), text()],
        prop::collection::vec(
            (decision(), text()).prop_map(|(decision, label)| AnswerOption { decision, label }),
            0..4,
        ),
    )
        .prop_map(
            |([id, call_id, title, detail, pattern, rules_file], options)| {
                Question::Approval(ApprovalQuestion {
                    id,
                    call_id,
                    title,
                    detail,
                    options,
                    pattern,
                    rules_file,
                })
            },
        );
    let form = [text(), text(), text(), text(), text()].prop_map(
        |[id, server, message, schema_json, url]| {
            Question::Form(FormQuestion {
                id,
                server,
                message,
                schema_json,
                url,
            })
        },
    );
    prop_oneof![approval, form]
}

fn opened() -> impl Strategy<Value = Opened> {
    (
        [text(), text(), text()],
        any::<(bool, u32, u32, bool, u32)>(),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(
            (text(), text(), any::<u64>(), any::<bool>()).prop_map(|(path, shown, bytes, cut)| {
                InstructionFile {
                    path,
                    shown,
                    bytes,
                    cut,
                }
            }),
            0..3,
        ),
    )
        .prop_map(
            |(
                [session_id, model, cwd],
                (resumed, messages, turns, turn_running, broken),
                warnings,
                instructions,
            )| {
                Opened {
                    session_id,
                    model,
                    cwd,
                    resumed,
                    messages,
                    warnings,
                    turns,
                    turn_running,
                    broken_skills: broken,
                    instructions,
                }
            },
        )
}

fn tool_done() -> impl Strategy<Value = ToolDone> {
    (
        [text(), text(), text(), text()],
        any::<(i32, u32)>(),
        prop::collection::vec(
            (text(), text(), any::<(u32, u32)>()).prop_map(|(path, hunks, (added, removed))| {
                FileChange {
                    path,
                    hunks,
                    added,
                    removed,
                }
            }),
            0..3,
        ),
    )
        .prop_map(
            |([id, command, output_preview, output], (exit_code, output_lines), changes)| {
                ToolDone {
                    id,
                    command,
                    exit_code,
                    output_preview,
                    output_lines,
                    output,
                    changes,
                }
            },
        )
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        opened().prop_map(Event::Opened),
        text().prop_map(Event::Text),
        (
            text(),
            text(),
            tool_kind(),
            text(),
            prop::collection::vec(text(), 0..3)
        )
            .prop_map(
                |(id, command, kind, title, locations)| Event::ToolCall(ToolCall {
                    id,
                    command,
                    kind,
                    title,
                    locations
                })
            ),
        (text(), text(), any::<u64>()).prop_map(|(id, tail, total_bytes)| Event::ToolProgress(
            ToolProgress {
                id,
                tail,
                total_bytes
            }
        )),
        tool_done().prop_map(Event::ToolDone),
        prop::collection::vec(plan_entry(), 0..4).prop_map(Event::Plan),
        usage().prop_map(Event::Usage),
        (any::<(u32, u32, u64)>(), text()).prop_map(
            |((attempt, max_attempts, delay_ms), reason)| {
                Event::Retrying(Retrying {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                })
            }
        ),
        text().prop_map(Event::Error),
        text().prop_map(Event::Notice),
        question().prop_map(Event::Question),
        question_closed().prop_map(Event::QuestionClosed),
        text().prop_map(Event::EnhanceReport),
        text().prop_map(Event::ModelChanged),
        (text(), text()).prop_map(|(mode, summary)| Event::ModeChanged { mode, summary }),
        ([text(), text(), text(), text()], usage(), any::<u64>()).prop_map(
            |([message_id, model, content_json, stop_reason], usage, duration_ms)| {
                Event::Assistant(AssistantMessage {
                    message_id,
                    model,
                    content_json,
                    stop_reason,
                    usage,
                    duration_ms,
                })
            }
        ),
        text().prop_map(Event::ToolResults),
        (
            stop_reason(),
            [text(), text(), text()],
            any::<(u32, u32, u32)>(),
            usage()
        )
            .prop_map(
                |(reason, [message, final_text, error_kind], (turn, http_status, jobs), usage)| {
                    Event::TurnEnded(TurnEnded {
                        reason,
                        message,
                        final_text,
                        turn,
                        usage,
                        error_kind,
                        http_status,
                        background_jobs: jobs,
                    })
                }
            ),
        (
            text(),
            prop_oneof![Just(FileOp::Read), Just(FileOp::Write)],
            text(),
            text()
        )
            .prop_map(|(id, op, path, content)| Event::FileRequest(FileRequest {
                id,
                op,
                path,
                content
            })),
    ]
}

fn input_block() -> impl Strategy<Value = InputBlock> {
    prop_oneof![
        text().prop_map(InputBlock::Text),
        (text(), text()).prop_map(|(uri, name)| InputBlock::ResourceLink { uri, name }),
        (text(), text(), text()).prop_map(|(uri, mime_type, text)| InputBlock::Resource {
            uri,
            mime_type,
            text
        }),
        (text(), text()).prop_map(|(mime_type, data)| InputBlock::Image { mime_type, data }),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop::sample::select(Mode::ALL.to_vec())
}

fn message() -> impl Strategy<Value = FrontEndMessage> {
    prop_oneof![
        prop::collection::vec(input_block(), 0..4)
            .prop_map(|blocks| FrontEndMessage::Input(Input { blocks })),
        Just(FrontEndMessage::Control(Control::Cancel)),
        Just(FrontEndMessage::Control(Control::Compact)),
        proptest::option::of("[a-z0-9-]{1,12}")
            .prop_map(|m| FrontEndMessage::Control(Control::SetModel(m))),
        proptest::option::of(mode()).prop_map(|m| FrontEndMessage::Control(Control::SetMode(m))),
        (text(), decision())
            .prop_map(|(id, decision)| FrontEndMessage::Answer(Answer::Approval { id, decision })),
        (text(), form_action(), text()).prop_map(|(id, action, content_json)| {
            FrontEndMessage::Answer(Answer::Form {
                id,
                action,
                content_json,
            })
        }),
        (
            text(),
            prop_oneof![text().prop_map(Ok), text().prop_map(Err)]
        )
            .prop_map(|(id, result)| FrontEndMessage::FileReply(FileReply { id, result })),
    ]
}

proptest! {
    #[test]
    fn every_event_comes_back_from_the_wire(e in event()) {
        prop_assert_eq!(event_from_wire(event_to_wire(e.clone())), Ok(e));
    }

    #[test]
    fn every_front_end_message_comes_back_from_the_wire(m in message()) {
        prop_assert_eq!(message_from_wire(message_to_wire(m.clone())), Ok(m));
    }

    #[test]
    fn a_message_carries_its_text_for_a_text_only_daemon(blocks in prop::collection::vec(input_block(), 0..4)) {
        let input = Input { blocks };
        let wire = super::inbound::input_to_wire(input.clone());
        prop_assert_eq!(wire.text, input.plain_text());
    }
}

#[test]
fn an_older_daemons_events_still_read() {
    use crate::proto;
    // No kind on a tool call, no options on an approval: read as "other" and the default answers.
    let started = proto::ChatEvent {
        kind: Some(proto::chat_event::Kind::ToolStarted(proto::ToolStarted {
            call_id: "c1".into(),
            command: "ls".into(),
            ..Default::default()
        })),
    };
    let Ok(Event::ToolCall(call)) = event_from_wire(started) else {
        panic!("a ToolStarted reads as a tool call");
    };
    assert_eq!(call.kind, ToolKind::Other);
    let asked = proto::ChatEvent {
        kind: Some(proto::chat_event::Kind::Approval(proto::ApprovalRequest {
            request_id: "q1".into(),
            ..Default::default()
        })),
    };
    let Ok(Event::Question(Question::Approval(q))) = event_from_wire(asked) else {
        panic!("an ApprovalRequest reads as a question");
    };
    let offered: Vec<Decision> = q.offered().iter().map(|o| o.decision).collect();
    assert_eq!(
        offered,
        [
            Decision::Yes,
            Decision::Session,
            Decision::Always,
            Decision::No
        ]
    );
}

#[test]
fn a_word_this_version_does_not_know_is_named() {
    use crate::proto;
    let answer = proto::ClientMessage {
        kind: Some(proto::client_message::Kind::Approval(
            proto::ApprovalAnswer {
                request_id: "q1".into(),
                decision: "maybe".into(),
            },
        )),
    };
    let err = message_from_wire(answer)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "unknown approval decision \"maybe\" (expected one of: yes, session, always, no)"
    );
    assert_eq!(
        message_from_wire(proto::ClientMessage { kind: None })
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "a ClientMessage without a kind (sent by a newer or a broken peer)"
    );
}

#[test]
fn an_unknown_reason_a_question_closed_is_named() {
    let closed = crate::proto::ChatEvent {
        kind: Some(crate::proto::chat_event::Kind::QuestionClosed(
            crate::proto::QuestionClosed {
                request_id: "approval-1".into(),
                answer: "yes".into(),
                why: "vanished".into(),
            },
        )),
    };
    let e = event_from_wire(closed).unwrap_err().to_string();
    assert!(e.contains("\"vanished\"") && e.contains("timed_out"), "{e}");
}

#[test]
fn a_file_request_of_an_unknown_operation_is_named() {
    let request = crate::proto::ChatEvent {
        kind: Some(crate::proto::chat_event::Kind::FileRequest(
            crate::proto::FileRequest {
                request_id: "file-1".into(),
                op: "delete".into(),
                path: "/p/a".into(),
                content: String::new(),
            },
        )),
    };
    assert_eq!(
        event_from_wire(request).unwrap_err().to_string(),
        "unknown file operation \"delete\" (expected one of: read, write)"
    );
}
