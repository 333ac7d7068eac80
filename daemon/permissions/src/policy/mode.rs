//! The permission modes a session runs in, with their names for settings and the CLI.

use std::fmt;
use std::str::FromStr;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Everyday work runs; risky commands and writes outside the writable folders ask.
    #[default]
    Auto,
    /// Every command asks unless an allow rule covers it; reads by agent commands run.
    Ask,
    /// Nothing may change files; commands that might are refused.
    ReadOnly,
    /// Everything runs, outside the sandbox; only deny rules still refuse.
    Yolo,
}

/// A mode name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode \"{0}\" (expected auto, ask, read-only or yolo)")]
pub struct ModeError(pub String);

impl Mode {
    /// The four modes, for code (and tests) that must go through each one.
    pub const ALL: [Mode; 4] = [Mode::Auto, Mode::Ask, Mode::ReadOnly, Mode::Yolo];

    /// The name settings and the CLI use for the mode (`read-only`); [`FromStr`] reads it back.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Ask => "ask",
            Mode::ReadOnly => "read-only",
            Mode::Yolo => "yolo",
        }
    }

    /// One line for help texts.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Auto => {
                "run everyday commands; ask before risky ones and writes outside the project"
            }
            Mode::Ask => "ask before every command that no allow rule covers",
            Mode::ReadOnly => "refuse anything that could change files",
            Mode::Yolo => {
                "run everything without asking, outside the sandbox (deny rules still apply)"
            }
        }
    }
}

impl FromStr for Mode {
    type Err = ModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Mode::Auto),
            "ask" => Ok(Mode::Ask),
            "read-only" | "readonly" | "read_only" => Ok(Mode::ReadOnly),
            "yolo" => Ok(Mode::Yolo),
            _ => Err(ModeError(s.to_string())),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(mode.as_str().parse::<Mode>(), Ok(mode));
            assert_eq!(mode.to_string(), mode.as_str());
            assert!(!mode.description().is_empty());
        }
        assert_eq!("readonly".parse::<Mode>(), Ok(Mode::ReadOnly));
        assert_eq!(" Auto ".parse::<Mode>(), Ok(Mode::Auto));
        let err = "careful".parse::<Mode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown permission mode \"careful\" (expected auto, ask, read-only or yolo)"
        );
    }
}
