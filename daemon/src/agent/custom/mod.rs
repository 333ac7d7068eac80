//! Claude Code's custom slash commands (`commands/*.md`) and custom sub-agents (`agents/*.md`),
//! read for the folder a session works in.
//!
//! Flow: [`CustomCatalog::load`] scans the folders ([`files`]: project `.synapse/` and `.claude/`
//! in a trusted, pinned folder; `$SYNAPSE_HOME/` and `~/.claude/`), reads each file
//! ([`frontmatter`], [`command`], [`agent_def`]) and keeps the first of each name. A file that
//! does not parse is a problem naming it and never hides the others.
//! - A chat turn whose text is `/<name> args` for one of the commands is expanded in the daemon
//!   ([`expand`], called by `ChatSession::run_turn` through
//!   `daemon/src/agent/session/custom_command.rs`), so `synapse run "/name args"` and the REPL
//!   send the same message. Built-in REPL commands win over a custom command (the REPL handles
//!   them before anything is sent), then user-invocable skills, then custom commands.
//! - Each agent is the command `task:<name>` (`daemon/src/agent/custom_task.rs`), its `tools`
//!   mapped onto the sub-agent's policy ([`tools`]); the main prompt lists them
//!   ([`CustomCatalog::agents_section`]). A built-in task (`task:general`, `task:explore`) wins
//!   over an agent of the same name, with a problem saying so.
//!
//! Nothing is cached: the folders are small and read when a turn starts or a command runs, so an
//! edit counts at once.

pub mod agent_def;
pub mod command;
pub mod expand;
pub mod files;
pub mod frontmatter;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_def::CustomAgent;
use command::CustomCommand;
use files::{Held, Kind, Places};

/// Characters of an agent's description in the main prompt.
const PROMPT_DESCRIPTION_MAX_CHARS: usize = 400;
/// Agents listed in the main prompt at most.
const PROMPT_AGENTS_MAX: usize = 50;

/// The model a command's or agent's `model` field asks for: `None` for Claude Code's aliases
/// (`inherit`, `sonnet`, `opus`, `haiku`), which name no model of the session's provider, so the
/// session's model is used; any other value is a model name, used as written.
pub fn explicit_model(model: Option<&str>) -> Option<String> {
    let model = model?.trim();
    let alias = ["inherit", "sonnet", "opus", "haiku", "default"]
        .iter()
        .any(|a| a.eq_ignore_ascii_case(model));
    (!model.is_empty() && !alias).then(|| model.to_string())
}

/// Whether a session in a folder (the first argument) has a user-invocable skill of a name.
pub type SkillNameCheck = dyn Fn(&Path, &str) -> bool + Send + Sync;

/// What a chat session expands `/<name>` with: the catalog, and whether a user-invocable skill
/// a session in a folder sees has the name (the skill wins).
pub struct SessionCommands {
    pub catalog: Arc<CustomCatalog>,
    pub skill_names: Arc<SkillNameCheck>,
}

impl SessionCommands {
    /// Whether a session in `cwd` has a user-invocable skill `name`.
    pub fn skill_wins(&self, cwd: &Path, name: &str) -> bool {
        (self.skill_names)(cwd, name)
    }
}

/// The custom commands and agents of every folder.
#[derive(Debug, Clone)]
pub struct CustomCatalog {
    places: Places,
    /// Names of the built-in task commands (`general` for `task:general`).
    reserved: Vec<String>,
}

/// What counts for one folder.
#[derive(Debug, Clone, Default)]
pub struct CustomSet {
    /// By name.
    pub commands: Vec<CustomCommand>,
    /// By name.
    pub agents: Vec<CustomAgent>,
    /// Project files that wait for `synapse trust`: the name they would have, and why.
    pub held_commands: Vec<(String, Held)>,
    pub held_agents: Vec<(String, Held)>,
    /// Files that could not be used, each naming the file.
    pub problems: Vec<String>,
}

/// A name looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T> {
    Found(T),
    /// A project file of that name waits for trust: why.
    Held(String),
    Missing,
}

impl CustomCatalog {
    /// `reserved`: the built-in task commands' names after `task:`.
    pub fn new(places: Places, reserved: Vec<String>) -> Self {
        Self { places, reserved }
    }

    pub fn places(&self) -> &Places {
        &self.places
    }

    /// The commands and agents for a session in `dir`.
    pub fn load(&self, dir: &Path) -> CustomSet {
        let mut set = CustomSet::default();
        let commands = self.places.scan(dir, Kind::Commands);
        set.problems.extend(commands.problems);
        for found in &commands.found {
            match CustomCommand::from_found(found) {
                Ok(c)
                    if set
                        .commands
                        .iter()
                        .any(|o| o.name.eq_ignore_ascii_case(&c.name)) => {}
                Ok(c) => set.commands.push(c),
                Err(e) => set.problems.push(e),
            }
        }
        set.held_commands = commands
            .held
            .into_iter()
            .filter_map(|h| Some((command::name_of(&h.rel).ok()?, h)))
            .collect();
        let agents = self.places.scan(dir, Kind::Agents);
        set.problems.extend(agents.problems);
        for found in &agents.found {
            match CustomAgent::from_found(found) {
                Ok(a) if self.reserved.contains(&a.name) => set.problems.push(format!(
                    "{}: `task:{}` is a built-in task command, which stays in force; rename the \
                     agent to use it",
                    a.path.display(),
                    a.name
                )),
                Ok(a) if set.agents.iter().any(|o| o.name == a.name) => {}
                Ok(a) => set.agents.push(a),
                Err(e) => set.problems.push(e),
            }
        }
        set.held_agents = agents
            .held
            .into_iter()
            .filter_map(|h| {
                let stem = h.rel.file_stem()?.to_string_lossy().into_owned();
                Some((stem, h))
            })
            .collect();
        set.commands.sort_by(|a, b| a.name.cmp(&b.name));
        set.agents.sort_by(|a, b| a.name.cmp(&b.name));
        set
    }

    /// The command `/<name>` (case-insensitive) for a session in `dir`.
    pub fn command(&self, dir: &Path, name: &str) -> Lookup<CustomCommand> {
        let set = self.load(dir);
        if let Some(c) = set
            .commands
            .into_iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
        {
            return Lookup::Found(c);
        }
        match set
            .held_commands
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some((_, held)) => Lookup::Held(held.why),
            None => Lookup::Missing,
        }
    }

    /// Why `/<plugin>:<command>` names nothing, when `<plugin>` is an installed Claude Code
    /// plugin (`None` for any other name, which goes to the model as written).
    pub fn unknown_plugin_command(&self, dir: &Path, name: &str) -> Option<String> {
        let (plugin, _) = name.split_once(':')?;
        let home = self.places.home.as_deref()?;
        let scan = synapse_shared::claude_plugins::scan(home, None);
        let found = scan.plugins.iter().find(|p| p.name == plugin)?;
        if !found.enabled {
            return Some(format!(
                "/{name}: the plugin `{}` is disabled; enable it with `synapse plugin enable {}`",
                found.name,
                found.key()
            ));
        }
        let prefix = format!("{plugin}:");
        let known: Vec<String> = self
            .load(dir)
            .commands
            .into_iter()
            .filter(|c| c.name.starts_with(&prefix))
            .map(|c| format!("/{}", c.name))
            .collect();
        let known = if known.is_empty() {
            "it has no commands".to_string()
        } else {
            format!("its commands are {}", known.join(", "))
        };
        Some(format!(
            "/{name}: unknown command: the plugin `{plugin}` has no command `{}` ({known})",
            &name[prefix.len()..]
        ))
    }

    /// The agent `name` for a session in `dir`.
    pub fn agent(&self, dir: &Path, name: &str) -> Lookup<CustomAgent> {
        let set = self.load(dir);
        if let Some(a) = set.agents.into_iter().find(|a| a.name == name) {
            return Lookup::Found(a);
        }
        match set.held_agents.into_iter().find(|(n, _)| n == name) {
            Some((_, held)) => Lookup::Held(held.why),
            None => Lookup::Missing,
        }
    }

    /// The main prompt's list of custom sub-agents for a session in `dir` (empty when none).
    pub fn agents_section(&self, dir: &Path) -> String {
        let set = self.load(dir);
        if set.agents.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Custom sub-agents\n\nThe user's own sub-agents. When a job fits one's description, \
             delegate it: `task:<name> --prompt <task> --description <short label>` (as \
             task:general; `task:<name> -h` shows its tools).\n\n",
        );
        for a in set.agents.iter().take(PROMPT_AGENTS_MAX) {
            let description: String = a
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(PROMPT_DESCRIPTION_MAX_CHARS)
                .collect();
            out.push_str(&format!("- `task:{}` — {description}\n", a.name));
        }
        out
    }

    /// The folders a session in `dir` may attach `@path` files from.
    pub fn file_scope(&self, dir: &Path, cwd: &Path) -> expand::FileScope {
        let mut roots: Vec<PathBuf> = self.places.project_root(dir).into_iter().collect();
        roots.extend(self.places.home.clone());
        expand::FileScope {
            cwd: cwd.to_path_buf(),
            home: self.places.home.clone(),
            roots,
            denied: vec![self.places.synapse_home.clone()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_are_reported_and_never_hide_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let synapse_home = dir.path().join("synapse");
        std::fs::create_dir_all(home.join(".claude/commands")).unwrap();
        std::fs::create_dir_all(synapse_home.join("agents")).unwrap();
        std::fs::write(home.join(".claude/commands/good.md"), "Say hi").unwrap();
        std::fs::write(
            home.join(".claude/commands/bad.md"),
            "---\ndescription: [open\n---\nx\n",
        )
        .unwrap();
        std::fs::write(synapse_home.join("agents/general.md"), "You are general.").unwrap();
        std::fs::write(
            synapse_home.join("agents/reviewer.md"),
            "---\ndescription: Reviews\n  diffs.\n---\nYou review.",
        )
        .unwrap();
        let catalog = CustomCatalog::new(
            Places {
                trust_file: synapse_home.join("trusted_folders.json"),
                synapse_home,
                home: Some(home.clone()),
            },
            vec!["general".into(), "explore".into()],
        );
        let set = catalog.load(&home);
        assert_eq!(set.commands.len(), 1);
        assert_eq!(set.commands[0].name, "good");
        assert!(
            set.problems.iter().any(|p| p.contains("bad.md:")),
            "{set:?}"
        );
        assert!(
            set.problems.iter().any(|p| p.contains("built-in task")),
            "{set:?}"
        );
        assert!(matches!(catalog.command(&home, "GOOD"), Lookup::Found(_)));
        assert_eq!(catalog.agent(&home, "nobody"), Lookup::Missing);
        assert_eq!(
            catalog.agents_section(&home).lines().last(),
            Some("- `task:reviewer` — Reviews diffs.")
        );
    }
}
