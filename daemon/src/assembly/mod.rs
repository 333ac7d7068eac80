//! The assembly's rooms beside `state.rs`: what the daemon hands the agent loop instead of the
//! loop reaching for the subsystems itself. [`main_prompt`] is a chat session's prompt source —
//! it reads the skill store, the MCP hub, the workspace's git facts and settings, and gives the
//! loop a [`crate::agent::turn_prompt::TurnPrompt`].

pub mod main_prompt;
