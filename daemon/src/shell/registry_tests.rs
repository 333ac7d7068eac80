//! The command registry against the permission engine: every registered agent command is
//! known to it as the agent's own, whatever its name, because the registry is the one list.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};
use synapse_permissions::{Action, Context, Decision, Mode, RuleSet, decide};

/// A command no list anywhere names: only the registry knows it.
struct Note;

static NOTE: CommandSpec = CommandSpec {
    name: "note",
    usage: "note <text>",
    summary: "Keeps a note.",
    help: "",
};

impl AgentCommand for Note {
    fn spec(&self) -> &'static CommandSpec {
        &NOTE
    }

    fn run<'a>(
        &'a self,
        _: &'a mut CommandContext<'_>,
        _: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async { CommandOutput::success("") })
    }
}

fn verdict(commands: &synapse_permissions::AgentCommands, line: &str) -> Decision {
    let (rules, problems) = RuleSet::from_json(
        &serde_json::json!({"bash": {"deny": ["rm:*"]}}),
        "settings.json",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let ctx = Context {
        cwd: Path::new("/w"),
        home: Path::new("/h"),
        synapse_home: Path::new("/h/.synapse"),
        temp_dir: Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &|_| false,
        agent_commands: commands,
    };
    decide(&Action::Native { command: line }, Mode::Auto, &rules, &ctx)
}

#[test]
fn the_permission_engine_knows_every_registered_command_but_the_launchers() {
    let mut registry = super::builtin_registry();
    registry.register(Arc::new(Note));
    let known = registry.agent_commands();
    for spec in registry.specs() {
        let launcher = registry.get(spec.name).is_some_and(|c| c.launches());
        assert_eq!(known.contains(spec.name), !launcher, "{}", spec.name);
    }
    assert!(!known.contains("bash") && !known.contains("job"));

    // A new command's words are its own: under a deny rule on `rm`, a note that mentions
    // rm runs in a list, while the same words after an unknown program may start `rm`.
    let line = "head -3 a.txt; note rm the stale logs | wc -l";
    assert!(
        matches!(verdict(&known, line), Decision::Allow { .. }),
        "{:?}",
        verdict(&known, line)
    );
    let unknown = super::builtin_registry().agent_commands();
    assert!(
        !matches!(verdict(&unknown, line), Decision::Allow { .. }),
        "a program the registry does not know may start what its words name: {:?}",
        verdict(&unknown, line)
    );
}
