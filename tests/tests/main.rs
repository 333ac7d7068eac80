//! The one integration test binary: every end-to-end test of Synapse is a module here, so the
//! suite links once. Each module drives the real `synapsed` and `synapse` on a temporary home
//! (see `synapse_tests::TestEnv`); `mcp_support` and `repl_support` are shared helpers.

// Test code: helpers panic as failed assertions (clippy only exempts `#[test]` bodies).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_compact;
mod agent_run;
mod agent_tasks;
mod approvals;
mod bash_approvals;
mod bash_fidelity_compose;
mod bash_fidelity_output;
mod bash_fidelity_stop;
mod bash_jobs;
mod bash_live_tail;
mod bash_spill;
mod daemon_faults;
mod daemon_lifecycle;
mod growth_cli;
mod growth_context;
mod growth_enhance;
mod growth_skills;
mod llm_errors;
mod llm_providers;
mod llm_real;
mod mcp_e2e;
mod mcp_edit_cli;
mod mcp_errors;
mod mcp_faults;
mod mcp_filesystem;
mod mcp_protocol;
mod mcp_protocol_config;
mod mcp_python;
mod mcp_resources;
mod mcp_roots;
mod mcp_support;
mod permissions;
mod repl_chat;
mod repl_flow;
mod repl_input;
mod repl_render;
mod repl_sessions;
mod repl_support;
mod sandbox;
mod security;
mod shell_exec;
mod skills_agent_commands;
mod skills_claude_fields;
mod skills_cli;
mod skills_published;
mod skills_watcher;
mod skills_wrappers;
mod todo_session;
mod trust_approval;
mod trust_exec;
mod trust_peer;
mod trust_project;
mod trust_resolver;
mod trust_rules;
mod trust_socket;
mod trust_tmpdir;
mod web_fetch;
mod web_search;
mod workspaces_mcp;
mod workspaces_projects;
mod workspaces_settings;
