//! A user message of content blocks (the session contract's [`Input`]) as the text of the turn
//! it starts: text as typed; a file reference as a line naming the file for the agent to read;
//! an embedded resource (an editor's unsaved buffer) inline, marked with where it comes from.
//! Images in a message are refused with a sentence saying so: the model requests carry images
//! only in tool results today (`read` of an image file).

use synapse_session::{Input, InputBlock};

/// A message this daemon cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error(
        "this message has an image ({mime_type}); Synapse takes images from files: save it and \
         ask the agent to `read` it"
    )]
    Image { mime_type: String },
}

/// The turn's text for `input`.
pub fn turn_text(input: &Input) -> Result<String, InputError> {
    let mut parts = Vec::with_capacity(input.blocks.len());
    for block in &input.blocks {
        parts.push(match block {
            InputBlock::Text(text) => text.clone(),
            InputBlock::ResourceLink { uri, name } => {
                let at = uri.strip_prefix("file://").unwrap_or(uri);
                if name.is_empty() || at.ends_with(name.as_str()) {
                    format!("[referenced: {at}]")
                } else {
                    format!("[referenced: {at} ({name})]")
                }
            }
            InputBlock::Resource {
                uri,
                mime_type,
                text,
            } => {
                let at = uri.strip_prefix("file://").unwrap_or(uri);
                let kind = if mime_type.is_empty() {
                    String::new()
                } else {
                    format!(" type=\"{mime_type}\"")
                };
                format!(
                    "<attached source=\"{at}\"{kind}>\n{}\n</attached>",
                    text.trim_end_matches('\n')
                )
            }
            InputBlock::Image { mime_type, .. } => {
                return Err(InputError::Image {
                    mime_type: mime_type.clone(),
                });
            }
        });
    }
    Ok(parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_the_turns_text() {
        let input = Input {
            blocks: vec![
                InputBlock::Text("why does this fail?".into()),
                InputBlock::ResourceLink {
                    uri: "file:///p/src/a.rs".into(),
                    name: "a.rs".into(),
                },
                InputBlock::Resource {
                    uri: "file:///p/src/b.rs".into(),
                    mime_type: "text/x-rust".into(),
                    text: "fn b() {}\n".into(),
                },
            ],
        };
        assert_eq!(
            turn_text(&input).unwrap(),
            "why does this fail?\n\n[referenced: /p/src/a.rs]\n\n\
             <attached source=\"/p/src/b.rs\" type=\"text/x-rust\">\nfn b() {}\n</attached>"
        );
        assert_eq!(turn_text(&Input::text("hi")).unwrap(), "hi");
    }

    #[test]
    fn an_image_is_refused_with_what_to_do() {
        let input = Input {
            blocks: vec![InputBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBOR".into(),
            }],
        };
        let err = turn_text(&input).unwrap_err().to_string();
        assert!(
            err.contains("image/png") && err.contains("`read` it"),
            "{err}"
        );
    }
}
