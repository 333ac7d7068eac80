//! synapse-daemon: everything with state behind `synapsed`.

pub mod mcp;
