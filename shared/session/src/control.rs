//! What a front end can do to a session besides sending input and answers: cancel the turn,
//! change its model or permission mode, compact its context.

/// A permission mode (what runs without asking). The modes a front end may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Asks before anything that writes outside the workspace or is not known to be safe.
    Auto,
    /// Asks before every command that is not read-only.
    Ask,
    /// Refuses every command that could change something.
    ReadOnly,
    /// Asks nothing (the sandbox still holds).
    Yolo,
}

/// A mode word that is not one of [`Mode::ALL`].
pub type UnknownMode = crate::UnknownWord;

impl Mode {
    /// Every mode, in the order a front end lists them.
    pub const ALL: [Mode; 4] = [Mode::Ask, Mode::Auto, Mode::ReadOnly, Mode::Yolo];

    const WORDS: &'static [&'static str] = &["ask", "auto", "read-only", "yolo"];

    /// The mode's word (`auto`, `ask`, `read-only`, `yolo`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Ask => "ask",
            Mode::ReadOnly => "read-only",
            Mode::Yolo => "yolo",
        }
    }

    /// A mode from its word.
    pub fn parse(word: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == word)
            .ok_or_else(|| crate::UnknownWord {
                what: "permission mode",
                word: word.to_string(),
                known: Self::WORDS,
            })
    }

    /// One line saying what the mode does, for a front end's mode picker.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Auto => "runs what is safe in the sandbox, asks before the rest",
            Mode::Ask => "asks before every command that is not read-only",
            Mode::ReadOnly => "reads and searches; refuses every change",
            Mode::Yolo => "asks nothing; the sandbox still holds",
        }
    }
}

/// A control message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Stop the running turn: the model stream is dropped and what the turn runs is killed.
    Cancel,
    /// The model for the following turns (`None`: back to the settings' model).
    SetModel(Option<String>),
    /// The permission mode from now on (`None`: only report the current mode and rules).
    SetMode(Option<Mode>),
    /// Compact the conversation now.
    Compact,
}
