//! synapse-daemon: everything with state.

pub mod skills;
