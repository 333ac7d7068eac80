//! placeholder
pub mod llm;
