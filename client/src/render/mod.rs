//! Turning daemon events into what a person reads: one-line tool summaries and JSON forms of
//! events (`synapse run`), colours, streamed Markdown, tool blocks and the banner (the REPL).

pub mod banner;
pub mod diff;
pub mod events;
pub mod highlight;
pub mod live_tail;
pub mod markdown;
pub mod safe_text;
pub mod theme;
pub mod tool;
pub mod width;
