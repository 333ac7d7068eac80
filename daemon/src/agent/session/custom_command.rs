//! A turn whose text is `/<name> args` for one of the user's custom commands
//! ([`crate::agent::custom`]) sends the command's expansion instead, whichever client typed it
//! (`synapse run "/name args"` or the REPL). A user-invocable skill of the same name wins: the
//! REPL has already sent the skill's text, which starts with the same `/name`.
//!
//! The command's `` !`…` `` lines run in a shell of their own (closed afterwards), through the
//! session's gate and approver like any command of the agent, so the agent's shell keeps its
//! folder and variables. A command that cannot be used (a project file waiting for trust, a line
//! its `allowed-tools` does not permit) ends the turn with the reason; nothing reaches the model.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::ChatSession;
use crate::agent::custom::expand::{LineRunner, expand};
use crate::agent::custom::{Lookup, explicit_model};
use crate::agent::executor::{BashCall, ToolExecutor};
use crate::agent::shell_executor::ShellToolExecutor;
use synapse_command::ApproverHandle;

/// What a turn's text became.
pub(super) struct Expanded {
    pub text: String,
    /// The model for this one turn (the command's `model`).
    pub model: Option<String>,
}

/// `/<name> rest` → `(name, rest)`, for a name that can be a command's (`/usr/bin/x` is a path).
fn slash_words(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    valid.then_some((name, args.trim()))
}

/// Runs a command's `!` lines in their own shell session.
struct CommandShell<'a> {
    executor: ShellToolExecutor,
    cancel: &'a CancellationToken,
}

impl LineRunner for CommandShell<'_> {
    fn run<'a>(&'a self, line: &'a str) -> BoxFuture<'a, String> {
        Box::pin(async move {
            let call = BashCall {
                command: line.to_string(),
                restart: false,
                hook: Default::default(),
            };
            self.executor
                .execute(call, self.cancel.clone())
                .await
                .output
        })
    }
}

impl ChatSession {
    /// The text to send for `text`, or why the turn cannot run.
    pub(super) async fn expand_custom_command(
        &self,
        text: String,
        cancel: &CancellationToken,
    ) -> Result<Expanded, String> {
        let unchanged = |text: String| Ok(Expanded { text, model: None });
        let (Some(catalog), Some((name, args))) = (&self.deps.custom, slash_words(&text)) else {
            return unchanged(text);
        };
        if catalog.skill_wins(&self.cwd, name) {
            return unchanged(text);
        }
        let command = match catalog.catalog.command(&self.cwd, name) {
            Lookup::Found(command) => command,
            Lookup::Held(why) => return Err(format!("/{name} cannot run: {why}")),
            Lookup::Missing => match catalog.catalog.unknown_plugin_command(&self.cwd, name) {
                Some(why) => return Err(why),
                None => return unchanged(text),
            },
        };
        let shell_name = format!("{}-command", self.id);
        let runner = CommandShell {
            executor: ShellToolExecutor {
                sessions: self.deps.shell.clone(),
                name: shell_name.clone(),
                origin: self.shell_origin(),
                approver: Some(ApproverHandle(self.approver.clone())),
                gate: self.gate.clone().map(crate::agent::gate::handle),
                output_cap: None,
                progress: None,
                asker: None,
                editor: None,
            },
            cancel,
        };
        let scope = catalog.catalog.file_scope(&self.cwd, &self.cwd);
        let expanded = expand(&command, args, &scope, &runner).await;
        if !crate::agent::custom::expand::bang_spans(&command.body).is_empty() {
            self.deps.shell.close(&shell_name).await;
        }
        Ok(Expanded {
            text: expanded?,
            model: explicit_model(command.model.as_deref()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_words_take_command_names_not_paths() {
        assert_eq!(slash_words("/hello-cmd Bob"), Some(("hello-cmd", "Bob")));
        assert_eq!(
            slash_words("/frontend:component  Button big "),
            Some(("frontend:component", "Button big"))
        );
        assert_eq!(slash_words("/usr/bin/env is odd"), None);
        assert_eq!(slash_words("hello"), None);
        assert_eq!(slash_words("/"), None);
    }
}
