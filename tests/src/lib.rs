//! placeholder
pub mod fake_llm;
