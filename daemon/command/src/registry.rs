//! [`CommandRegistry`]: the agent shell commands by name — the one list the router, the shell
//! functions, the permission engine ([`CommandRegistry::agent_commands`]) and the system prompt
//! read.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::command::{AgentCommand, CommandFamily, CommandSpec, ExtensionShortcut, PromptForm};

/// Told what a call changed on disk, before its result returns: the files an agent command
/// wrote (`Some(paths)`), or that a shell line ended (`None`: whatever it wrote is on disk now).
/// The skill store uses it so a written script's `skill:` command exists at once.
pub type ChangeListener = Arc<
    dyn Fn(Option<Arc<[std::path::PathBuf]>>) -> futures::future::BoxFuture<'static, ()>
        + Send
        + Sync,
>;

/// The agent shell commands by name.
#[derive(Clone, Default)]
pub struct CommandRegistry {
    commands: BTreeMap<&'static str, Arc<dyn AgentCommand>>,
    shortcuts: Vec<Arc<dyn ExtensionShortcut>>,
    families: Vec<Arc<dyn CommandFamily>>,
    /// Shared by every clone: listeners join after the registry is handed out.
    listeners: Arc<parking_lot::RwLock<Vec<ChangeListener>>>,
}

impl CommandRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a command under its spec's name.
    pub fn register(&mut self, command: Arc<dyn AgentCommand>) -> &mut Self {
        self.commands.insert(command.spec().name, command);
        self
    }

    /// Adds an in-process short-cut for a family of extension commands.
    pub fn register_shortcut(&mut self, shortcut: Arc<dyn ExtensionShortcut>) -> &mut Self {
        self.shortcuts.push(shortcut);
        self
    }

    /// Adds a listener told of what each call changed ([`ChangeListener`]).
    pub fn on_change(&self, listener: ChangeListener) {
        self.listeners.write().push(listener);
    }

    /// Whether anyone listens for changes.
    pub fn has_change_listeners(&self) -> bool {
        !self.listeners.read().is_empty()
    }

    /// Tells the listeners, one after another.
    pub async fn changed(&self, written: Option<Vec<std::path::PathBuf>>) {
        let listeners = self.listeners.read().clone();
        let written: Option<Arc<[std::path::PathBuf]>> = written.map(Into::into);
        for listener in listeners {
            listener(written.clone()).await;
        }
    }

    /// The short-cut whose prefix `name` starts with.
    pub fn shortcut_for(&self, name: &str) -> Option<&Arc<dyn ExtensionShortcut>> {
        self.shortcuts
            .iter()
            .find(|s| name.starts_with(s.prefix()) && name.len() > s.prefix().len())
    }

    /// Adds a family of commands known only by the shape of their names.
    pub fn register_family(&mut self, family: Arc<dyn CommandFamily>) -> &mut Self {
        self.families.push(family);
        self
    }

    /// The registered command `name`, else a family's.
    pub fn get(&self, name: &str) -> Option<Arc<dyn AgentCommand>> {
        self.commands
            .get(name)
            .cloned()
            .or_else(|| self.families.iter().find_map(|f| f.command(name)))
    }

    /// Whether `name` is a registered command or one of a family's.
    pub fn contains(&self, name: &str) -> bool {
        self.commands.contains_key(name) || self.families.iter().any(|f| f.command(name).is_some())
    }

    /// The names of every command a session shell starting in `dir` defines as a function:
    /// the registered commands and the families' names for that folder.
    pub fn function_names(&self, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = self.commands.keys().map(|n| n.to_string()).collect();
        for family in &self.families {
            names.extend(
                family
                    .names(dir)
                    .into_iter()
                    .filter(|n| !self.commands.contains_key(n.as_str())),
            );
        }
        names
    }

    /// The specs of the registered commands, by name.
    pub fn specs(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.commands.values().map(|c| c.spec())
    }

    /// The registered commands the permission engine takes for the agent's own (every one but
    /// the launchers): the one list of agent command names it judges lines by.
    pub fn agent_commands(&self) -> synapse_permissions::AgentCommands {
        synapse_permissions::AgentCommands::new(
            self.commands
                .iter()
                .filter(|(_, c)| !c.launches())
                .map(|(name, _)| *name),
        )
    }

    /// The system-prompt section documenting every registered command.
    pub fn system_prompt_section(&self) -> String {
        self.system_prompt_section_where(|_| true)
    }

    /// The system-prompt section documenting the registered commands `keep` accepts (a
    /// sub-agent is not told about the commands it may not run).
    pub fn system_prompt_section_where(&self, keep: impl Fn(&CommandSpec) -> bool) -> String {
        self.system_prompt_section_of(|command| keep(command.spec()).then(|| command.prompt_form()))
    }

    /// The system-prompt section documenting the registered commands in the form `form` gives
    /// each (`None`: left out), judged by the command itself (a read-only sub-agent is told
    /// only about the commands that [`AgentCommand::reads_only`]).
    pub fn system_prompt_section_of(
        &self,
        form: impl Fn(&dyn AgentCommand) -> Option<PromptForm>,
    ) -> String {
        let mut out = String::from(
            "## Agent shell commands\n\nThese are commands of your shell: they work in pipes, lists, \
             `$(…)`, redirects and loops, bash expands their words (`'\\n'` stays literal), and \
             they win over same-named programs; `read` with bash options or a variable name is \
             bash's builtin. Each answers `-h` and `--help`.\n\n",
        );
        let mut brief = String::new();
        for command in self.commands.values() {
            let spec = command.spec();
            let Some(form) = form(command.as_ref()) else {
                continue;
            };
            match form {
                PromptForm::Full => {
                    out.push_str(&spec.prompt_section());
                    out.push('\n');
                }
                PromptForm::Brief => {
                    brief.push_str(&format!("- `{}`: {}\n", spec.name, spec.summary));
                }
                PromptForm::Usage => {
                    brief.push_str(&format!("- `{}`: {}\n", spec.usage, spec.summary));
                }
            }
        }
        if !brief.is_empty() {
            out.push_str("### More commands\n");
            out.push_str(&brief);
        }
        out
    }
}
