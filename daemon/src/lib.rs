//! placeholder

pub mod shell;
