//! `todo list|add|start|done|clear`: the agent's task list for the session it runs in. Each
//! call loads the list from [`TodoStore`], applies one edit and saves it, then prints the whole
//! list, so the user sees it change in the tool output.

use futures::future::BoxFuture;

use super::list::TodoList;
use super::store::TodoStore;
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

pub static SPEC: CommandSpec = CommandSpec {
    name: "todo",
    usage: "todo list | add \"<item>\"... | start N | done N... | clear",
    summary: "Task list for 3+ step work (add, start, done, list, clear).",
    help: "\
Actions:
  list               show the list (also `todo` alone)
  add \"<item>\"...    append items, one per argument
  start N            mark item N in progress (one item at a time)
  done N...          mark items done
  clear              remove every item

For work with three or more steps: add them, start one before working on it, mark it done
when finished. The list survives a resume; ending a turn with open items brings a reminder.

Examples:
  todo add \"read the failing test\" \"fix the parser\" \"run the suite\"
  todo start 1
  todo done 1",
};

pub struct TodoCommand {
    store: TodoStore,
}

impl TodoCommand {
    pub fn new(store: TodoStore) -> Self {
        Self { store }
    }
}

/// Loads the session's list, applies one action, saves, and shows the list.
fn apply(store: &TodoStore, session: &str, args: &[String]) -> CommandOutput {
    let (action, rest) = match args.split_first() {
        None => ("list", &[][..]),
        Some((a, rest)) => (a.as_str(), rest),
    };
    let mut list = match store.load(session) {
        Ok(l) => l,
        Err(e) => return CommandOutput::failure(format!("todo: {e}"), 1),
    };
    let note = match edit(&mut list, action, rest) {
        Ok(Edit::Unchanged) => return CommandOutput::success(list.render()),
        Ok(Edit::Changed(note)) => note,
        Err(Misuse::Usage(problem)) => return SPEC.usage_error(problem),
        Err(Misuse::Item(e)) => {
            return CommandOutput::failure(format!("todo: {e}\n{}", list.render()), 1);
        }
    };
    if let Err(e) = store.save(session, &list) {
        return CommandOutput::failure(format!("todo: {e}"), 1);
    }
    let mut text = note.map(|n| format!("{n}\n")).unwrap_or_default();
    text.push_str(&list.render());
    CommandOutput::success(text)
}

enum Edit {
    Unchanged,
    /// Saved; an optional line to show above the list.
    Changed(Option<String>),
}

enum Misuse {
    Usage(String),
    Item(super::list::TodoError),
}

fn edit(list: &mut TodoList, action: &str, rest: &[String]) -> Result<Edit, Misuse> {
    let numbers = |rest: &[String]| -> Result<(), Misuse> {
        if rest.is_empty() {
            return Err(Misuse::Usage(format!(
                "`todo {action}` needs an item number"
            )));
        }
        Ok(())
    };
    match action {
        "list" | "ls" if rest.is_empty() => Ok(Edit::Unchanged),
        "add" => {
            if rest.is_empty() {
                return Err(Misuse::Usage("`todo add` needs at least one item".into()));
            }
            list.add(rest).map_err(Misuse::Item)?;
            Ok(Edit::Changed(None))
        }
        "start" => {
            numbers(rest)?;
            let [n] = rest else {
                return Err(Misuse::Usage(
                    "`todo start` takes one item number: only one item is in progress at a time"
                        .into(),
                ));
            };
            let demoted = list.start(n).map_err(Misuse::Item)?;
            Ok(Edit::Changed(demoted.map(|d| {
                format!("(item {d} is no longer in progress; only one item is at a time)")
            })))
        }
        "done" => {
            numbers(rest)?;
            for n in rest {
                list.done(n).map_err(Misuse::Item)?;
            }
            let all_done = list.unfinished().next().is_none();
            Ok(Edit::Changed(
                all_done.then(|| "All items are done.".to_string()),
            ))
        }
        "clear" if rest.is_empty() => {
            list.clear();
            Ok(Edit::Changed(None))
        }
        "list" | "ls" | "clear" => {
            Err(Misuse::Usage(format!("`todo {action}` takes no arguments")))
        }
        other => Err(Misuse::Usage(format!(
            "unknown action {other:?}; use list, add, start, done or clear"
        ))),
    }
}

impl AgentCommand for TodoCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Think
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let session = ctx.session_name().to_string();
            let store = self.store.clone();
            // Small files, but still disk I/O: off the runtime's threads.
            tokio::task::spawn_blocking(move || apply(&store, &session, &args))
                .await
                .unwrap_or_else(|e| CommandOutput::failure(format!("todo: {e}"), 1))
        })
    }
}
