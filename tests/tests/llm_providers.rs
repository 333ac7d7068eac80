//! The real providers against the scripted fake LLM over real HTTP: what the agent loop (and so
//! the user) sees for streamed text and tool calls, retries, broken streams and bad keys, in both
//! the Anthropic and the OpenAI-compatible wire formats.

// A test file: helpers panic as failed assertions (clippy only exempts `#[test]` bodies).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod common;
mod openai;
