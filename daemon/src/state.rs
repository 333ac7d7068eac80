//! The daemon's shared state: paths, settings, start time and the shutdown token. Subsystems
//! (shell sessions, skills, MCP, agents) hang off this as they land; services get an `Arc` of it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use synapse_shared::paths::Paths;
use synapse_shared::settings::Settings;
use tokio_util::sync::CancellationToken;

use crate::agent::RunnerLimits;
use crate::agent::custom::files::Places;
use crate::agent::custom::{CustomCatalog, SessionCommands};
use crate::agent::custom_task::CustomTaskFamily;
use crate::agent::gate::GateEnv;
use crate::agent::session::{SessionDeps, SessionEvent};
use crate::agent::sessions::{ChatSessions, DepsFactory};
use crate::agent::stop_hook::StopHook;
use crate::agent::subagent::{SubAgentRunner, SubAgents};
use crate::agent::subagent_context::SubAgentContexts;
use crate::agent::task_command::{EXPLORE_SPEC, GENERAL_SPEC, TaskCommand, TaskKind};
use crate::assembly::main_prompt::MainPrompt;
use crate::growth;
use crate::shell::{ShellSessions, builtin_registry};
use crate::skills::agent_commands::{SkillCommand, SkillLoadCommand, ToolsCommand};
use crate::skills::{SkillStore, SkillWatcher, ToolCatalog, ToolEntry, ToolScope, ToolSource};
use crate::todo::{TodoGuard, TodoStore};
use crate::workspace::{SettingsHandle, Workspaces};
use synapse_mcp::shortcut::McpShortcut;
use synapse_mcp::{McpHub, McpOptions};

pub struct DaemonState {
    pub paths: Paths,
    pub started: Instant,
    /// The one owner of settings.json: re-read when it changes, last good kept when it breaks.
    pub settings_handle: Arc<SettingsHandle>,
    /// Cancelled to stop the daemon (signal or `Shutdown`).
    pub shutdown: CancellationToken,
    /// The Bash tool's sessions (persistent shells and the router).
    pub shell: Arc<ShellSessions>,
    /// Chat sessions (the agent conversations).
    pub chats: Arc<ChatSessions>,
    /// The projects that are up (their sessions, bin folders, idle stop).
    pub workspaces: Workspaces,
    /// MCP servers and their commands: the user's, and each workspace's project servers.
    pub mcp: McpHub,
    /// Every skill, its wrappers and index.json, kept current by `_skill_watcher`.
    pub skills: Arc<SkillStore>,
    /// Every extension command for `tools search` (skills now; MCP adds itself as a source).
    pub tools: ToolCatalog,
    /// The skill sub-agent (search, enhance, evaluate, versions).
    pub skill_agent: Arc<growth::SkillAgent>,
    /// What every permission gate shares (the last good rules of a broken file among it).
    gate_base: GateEnv,
    /// The rules an MCP call from inside a sandboxed shell obeys, kept per workspace.
    pub mcp_call_gate: crate::agent::gate::mcp_call::McpCallGate,
    /// The user's custom slash commands and sub-agents (Claude Code's `commands/`, `agents/`).
    pub custom: Arc<CustomCatalog>,
    /// The user's hooks (Claude Code's format), for every session (`/hooks` lists them).
    pub hooks: Arc<crate::hooks::Hooks>,
    _skill_watcher: Option<SkillWatcher>,
}

impl DaemonState {
    pub fn new(paths: Paths, settings: Result<Settings, String>) -> Self {
        let settings = Arc::new(SettingsHandle::new(paths.settings_file(), settings));
        // A saved todo list is the session's plan for its clients; the sessions exist only
        // once the shell layer (which holds the store) is built, hence the late binding.
        let plans: Arc<std::sync::OnceLock<std::sync::Weak<ChatSessions>>> = Arc::default();
        let todo_store = TodoStore::new(paths.sessions_dir()).with_on_save({
            let plans = plans.clone();
            Arc::new(move |session, list| {
                if let Some(chats) = plans.get().and_then(std::sync::Weak::upgrade) {
                    chats.publish(session, SessionEvent::Plan(list.plan()));
                }
            })
        });
        let (skills, skill_watcher) = crate::skills::start(&paths, settings.clone());
        // A workspace's bin folder holds its project servers' and its project skills' commands.
        let workspaces = Workspaces::new(
            paths.home().join("workspaces"),
            reader(&settings, project_idle_stop),
        );
        workspaces.subscribe(skills.clone());
        let mut mcp_options = McpOptions::for_home(&paths, synapse_mcp::client_binary());
        // A trusted project's `enabledPlugins` (as pinned) adds its plugins' servers there.
        mcp_options.project_plugins = Arc::new(
            crate::plugins::project::TrustedProjectPlugins::new(paths.home()),
        );
        let mcp = McpHub::new(mcp_options, Arc::new(workspaces.clone()));
        let meta_dir = growth::meta::meta_dir(
            paths.home(),
            std::env::var_os(growth::meta::ENV_META_SKILLS_DIR),
        );
        let installed = growth::meta::install(&meta_dir);
        growth::meta::remove_legacy_copies(&paths.skills_dir(), &meta_dir);
        if !installed.is_empty() {
            tracing::info!(?installed, dir = %meta_dir.display(), "meta skills installed");
        }
        let skill_contexts = Arc::new(SubAgentContexts::default());
        let tools = ToolCatalog::new();
        let custom = Arc::new(custom_catalog(&paths));
        let hooks = Arc::new(crate::hooks::Hooks::new(
            crate::hooks::sources::HookSources::new(
                settings.clone(),
                user_home(),
                paths.trust_file(),
            ),
            Some(mcp_tool_lookup(&mcp)),
        ));
        let (shell, skill_agent) = shell_layer(ShellLayerParts {
            paths: &paths,
            settings: &settings,
            skills: &skills,
            mcp: &mcp,
            tools: &tools,
            todo_store: &todo_store,
            meta_dir,
            skill_contexts: skill_contexts.clone(),
            custom: &custom,
            hooks: &hooks,
        });
        // A workspace going down takes its spare shell with it.
        workspaces.subscribe(shell.clone());
        shell
            .router()
            .commands()
            .on_change(crate::skills::change_listener(
                skills.clone(),
                skill_watcher.as_ref().map(SkillWatcher::flusher),
            ));
        let commands_doc = shell.commands_doc().to_string();
        let agent_commands = Arc::new(shell.router().commands().agent_commands());
        let gate_base = gate_env(&paths, &settings, &mcp, agent_commands);
        let chats = Arc::new(ChatSessions::new(
            paths.sessions_dir(),
            chat_deps(
                shell.clone(),
                gate_base.clone(),
                settings.clone(),
                commands_doc,
                todo_store,
                Arc::new(growth::enhance::EnhanceHook {
                    agent: skill_agent.clone(),
                }),
                skill_contexts,
                skills.clone(),
                (workspaces.clone(), mcp.clone()),
                hooks.clone(),
                session_commands(&custom, &skills),
            ),
        ));
        let _ = plans.set(Arc::downgrade(&chats));
        tools.add_source(skills.clone());
        tools.add_source(Arc::new(CustomAgentTools(custom.clone())));
        tools.add_source(Arc::new(McpTools(mcp.clone())));
        Self {
            shell,
            chats,
            workspaces,
            mcp,
            paths,
            started: Instant::now(),
            settings_handle: settings,
            shutdown: CancellationToken::new(),
            skills,
            tools,
            skill_agent,
            mcp_call_gate: crate::agent::gate::mcp_call::McpCallGate::new(gate_base.clone()),
            gate_base,
            hooks,
            custom,
            _skill_watcher: skill_watcher,
        }
    }

    /// A snapshot of the current settings (re-read first when the file changed).
    pub fn settings(&self) -> Settings {
        (*self.settings_handle.current()).clone()
    }

    /// Why settings.json on disk is not in force, as of now.
    pub fn settings_error(&self) -> Option<String> {
        self.settings_handle.error()
    }

    /// Binds a shell opened in `cwd` to its workspace (the project root above it): the
    /// project's MCP servers start (expanding `${VAR}` from the opening client's `env`) and stay
    /// up while the returned value lives; its bin folder goes on the shell's PATH.
    pub fn bind_workspace(
        &self,
        cwd: &std::path::Path,
        env: std::collections::HashMap<String, String>,
    ) -> crate::workspace::WorkspaceBinding {
        bind(&self.workspaces, &self.mcp, cwd, env)
    }
}

/// What the shell layer is built from.
struct ShellLayerParts<'a> {
    paths: &'a Paths,
    settings: &'a Arc<SettingsHandle>,
    skills: &'a Arc<SkillStore>,
    mcp: &'a McpHub,
    tools: &'a ToolCatalog,
    todo_store: &'a TodoStore,
    meta_dir: PathBuf,
    skill_contexts: Arc<SubAgentContexts>,
    custom: &'a Arc<CustomCatalog>,
    hooks: &'a Arc<crate::hooks::Hooks>,
}

/// The shell layer (sessions, router, agent commands) and the skill sub-agent. Some of its
/// commands (`task:*`, `skill enhance`) start sub-agents on this very layer: they get a
/// [`SubAgentRunner`] holding the layer weakly, made while the layer is built
/// (`Arc::new_cyclic`), so nothing is wired late.
fn shell_layer(parts: ShellLayerParts<'_>) -> (Arc<ShellSessions>, Arc<growth::SkillAgent>) {
    let ShellLayerParts {
        paths,
        settings,
        skills,
        mcp,
        tools,
        todo_store,
        meta_dir,
        skill_contexts,
        custom,
        hooks,
    } = parts;
    let mut built: Option<Arc<growth::SkillAgent>> = None;
    let shell = Arc::new_cyclic(|layer: &std::sync::Weak<ShellSessions>| {
        let subagents: Arc<dyn SubAgentRunner> = Arc::new(SubAgents {
            shell: layer.clone(),
            settings: snapshot(settings),
            hooks: hooks.clone(),
        });
        let versions = growth::versions::Versions::new(paths.home().join("skill-versions"));
        versions.remove_stale_staging();
        let skill_agent = Arc::new(growth::SkillAgent {
            store: skills.clone(),
            subagents: subagents.clone(),
            meta_dir,
            versions,
            contexts: skill_contexts,
            sessions_dir: paths.sessions_dir(),
            auto_enhance: reader(settings, |s| s.skill_enhance.auto_enhance),
            max_enhance_chars: reader(settings, |s| s.skill_enhance.max_enhance_context_chars),
        });
        let mut registry = builtin_registry();
        registry.register_shortcut(Arc::new(McpShortcut(mcp.clone())));
        registry.register(Arc::new(SkillCommand {
            store: skills.clone(),
            growth: Some(Arc::new(growth::commands::GrowthBackend(
                skill_agent.clone(),
            ))),
        }));
        for task in [
            growth::commands::SkillTask::Search,
            growth::commands::SkillTask::Enhance,
        ] {
            registry.register(Arc::new(growth::commands::SkillTaskCommand {
                task,
                agent: skill_agent.clone(),
            }));
        }
        registry.register(Arc::new(SkillLoadCommand {
            store: skills.clone(),
        }));
        registry.register(Arc::new(ToolsCommand {
            tools: tools.clone(),
        }));
        crate::web::register(&mut registry, snapshot(settings), paths.settings_file());
        crate::todo::register(&mut registry, todo_store.clone());
        for kind in [TaskKind::General, TaskKind::Explore] {
            registry.register(Arc::new(TaskCommand {
                kind,
                subagents: subagents.clone(),
            }));
        }
        registry.register_family(Arc::new(CustomTaskFamily {
            catalog: custom.clone(),
            subagents: subagents.clone(),
        }));
        let registry = Arc::new(registry);
        tools.add_source(Arc::new(AgentCommandTools(
            registry
                .specs()
                .filter(|s| !matches!(s.name, "tools" | "skill:load"))
                .map(|s| ToolEntry {
                    command: s.name.to_string(),
                    description: s.summary.to_string(),
                })
                .collect(),
        )));
        built = Some(skill_agent);
        crate::shell::channel::sessions_with_channel(
            ShellSessions::new(registry, Some(paths.bin_dir()))
                .with_secret_variables(crate::shell::SecretVariables::with(
                    crate::web::settings::secret_variables(),
                ))
                .with_spill_dir(paths.home().join("output"))
                .with_settings(snapshot(settings)),
            paths.run_dir().join("agent.sock"),
        )
    });
    let Some(skill_agent) = built else {
        unreachable!("Arc::new_cyclic runs its closure before returning");
    };
    (shell, skill_agent)
}

/// The custom commands and agents: the user's and trusted projects' `commands/` and `agents/`.
fn custom_catalog(paths: &Paths) -> CustomCatalog {
    let reserved = [&GENERAL_SPEC, &EXPLORE_SPEC]
        .iter()
        .filter_map(|s| s.name.strip_prefix("task:"))
        .map(str::to_string)
        .collect();
    CustomCatalog::new(
        Places {
            synapse_home: paths.home().to_path_buf(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            trust_file: paths.trust_file(),
        },
        reserved,
    )
}

/// What sessions expand `/<name>` with: a user-invocable skill of the name wins.
fn session_commands(custom: &Arc<CustomCatalog>, skills: &Arc<SkillStore>) -> Arc<SessionCommands> {
    let skills = skills.clone();
    Arc::new(SessionCommands {
        catalog: custom.clone(),
        skill_names: Arc::new(move |cwd, name| {
            crate::growth::skills_seen_from(&skills, cwd)
                .iter()
                .any(|s| {
                    s.name.eq_ignore_ascii_case(name)
                        && s.enabled
                        && s.user_invocable
                        && s.permission != crate::skills::SkillPermission::Deny
                })
        }),
    })
}

/// Custom agents in `tools search`, for the caller's project.
struct CustomAgentTools(Arc<CustomCatalog>);

impl ToolSource for CustomAgentTools {
    fn visit_tools(&self, scope: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        let dir = scope.workspace.unwrap_or(std::path::Path::new("/"));
        for agent in self.0.load(dir).agents {
            f(&ToolEntry {
                command: format!("task:{}", agent.name),
                description: agent.description.clone(),
            });
        }
    }
}

/// The agent shell commands in `tools search` (web_fetch, todo, task:*, …).
struct AgentCommandTools(Vec<ToolEntry>);

impl ToolSource for AgentCommandTools {
    fn visit_tools(&self, _: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        self.0.iter().for_each(f);
    }
}

/// `mcp.projectIdleStopSec`: how long a workspace's project servers outlive its last session.
fn project_idle_stop(s: &Settings) -> std::time::Duration {
    s.other
        .get("mcp")
        .and_then(|m| m.get("projectIdleStopSec"))
        .and_then(serde_json::Value::as_f64)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map_or(crate::workspace::registry::IDLE_STOP_DEFAULT, |secs| {
            std::time::Duration::from_secs_f64(secs.min(30.0 * 86_400.0))
        })
}

/// The workspace of a session opened in `cwd`, held while the returned value lives; its project
/// servers start with the opening client's `env`.
fn bind(
    workspaces: &Workspaces,
    mcp: &McpHub,
    cwd: &std::path::Path,
    env: std::collections::HashMap<String, String>,
) -> crate::workspace::WorkspaceBinding {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = crate::workspace::project_root(cwd, home.as_deref());
    let bound = workspaces.bind(&root);
    mcp.workspace(&root, Some(env));
    bound
}

/// MCP commands in `tools search`, next to the skill commands: the caller's session's own, its
/// project's and the user's.
struct McpTools(McpHub);

impl ToolSource for McpTools {
    fn visit_tools(&self, scope: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        for e in self.0.catalog_entries(scope.workspace, scope.session) {
            f(&ToolEntry {
                command: e.command,
                description: e.description,
            });
        }
    }
}

/// What every new chat session gets: the shared shell layer, live settings, a system prompt
/// rendered for its working directory, and the reminder of its unfinished todo items.
impl DaemonState {
    /// What a permission gate outside a chat session (`synapse exec --permission-mode`) needs.
    pub fn gate_env(&self, workspace: Option<PathBuf>) -> GateEnv {
        for_workspace(&self.gate_base, &self.mcp, (workspace, None))
    }
}

/// `base` for a session of `workspace` (and of `session`, when it has servers of its own): MCP
/// annotations are looked up among the commands it sees; everything else is shared.
fn for_workspace(
    base: &GateEnv,
    mcp: &McpHub,
    (workspace, session): (Option<PathBuf>, Option<String>),
) -> GateEnv {
    let mcp = mcp.clone();
    GateEnv {
        mcp_hints: Arc::new(move |command| {
            mcp.hints(workspace.as_deref(), session.as_deref(), command)
        }),
        ..base.clone()
    }
}

/// What a permission gate needs from the daemon ([`for_workspace`] narrows the MCP hints to a
/// session's workspace); `agent_commands` come from the command registry.
fn gate_env(
    paths: &Paths,
    settings: &Arc<SettingsHandle>,
    mcp: &McpHub,
    agent_commands: Arc<synapse_permissions::AgentCommands>,
) -> GateEnv {
    let mcp = mcp.clone();
    GateEnv {
        synapse_home: paths.home().to_path_buf(),
        user_settings: settings.clone(),
        trust_file: paths.trust_file(),
        home: user_home(),
        temp_dir: std::env::temp_dir(),
        mcp_hints: Arc::new(move |command| mcp.hints(None, None, command)),
        last_good_rules: Default::default(),
        agent_commands,
    }
}

// One argument per dependency a chat session gets; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn chat_deps(
    shell: Arc<ShellSessions>,
    gate_base: GateEnv,
    settings: Arc<SettingsHandle>,
    commands_doc: String,
    todo_store: TodoStore,
    stop_hook: Arc<dyn StopHook>,
    skill_contexts: Arc<SubAgentContexts>,
    skills: Arc<SkillStore>,
    (workspaces, mcp): (Workspaces, McpHub),
    hooks: Arc<crate::hooks::Hooks>,
    custom: Arc<SessionCommands>,
) -> DepsFactory {
    let commands_doc: Arc<str> = commands_doc.into();
    Arc::new(move |cwd, id, client_env, own_mcp| {
        // The skills this session may use include its project's (listed in the prompt).
        if cwd.is_absolute() {
            skills.add_project_cwd(cwd);
        }
        let mut workspace = cwd
            .is_absolute()
            .then(|| bind(&workspaces, &mcp, cwd, client_env.clone()));
        let root = workspace.as_ref().map(|w| w.root.clone());
        // The servers the opening client gave this session alone (none: nothing starts).
        let mut open_notices = Vec::new();
        if let Some(bound) = workspace.as_mut()
            && (!own_mcp.servers.is_empty() || own_mcp.strict)
        {
            let (own, notices) =
                crate::session_mcp::start(&mcp, id, (cwd, root.as_deref()), client_env, own_mcp);
            bound.own = own;
            open_notices = notices;
        }
        let own_servers = workspace
            .as_ref()
            .and_then(|w| w.own.as_ref())
            .map(|o| o.session.clone());
        SessionDeps {
            shell: shell.clone(),
            providers: Arc::new(crate::agent::session::LlmProviders),
            settings: snapshot(&settings),
            // Fixed at the session's first turn (byte-identical after, for the prompt cache);
            // each turn's note says what fits or changed since.
            system_prompt: Arc::new(MainPrompt {
                cwd: cwd.to_path_buf(),
                root: root.clone(),
                own_servers: own_servers.clone(),
                commands_doc: commands_doc.clone(),
                session_sections: project_instructions(&gate_base, cwd, workspace.as_ref(), id),
                skills: skills.clone(),
                mcp: mcp.clone(),
                settings: settings.clone(),
                custom: Some(custom.catalog.clone()),
            }),
            limits: RunnerLimits::default(),
            // The shell session a chat runs its commands in is named by the chat's id.
            turn_guard: Some(Arc::new(TodoGuard::new(todo_store.clone(), id))),
            stop_hook: Some(stop_hook.clone()),
            subagent_context: Some(skill_contexts.open(id)),
            gate_env: Some(for_workspace(&gate_base, &mcp, (root, own_servers))),
            workspace,
            hooks: Some(hooks.clone()),
            custom: Some(custom.clone()),
            open_notices,
            own_mcp: own_mcp.clone(),
        }
    })
}

/// How hooks name an `mcp:` command: its server, tool and mapped arguments, looked up among the
/// session's own servers, the caller's workspace's and the user's.
fn mcp_tool_lookup(mcp: &McpHub) -> crate::hooks::names::McpLookup {
    let mcp = mcp.clone();
    Arc::new(move |root, session, command, argv| mcp.tool_call_of(root, session, command, argv))
}

/// The prompt's `# Project instructions` for a session opened in `cwd`; the session's workspace
/// remembers what it holds (for `/memory`, and so that nested files come once). Instruction
/// files are text for the model: they grant no permission.
fn project_instructions(
    gate_base: &GateEnv,
    cwd: &std::path::Path,
    workspace: Option<&crate::workspace::WorkspaceBinding>,
    session: &str,
) -> String {
    use crate::workspace::instructions;
    let Some(workspace) = workspace else {
        return String::new();
    };
    let places = instructions::Places {
        root: workspace.root.clone(),
        home: Some(gate_base.home.clone()).filter(|h| h != std::path::Path::new("/")),
        synapse_home: Some(gate_base.synapse_home.clone()),
    };
    let loaded = instructions::load(&places, cwd);
    workspace
        .instructions
        .record_prompt(session, places, &loaded);
    instructions::section(&loaded.files)
}

/// A reader of the live settings (a stamp check, and a re-read when the file changed).
fn snapshot(settings: &Arc<SettingsHandle>) -> Arc<dyn Fn() -> Settings + Send + Sync> {
    let current = settings.clone();
    Arc::new(move || (*current.current()).clone())
}

/// A reader of one live setting that copies nothing else (read after every turn).
fn reader<T: 'static>(
    settings: &Arc<SettingsHandle>,
    field: fn(&Settings) -> T,
) -> Arc<dyn Fn() -> T + Send + Sync> {
    let current = settings.clone();
    Arc::new(move || field(&current.current()))
}

/// The user's home (`~` in commands, rules and hook sources); `/` when `HOME` is unset.
fn user_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/".into())
}
