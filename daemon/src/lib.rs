//! synapse-daemon: everything in Synapse that has state, behind the `synapsed` binary.
//!
//! Start-up order (`run` in `daemon/src/run.rs`): resolve paths → create the home layout → logging
//! → take the daemon lock → settings → bind the socket → serve gRPC until SIGTERM/SIGINT/`Shutdown`
//! → stop the subsystems → remove the socket.
//!
//! # The main flows, file by file
//!
//! Each flow starts at a method of `proto/synapse.proto`; each gRPC handler in `daemon/src/server/`
//! names the one entry point it calls. `→` is one call; the hop count is the calls from the handler
//! to the code that does the work. Paths are from the repository root. Settings are read through
//! `SettingsHandle::current` (`daemon/src/workspace/settings.rs`). The crates beside it:
//! `daemon/command` (synapse-command, the extension contract every room builds on: `AgentCommand`,
//! `CommandHost`, `CommandContext`, the registry, `CallContext`, the gate's questions, the task
//! owner, the `bin/` writer, the workspace listener — its `lib.rs` says how to add a command),
//! `daemon/mcp` (synapse-mcp, MCP servers as commands, built on the contract only), and the leaves
//! `daemon/llm` (model providers), `daemon/permissions` (the policy engine) and `daemon/sandbox`
//! (the Landlock launcher).
//!
//! # Adding things
//! - **A command:** read `daemon/command/src/lib.rs`; write the `AgentCommand` in the room that
//!   owns what it does (a shell built-in in `daemon/src/shell/commands/`, else its subsystem's
//!   room), unit-test it on `shell::fake_host::FakeHost`, and register it in `shell_layer`
//!   (`daemon/src/state.rs`). The permission engine, the shell functions, `-h`/`--help`, the
//!   prompt and `tools search` all read the registry.
//! - **A provider:** its wire format in `daemon/llm/src/` (a module implementing `LlmProvider`),
//!   a `ProviderKind` variant (`daemon/llm/src/config.rs`: its name, key variables and base-URL
//!   variable — the shell's secret scrub list is derived from them), and the arms the compiler
//!   then asks for: `build_provider` (`daemon/llm/src/lib.rs`), `reach.rs` (what `synapse doctor`
//!   asks) and `discover.rs` (its context window).
//! - **A workspace-scoped extension:** implement `WorkspaceListener` (`synapse_command::workspaces`)
//!   and subscribe it to `DaemonState::workspaces` (`daemon/src/workspace/registry.rs`).
//! - **A front end** (an editor protocol, another agent's): nothing here. The daemon emits the
//!   session contract (`shared/session/`, crate synapse-session; one conversion to the wire in
//!   `synapse_shared::session_wire`, called by `server/chat_wire.rs`), and a front end is a
//!   `Frontend` impl on the client's one session driver (`client/src/session/`), as the REPL,
//!   `synapse run` and `synapse acp` are. Several front ends may attach to one session: the fan-out
//!   and "first answer wins" live in `agent/room.rs`.
//!
//! Rooms beside the assembly (`state.rs`): `assembly/` holds what the assembly hands the loop
//! instead of the loop reaching into the subsystems (the main prompt source, `assembly/main_prompt.rs`);
//! `workspace/` owns the facts of a workspace — its binding (`workspace/binding.rs`) and the content
//! pins of trusted project files (`workspace/trust_pins.rs`), which the gate, hooks, plugins and
//! custom commands read.
//!
//! **1. Chat turn** (`Chat.Attach` with an input; 15 hops over 9 files to bash, 10 to the model).
//! `ChatService::attach` (opening through `ChatSessions::attach`, `daemon/src/agent/attach.rs`) →
//! `read_client` → `read_messages` (`daemon/src/server/chat.rs`) → `ChatSession::start_turn` → `start` (`daemon/src/agent/session.rs`) → `ChatSession::run_turn` →
//! `run_step` (`daemon/src/agent/session.rs`; provider from `resolve_config` + the session's
//! `ProviderFactory`, compaction in `daemon/src/agent/session/compact.rs`) →
//! `AgentRunner::run_turn` → `continue_turn` (`daemon/src/agent/runner.rs`). The model call:
//! `stream_one` → `LlmProvider::stream` (`daemon/llm/src/anthropic/mod.rs`,
//! `daemon/llm/src/openai/mod.rs`). Each tool call: `run_tool` → `ShellToolExecutor::execute`
//! (`daemon/src/agent/shell_executor.rs`) → `ShellSessions::execute`
//! (`daemon/src/shell/sessions.rs`) → `BashRouter::execute` → `route`
//! (`daemon/src/shell/router.rs`, reading the line with `classify` in `daemon/src/shell/syntax.rs`)
//! → `ShellSession::run_native` (`daemon/src/shell/session.rs`) → `BashProcess::run`
//! (`daemon/src/shell/process.rs`; bash started through `synapse_sandbox::wrap`,
//! `daemon/sandbox/src/lib.rs`). A simple agent command instead goes `route` → `run_agent_command`
//! → `AgentCommand::run` (e.g. `daemon/src/shell/commands/read.rs`); inside a compound line it is a
//! shell function (`daemon/src/shell/channel/functions.rs`) that runs `synapsed __agent`
//! (`helper_main`, `daemon/src/shell/channel/helper.rs`) → the channel socket (`answer` → `run`,
//! `daemon/src/shell/channel/mod.rs`) → the same `run_agent_command`. Events return by
//! `forward_events` (`daemon/src/server/chat.rs`) → `to_wire` (`daemon/src/server/chat_wire.rs`:
//! the daemon's events in the session contract's words, `synapse-session`, each call's kind and
//! title from `daemon/src/shell/call_kind.rs`) → `event_to_wire` (`shared/src/session_wire/`, the
//! one conversion every front end reads back with `event_from_wire`); messages are saved by
//! `SessionLog::append` (`daemon/src/agent/session_log.rs`).
//!
//! **2. `mcp:` call from the model** (19 hops over 10 files). Flow 1 to `route`, where the gate
//! asks `SessionGate::check` (`daemon/src/agent/gate/mod.rs`, with the `permissions.mcp` rules in
//! `daemon/src/agent/gate/decide.rs`) → `BashRouter::shortcut` → `McpShortcut::run`
//! (`daemon/mcp/src/shortcut.rs`) → `McpManager::call_command` → `call_argv` (argv mapped by
//! `map_argv`, `daemon/mcp/src/args.rs`) → `invoke` (`daemon/mcp/src/calls.rs`) →
//! `McpConnection::call` (`daemon/mcp/src/connection.rs`); the answer is rendered by
//! `render_result` (`daemon/mcp/src/result.rs`). A server whose tool list is not known yet is
//! connected first by `lookup` (`daemon/mcp/src/calls.rs`), which also syncs the wrappers. In a
//! compound line bash runs the wrapper `$SYNAPSE_HOME/bin/mcp:<server>:<tool>` (written by
//! `WrapperWriter::sync`, `daemon/mcp/src/wrappers.rs`, rendered and written by `WrapperScript` and
//! `WrapperFolder` in `daemon/command/src/wrappers/`), which execs `synapse mcp call`
//! (`client/src/cli/mcp.rs`) → `Mcp.CallTool` → `McpService::call_tool`
//! (`daemon/src/server/mcp.rs`) → `McpManager::call_argv` → `invoke` → `McpConnection::call` (3
//! hops).
//!
//! **3. Skill script saved → wrapper** (5 hops from the file event). The model saves the script
//! with `write` (flow 1 to `run_agent_command` → `WriteCommand::run`,
//! `daemon/src/shell/commands/write.rs`; 15 hops) or any native command. The notify watcher set
//! up by `SkillWatcher::start` → `run` (`daemon/src/skills/watcher/mod.rs`, quiet time kept by
//! `Pending` in `watcher/debounce.rs`) → `SkillStore::apply_paths` (`daemon/src/skills/store.rs`)
//! → `State::reload_dir` (`daemon/src/skills/state.rs`, loading the
//! folder with `load_skill_dir` in `daemon/src/skills/record.rs` → `scan_scripts` in
//! `daemon/src/skills/script.rs`) → `State::sync_name` → `render` (`daemon/src/skills/wrapper.rs`) + `WrapperFolder::put`
//! (`daemon/command/src/wrappers/folder.rs`); a project skill's wrapper goes to its workspace's folder
//! (`State::sync_workspaces`). `Skills.Create` (`SkillStore::create`,
//! `daemon/src/skills/manage.rs`) also ends in `apply_paths`; `Skills.Refresh` and the end of every
//! skill sub-agent run go `SkillStore::refresh` → `State::rebuild` → `WrapperFolder::sync`.
//!
//! **4. Stop hook → enhancement** (13 hops over 8 files). Flow 1 to `ChatSession::run_turn`
//! (`daemon/src/agent/session.rs`), after a completed turn → `run_stop_hook`
//! (`daemon/src/agent/session.rs`) → `after_completed_turn` (`daemon/src/agent/stop_hook.rs`) →
//! `EnhanceHook::after_turn` → `enhance` (`daemon/src/growth/enhance.rs`) → `SkillAgent::run` →
//! `run_as` (`daemon/src/growth/mod.rs`) → `SubAgents::run` (`daemon/src/agent/subagent.rs`) →
//! `AgentRunner::run_silent` (`daemon/src/agent/runner.rs`), whose commands go
//! `ShellToolExecutor::execute` (`daemon/src/agent/shell_executor.rs`, with the sub-agent's
//! gate) → `ShellSessions::execute`, each passing `PolicyGate::check` (`daemon/src/agent/gate/subagent_policy.rs`, the sub-agent's
//! policy) and then `SnapshotGate::check` (`daemon/src/growth/snapshot_gate.rs`). The report returns as
//! `SessionEvent::EnhanceReport`. `Skills.Enhance` takes the same path: `SkillsService::enhance` →
//! `growth_enhance` (`daemon/src/server/skills_growth.rs`) → `enhance` → … (6 hops).
//!
//! **5. Approval** (18 hops to the question, 4 for the answer). Asking: flow 1 to `route` → `check`
//! (`daemon/src/shell/router.rs`) → `SessionGate::check` (`daemon/src/agent/gate/mod.rs`) →
//! `decide_and_ask` (`daemon/src/agent/gate/decide.rs`, deciding with
//! `synapse_permissions::decide`, `daemon/permissions/src/policy/mod.rs`) → `resolve`
//! (`daemon/src/agent/gate/answer.rs`) → `SessionApprover::request`
//! (`daemon/src/agent/approvals.rs`), which sends `SessionEvent::Approval` to the clients
//! (`to_wire`, `daemon/src/server/chat_wire.rs`). A skill marked `ask` asks through
//! `CommandContext::approve` (`daemon/command/src/context.rs`) → `SessionApprover::ask`. Answering:
//! `Chat.Attach` with an approval → `ChatService::attach` → `read_client` → `read_messages`
//! (`daemon/src/server/chat.rs`) → `ChatSession::answer_approval` (`daemon/src/agent/session.rs`) →
//! `SessionApprover::answer` (`daemon/src/agent/approvals.rs`), which wakes `request`; `resolve`
//! then runs or refuses, remembers "session" answers and saves "always" ones to the rules file.
//! Every permission decision lives in `daemon/src/agent/gate/`: a session's commands
//! (`SessionGate`), `synapse exec --permission-mode` (`exec_gate`), a sub-agent's policy
//! (`subagent_policy`) and an MCP call reaching `Mcp.CallTool` from a sandboxed script
//! (`mcp_call`), all deciding with `synapse_permissions`; the gRPC layer only calls them.
//!
//! **6. An MCP server asks the user** (a form or sampling during a session's tool call). Flow 2
//! to `BashRouter::shortcut`, which puts the call's `AskerHandle` (a `TurnAsker`,
//! `daemon/src/agent/asker.rs`, made by `ChatSession::turn_asker` in
//! `daemon/src/agent/session.rs`) in the call's `CallContext` (`daemon/command/src/command.rs`)
//! → `McpShortcut` → `McpHub::call_command` → `McpManager::call_argv` → `invoke` →
//! `McpConnection::call` → `call_watched`
//! (`daemon/mcp/src/connection/handler.rs`), which registers it in `CallAskers`
//! (`daemon/mcp/src/connection/asks.rs`) while the call runs. The server's request arrives at
//! `Events::create_elicitation` / `create_message` → `elicit` / `sample` (`asks.rs`, finding the
//! call's asker) → `TurnAsker::elicit` → `SessionForms::ask` (`daemon/src/agent/forms.rs`, which
//! sends `SessionEvent::Elicitation`), or `TurnAsker::sample` → `SessionApprover::request` (flow
//! 5) → `LlmProvider::stream`. A form is answered by `read_messages` →
//! `ChatSession::answer_elicitation` → `SessionForms::answer`, which checks the values with
//! `synapse_shared::elicit::Form::check` (`shared/src/elicit/mod.rs`).
//!
//! **7. `synapse mcp login <server>`** (OAuth for a remote server). `client/src/cli/mcp_login.rs`
//! → `Mcp.Login` → `McpService::login` (`daemon/src/server/mcp.rs`, refusing a sandboxed peer) →
//! `mcp_auth::login` (`daemon/src/server/mcp_auth.rs`, a task streaming the URL, then the outcome)
//! → `McpManager::login` (`daemon/mcp/src/manager/auth.rs`) → `oauth::login::login`
//! (`daemon/mcp/src/oauth/login.rs`: `discover`, `register`, `Pkce`, `CallbackListener::wait`,
//! `grant::exchange_code`) → `OAuthVault::install` (`vault.rs`, `TokenStore::save` in
//! `store.rs`) → `Server::reconnect`. Every HTTP connection's requests go through
//! `McpHttpClient` (`daemon/mcp/src/oauth/http.rs`, built by `connection/http.rs`), which takes
//! the bearer from `TokenSource::access_token` (refreshing it when due or after a 401); a refusal
//! it cannot answer becomes `ConnectionError::NeedsLogin` and the server's `NeedsLogin` state.
//!
//! **8. Hooks** (the user's Claude Code hooks around a turn). `ChatSessions::attach`
//! (`daemon/src/agent/attach.rs`) → `ChatSession::hooks_session_start` →
//! `SessionHooks::start_in_background` (`daemon/src/hooks/mod.rs`); a turn: `ChatSession::run_turn`
//! (`daemon/src/agent/session.rs`) → `SessionHooks::user_prompt`; each tool call:
//! `AgentRunner::run_tool` (`daemon/src/agent/runner.rs`) → `SessionHooks::pre_tool` → `fire`
//! (matching in `hooks/matcher.rs`, the call named by `names::tool_of`, sources in
//! `hooks/sources.rs`; a hook whose named project files, `hooks/named_files.rs`, differ from
//! their pins is held by `hooks/script_pins.rs`) → `run::run` (`sh -c`, stdin JSON) → the verdict (`HookVerdict::absorb`,
//! `hooks/output.rs`); its `allow`/`ask` rides the call as `HookPermission` to
//! `SessionGate::decide_and_ask` (`hook_weighed`, `daemon/src/agent/gate/decide.rs`). Stop:
//! `AgentRunner::stop_hooks`; PreCompact: `Compactor::compact`; Notification:
//! `SessionApprover::request` (`daemon/src/agent/approvals.rs`).
//!
//! **9. Custom command and custom agent** (Claude Code's `commands/*.md`, `agents/*.md`). A turn
//! whose text is `/<name> args`: `ChatSession::run_turn` → `expand_custom_command`
//! (`daemon/src/agent/session/custom_command.rs`) → `CustomCatalog::command` (the folders, trust
//! and pins in `daemon/src/agent/custom/files.rs`) → `expand` (`daemon/src/agent/custom/expand.rs`,
//! `!` lines through the session's gate). `task:<name>`: flow 1 to `run_agent_command`, where
//! `CommandRegistry::get` asks `CustomTaskFamily::command` (`daemon/src/agent/custom_task.rs`) →
//! `CustomTaskCommand::run` → `SubAgents::run` under a `PolicyGate` holding the agent's `tools`
//! (`ToolGrant`, `daemon/src/agent/custom/tools.rs`). The REPL lists them with `Custom.List`
//! (`daemon/src/server/custom.rs`).

pub mod agent;
pub mod assembly;
pub mod doctor;
pub mod growth;
pub mod hooks;
pub mod lifecycle;
pub mod logging;
pub mod plugins;
pub mod run;
pub mod server;
pub mod session_mcp;
pub mod shell;
pub mod skills;
pub mod state;
pub mod todo;
pub mod web;
pub mod workspace;
