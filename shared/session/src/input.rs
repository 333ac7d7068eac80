//! What the user sends a session: a message made of content blocks — text, a reference to a
//! file or other resource, a resource embedded with its text, an image. A front end that only has
//! text sends one [`InputBlock::Text`].

/// One user message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Input {
    /// The message's blocks, in order.
    pub blocks: Vec<InputBlock>,
}

/// One block of a user message (the Agent Client Protocol's prompt content blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputBlock {
    /// Text the user typed.
    Text(String),
    /// A reference to a file or other resource the agent may read itself (`@src/main.rs`).
    ResourceLink {
        /// `file:///abs/path` or another URI.
        uri: String,
        /// What the user sees it as (a file name).
        name: String,
    },
    /// A resource embedded with its contents (an editor's unsaved buffer, a selection).
    Resource {
        /// Where it comes from.
        uri: String,
        /// Its MIME type (`""`: unknown).
        mime_type: String,
        /// Its text.
        text: String,
    },
    /// An image.
    Image {
        /// `image/png`, `image/jpeg`, …
        mime_type: String,
        /// The image bytes, base64.
        data: String,
    },
}

impl Input {
    /// A message of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            blocks: vec![InputBlock::Text(text.into())],
        }
    }

    /// The message's text blocks joined by blank lines — what a text-only reader sees.
    pub fn plain_text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                InputBlock::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// True when the message is text only.
    pub fn is_text_only(&self) -> bool {
        self.blocks.iter().all(|b| matches!(b, InputBlock::Text(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_skips_what_is_not_text() {
        let input = Input {
            blocks: vec![
                InputBlock::Text("explain".into()),
                InputBlock::ResourceLink {
                    uri: "file:///p/a.rs".into(),
                    name: "a.rs".into(),
                },
                InputBlock::Text("briefly".into()),
            ],
        };
        assert_eq!(input.plain_text(), "explain\n\nbriefly");
        assert!(!input.is_text_only());
        assert!(Input::text("x").is_text_only());
    }
}
