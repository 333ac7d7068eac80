//! The router's in-process path for `mcp:<server>:<tool>`: a simple command goes straight to the
//! warm connection, with no process spawned; the result is what the wrapper would print.

use futures::future::BoxFuture;

use super::McpHub;
use synapse_command::{CallContext, CommandOutput, ExtensionShortcut};

/// Exit status of a cancelled call (as for a command killed by SIGINT).
const EXIT_CANCELLED: i32 = 130;

/// Answers for the calling session's workspace: its project's servers, then the user's.
pub struct McpShortcut(pub McpHub);

impl ExtensionShortcut for McpShortcut {
    fn prefix(&self) -> &'static str {
        "mcp:"
    }

    fn run<'a>(
        &'a self,
        name: &'a str,
        args: Vec<String>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Option<CommandOutput>> {
        Box::pin(async move {
            let workspace = ctx.workspace.as_deref();
            let call = async {
                match self.0.call_command(&ctx, name, &args).await {
                    Some(out) => Some(out),
                    // Not a tool: `mcp:<server>:resources` / `mcp:<server>:read <uri>`.
                    None => match resource_query(name, &args)? {
                        Ok((server, query)) => Some(
                            self.0
                                .serving(workspace, ctx.session.as_deref(), server)
                                .query(server, query)
                                .await,
                        ),
                        Err(usage) => Some(super::result::McpCallOutput::error(2, usage)),
                    },
                }
            };
            let out = tokio::select! {
                out = call => out?,
                _ = ctx.cancel.cancelled() => {
                    return Some(CommandOutput::failure(format!("{name}: cancelled"), EXIT_CANCELLED));
                }
            };
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            if !out.stderr.is_empty() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&String::from_utf8_lossy(&out.stderr));
            }
            Some(if out.exit_code == 0 {
                CommandOutput::success(text)
            } else {
                CommandOutput::failure(text, out.exit_code)
            })
        })
    }
}

/// `mcp:<server>:resources` and `mcp:<server>:read <uri>` (when no tool has that name):
/// `None` for any other word; `Err` is a usage message.
fn resource_query<'n>(
    name: &'n str,
    args: &[String],
) -> Option<Result<(&'n str, super::resources::Query), String>> {
    let rest = name.strip_prefix("mcp:")?;
    let (server, verb) = rest.rsplit_once(':')?;
    match (verb, args) {
        ("resources", []) => Some(Ok((server, super::resources::Query::Resources))),
        ("read", [uri]) => Some(Ok((server, super::resources::Query::Read(uri.clone())))),
        ("read", _) => Some(Err(format!(
            "usage: {name} <uri>  (list them with mcp:{server}:resources)"
        ))),
        ("resources", _) => Some(Err(format!("usage: {name}  (takes no arguments)"))),
        _ => None,
    }
}
