//! [`FrontEndMessage`] ⇄ [`proto::ClientMessage`]: a user message as content blocks (with its
//! text alongside, for a daemon that reads only text), controls and answers.

use synapse_session::{
    Answer, Control, Decision, FileReply, FormAction, FrontEndMessage, Input, InputBlock, Mode,
};

use super::WireError;
use crate::proto::{self, client_message::Kind as Msg, input_block::Kind as Block};

pub(super) fn to_wire(message: FrontEndMessage) -> proto::ClientMessage {
    let kind = match message {
        FrontEndMessage::Input(input) => Msg::Input(input_to_wire(input)),
        FrontEndMessage::Control(Control::Cancel) => Msg::Cancel(proto::CancelTurn {}),
        FrontEndMessage::Control(Control::Compact) => Msg::Compact(proto::CompactContext {}),
        FrontEndMessage::Control(Control::SetModel(model)) => Msg::SetModel(proto::SetModel {
            model: model.unwrap_or_default(),
        }),
        FrontEndMessage::Control(Control::SetMode(mode)) => {
            Msg::SetPermissionMode(proto::SetPermissionMode {
                mode: mode.map(|m| m.as_str().to_string()).unwrap_or_default(),
            })
        }
        FrontEndMessage::Answer(Answer::Approval { id, decision }) => {
            Msg::Approval(proto::ApprovalAnswer {
                request_id: id,
                decision: decision.as_str().to_string(),
            })
        }
        FrontEndMessage::Answer(Answer::Form {
            id,
            action,
            content_json,
        }) => Msg::Elicitation(proto::ElicitationAnswer {
            request_id: id,
            action: action.as_str().to_string(),
            content_json,
        }),
        FrontEndMessage::FileReply(FileReply { id, result }) => {
            let (content, error, failed) = match result {
                Ok(content) => (content, String::new(), false),
                Err(error) => (String::new(), error, true),
            };
            Msg::FileReply(proto::FileReply {
                request_id: id,
                content,
                error,
                failed,
            })
        }
    };
    proto::ClientMessage { kind: Some(kind) }
}

pub(super) fn from_wire(message: proto::ClientMessage) -> Result<FrontEndMessage, WireError> {
    Ok(
        match message.kind.ok_or(WireError::NoKind("ClientMessage"))? {
            Msg::Open(_) => return Err(WireError::Open),
            Msg::Input(input) => FrontEndMessage::Input(input_from_wire(input)?),
            Msg::Cancel(_) => FrontEndMessage::Control(Control::Cancel),
            Msg::Compact(_) => FrontEndMessage::Control(Control::Compact),
            Msg::SetModel(m) => {
                FrontEndMessage::Control(Control::SetModel(Some(m.model).filter(|m| !m.is_empty())))
            }
            Msg::SetPermissionMode(m) => {
                FrontEndMessage::Control(Control::SetMode(if m.mode.is_empty() {
                    None
                } else {
                    Some(Mode::parse(&m.mode)?)
                }))
            }
            Msg::Approval(a) => FrontEndMessage::Answer(Answer::Approval {
                id: a.request_id,
                decision: Decision::parse(&a.decision)?,
            }),
            Msg::Elicitation(e) => FrontEndMessage::Answer(Answer::Form {
                id: e.request_id,
                action: FormAction::parse(&e.action)?,
                content_json: e.content_json,
            }),
            Msg::FileReply(r) => FrontEndMessage::FileReply(FileReply {
                id: r.request_id,
                result: if r.failed {
                    Err(r.error)
                } else {
                    Ok(r.content)
                },
            }),
        },
    )
}

/// A user message for the wire: its blocks, and its text for a daemon that reads only text.
pub fn input_to_wire(input: Input) -> proto::UserInput {
    let text = input.plain_text();
    // A message of one non-empty text block travels as text alone, as older clients send it.
    let text_alone = matches!(input.blocks.as_slice(), [InputBlock::Text(t)] if !t.is_empty());
    let blocks = if text_alone {
        Vec::new()
    } else {
        input.blocks.into_iter().map(block_to_wire).collect()
    };
    proto::UserInput { text, blocks }
}

/// A user message from the wire: its blocks, else its text as one block (an older client).
pub fn input_from_wire(input: proto::UserInput) -> Result<Input, WireError> {
    if input.blocks.is_empty() {
        return Ok(if input.text.is_empty() {
            Input::default()
        } else {
            Input::text(input.text)
        });
    }
    let blocks = input
        .blocks
        .into_iter()
        .map(|b| match b.kind.ok_or(WireError::NoKind("InputBlock"))? {
            Block::Text(t) => Ok(InputBlock::Text(t)),
            Block::Link(l) => Ok(InputBlock::ResourceLink {
                uri: l.uri,
                name: l.name,
            }),
            Block::Resource(r) => Ok(InputBlock::Resource {
                uri: r.uri,
                mime_type: r.mime_type,
                text: r.text,
            }),
            Block::Image(i) => Ok(InputBlock::Image {
                mime_type: i.mime_type,
                data: i.data,
            }),
        })
        .collect::<Result<_, WireError>>()?;
    Ok(Input { blocks })
}

fn block_to_wire(block: InputBlock) -> proto::InputBlock {
    let kind = match block {
        InputBlock::Text(t) => Block::Text(t),
        InputBlock::ResourceLink { uri, name } => Block::Link(proto::ResourceLink { uri, name }),
        InputBlock::Resource {
            uri,
            mime_type,
            text,
        } => Block::Resource(proto::EmbeddedResource {
            uri,
            mime_type,
            text,
        }),
        InputBlock::Image { mime_type, data } => {
            Block::Image(proto::ImageBlock { mime_type, data })
        }
    };
    proto::InputBlock { kind: Some(kind) }
}
