//! What each benchmark metric is called in the report, its goal from the issues, and the
//! baseline it is compared with where there is one. Ids are criterion's `full_id` or the ids
//! the self-timed benches record (`synapse_tests::report`).

/// One row of the report.
pub struct Goal {
    pub id: &'static str,
    pub label: &'static str,
    pub goal: &'static str,
    /// The id of the slower way this is compared with (ratio = baseline / this).
    pub baseline: Option<&'static str>,
}

const fn g(id: &'static str, label: &'static str, goal: &'static str) -> Goal {
    Goal {
        id,
        label,
        goal,
        baseline: None,
    }
}

const fn b(id: &'static str, label: &'static str, goal: &'static str, base: &'static str) -> Goal {
    Goal {
        id,
        label,
        goal,
        baseline: Some(base),
    }
}

/// The benches, in report order.
pub const BENCHES: &[(&str, bool)] = &[
    // (name, uses criterion)
    ("daemon", true),
    ("shell", true),
    ("mcp", false),
    ("mcp_serve", false),
    ("acp", false),
    ("agent", false),
    ("llm_real", false),
    ("repl", false),
    ("skills", true),
    ("growth", true),
    ("load", false),
    ("workspaces", true),
    ("permissions", true),
    ("prompt_cache", false),
];

pub const GOALS: &[Goal] = &[
    g(
        "status_roundtrip_over_socket",
        "`Status` round trip over the socket",
        "≤ 200 µs",
    ),
    g(
        "synapse_version_process",
        "`synapse --version` (whole process)",
        "≤ 5 ms",
    ),
    g(
        "synapse_daemon_status_warm_process",
        "`synapse daemon status`, warm daemon",
        "≤ 10 ms",
    ),
    g(
        "read 100-line file (in-process, through the router)",
        "in-process `read` of a 100-line file",
        "≤ 0.3 ms",
    ),
    b(
        "echo through the persistent shell",
        "`echo` through the persistent shell",
        "p50 ≤ 1 ms",
        "echo through a fresh bash -c (baseline)",
    ),
    g(
        "echo through a fresh bash -c (baseline)",
        "baseline: `echo` through a fresh `bash -c`",
        "—",
    ),
    g(
        "synapse exec \"echo hi\" (whole process, warm daemon)",
        "`synapse exec \"echo hi\"`, warm daemon",
        "≤ 10 ms",
    ),
    g(
        "permission check of a 4-part command line (auto mode)",
        "permission check of a 4-part command line",
        "—",
    ),
    g(
        "permission check with shell resolution, 4-part line (populated shell)",
        "permission check with shell resolution, 4-part line (aliases, functions, hash in the shell)",
        "≤ 50 µs",
    ),
    g(
        "permission check with shell resolution, 4-part line (fresh shell)",
        "permission check with shell resolution, 4-part line (fresh shell)",
        "—",
    ),
    b(
        "mcp.warm_wrapper_call",
        "warm `mcp:*` call through the wrapper",
        "≤ 2 ms",
        "mcp.fresh_connection_call",
    ),
    g(
        "mcp_serve.overhead",
        "`synapse mcp serve` tool call, overhead over the daemon's own call",
        "≤ 3 ms",
    ),
    g(
        "mcp_serve.tool_call",
        "`synapse mcp serve` warm tools/call of a re-offered MCP tool",
        "—",
    ),
    g(
        "mcp_serve.daemon_call",
        "baseline: the daemon's own call of the same command (`Tools.Exec`, gated)",
        "—",
    ),
    g(
        "acp.spawn_to_initialize",
        "`synapse acp` spawn → `initialize` answered, warm daemon",
        "≤ 15 ms",
    ),
    g(
        "acp.first_update",
        "`synapse acp` model's first text chunk → first `agent_message_chunk`",
        "≤ 5 ms",
    ),
    g(
        "mcp.resource_read",
        "warm MCP resource read through the daemon",
        "—",
    ),
    g(
        "mcp.ten_servers_over_one",
        "10 servers at daemon start: all ready, over one server's own start-up",
        "≤ 1000 ms",
    ),
    g(
        "mcp.ten_servers_ready",
        "10 servers at daemon start: all ready, after the start",
        "—",
    ),
    g(
        "mcp.fresh_connection_call",
        "baseline: fresh MCP connection per call",
        "—",
    ),
    g(
        "mcp.in_process_call",
        "in-process MCP call (server time included)",
        "≤ 1 ms over raw",
    ),
    g(
        "mcp.raw_pipe_round_trip",
        "raw pipe round trip to the same server",
        "—",
    ),
    g(
        "mcp.concurrent_errors",
        "errors in 1,000 concurrent MCP calls",
        "0",
    ),
    g(
        "mcp.concurrent_total",
        "1,000 concurrent MCP calls over 10 sessions, all done",
        "no errors",
    ),
    g(
        "agent.run_two_turn",
        "`synapse run` two-turn task, warm daemon",
        "≤ 12 ms",
    ),
    g(
        "agent.tool_overhead_warm_shell",
        "tool_use response → next model request (session shell running)",
        "≤ 3 ms",
    ),
    g(
        "agent.tool_overhead",
        "the same, a new session's first call (the workspace's spare shell handed over)",
        "≤ 2 ms",
    ),
    g(
        "agent.tool_overhead_noop_hooks",
        "the same with a no-op PreToolUse + PostToolUse hook (two process starts per call)",
        "—",
    ),
    g(
        "agent.first_request",
        "`synapse run` spawn → first model request",
        "≤ 15 ms",
    ),
    g(
        "agent.first_request_size",
        "first model request size",
        "≤ 12 KB",
    ),
    g(
        "agent.first_request_size_agents_md",
        "first model request size, 2 KB AGENTS.md",
        "≤ 14.5 KB",
    ),
    g("agent.client_rss", "peak RSS, client", "≤ 30 MB"),
    g(
        "prompt_cache.served_share",
        "10-turn session: input bytes the prefix cache serves, turn 2 on",
        "≥ 90 %",
    ),
    g(
        "prompt_cache.weighted_turn_2",
        "10-turn session: cache-weighted input of turn 2 (read 0.1×, write 1.25×)",
        "—",
    ),
    g(
        "prompt_cache.weighted_turn_10",
        "10-turn session: cache-weighted input of turn 10",
        "—",
    ),
    g(
        "prompt_cache.weighted_growth",
        "10-turn session: cache-weighted input, turn 10 over turn 2 (flat)",
        "≤ 1.5×",
    ),
    g(
        "prompt_cache.first_request_bare",
        "first model request, bare folder",
        "≤ 12 KB",
    ),
    g(
        "agent.daemon_rss",
        "peak RSS, daemon (after the runs)",
        "≤ 30 MB",
    ),
    g(
        "llm_real.synapse_turn",
        "real llama.cpp server: `synapse run` text turn",
        "—",
    ),
    g(
        "llm_real.direct_turn",
        "real llama.cpp server: the same request posted by `curl`",
        "—",
    ),
    g(
        "llm_real.added",
        "real llama.cpp server: latency added by Synapse over `curl`",
        "≤ 5 ms",
    ),
    g(
        "repl.start_to_prompt",
        "`synapse chat` start → prompt drawn",
        "≤ 20 ms",
    ),
    g(
        "repl.keystroke_echo",
        "keystroke → echo while a turn streams",
        "unaffected",
    ),
    g(
        "skills/cold_scan_10k_skills_writing_10k_wrappers",
        "cold scan of 10,000 skills writing wrappers",
        "≤ 1 s",
    ),
    g(
        "skills/rescan_10k_skills_wrappers_up_to_date",
        "rescan of 10,000 skills, wrappers current",
        "—",
    ),
    g(
        "skills_incremental/one_script_changed_to_wrapper_and_index",
        "one script changed → wrapper and index",
        "≤ 10 ms",
    ),
    g(
        "skills.watcher_latency",
        "script saved → wrapper callable (watcher)",
        "p95 ≤ 300 ms",
    ),
    g(
        "skills.first_request_10",
        "first request size, 10 skills listed",
        "≤ 11 KB",
    ),
    g(
        "skills.first_request_10k",
        "first request size, 10,000 skills (awareness budget)",
        "≤ 12 KB",
    ),
    g(
        "skills_listing_10k/rank_and_render_at_turn_start",
        "skills listing ranked at a turn's start, 10,000 skills",
        "≤ 2 ms",
    ),
    g(
        "tools_search_10k/keyword",
        "`tools search` over 10,000 commands, keywords",
        "≤ 10 ms",
    ),
    g(
        "tools_search_10k/regex",
        "`tools search` over 10,000 commands, regex",
        "≤ 10 ms",
    ),
    b(
        "growth.search_request_kb",
        "skill-search request, 10,000 skills (BM25 top 50)",
        "≤ 20 KB",
        "growth.search_request_all_kb",
    ),
    g(
        "growth.search_request_all_kb",
        "baseline: the same with all skill metadata",
        "—",
    ),
    g(
        "growth.bm25_prefilter",
        "BM25 prefilter over 10,000 skills",
        "—",
    ),
    g(
        "stop_hook/auto_enhance_off",
        "stop hook on a completed turn, auto-enhance off",
        "≈ 0",
    ),
    g(
        "stop_hook/absent",
        "the same turn end with no stop hook at all",
        "—",
    ),
    g(
        "load.run",
        "load: `synapse run` (50 sessions at once)",
        "no errors",
    ),
    g(
        "load.exec",
        "load: `synapse exec` (200 at once)",
        "no errors",
    ),
    g(
        "load.mcp",
        "load: `mcp:*` wrapper calls (1,000 at once)",
        "no errors",
    ),
    g("load.errors", "load: errors", "0"),
    g("load.daemon_rss", "load: daemon peak RSS", "bounded"),
    g(
        "settings_freshness_check",
        "settings freshness check (per turn/command)",
        "≤ 20 µs",
    ),
    g(
        "workspaces.fds_before",
        "daemon fds before 500 runs",
        "baseline",
    ),
    g(
        "workspaces.fds_after",
        "daemon fds after 500 runs",
        "within 10%",
    ),
    g(
        "workspaces.rss_before",
        "daemon RSS before 500 runs",
        "baseline",
    ),
    g(
        "workspaces.rss_after",
        "daemon RSS after 500 runs",
        "within 10%",
    ),
    g(
        "workspaces.idle_wakeups_fresh",
        "idle daemon: thread wakeups, fresh",
        "—",
    ),
    g(
        "workspaces.idle_wakeups_after",
        "idle daemon: thread wakeups, a workspace up",
        "—",
    ),
];
