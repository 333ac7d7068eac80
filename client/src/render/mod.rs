//! Turning daemon events into what a person reads: one-line tool summaries, JSON forms of events.

pub mod events;
