//! `bash <command>`: run a command line in the session's persistent shell explicitly.

use futures::future::BoxFuture;

use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

pub static SPEC: CommandSpec = CommandSpec {
    name: "bash",
    usage: "bash [--timeout SECS] <command>",
    summary: "Run <command> in the session's persistent shell, exactly as if typed.",
    help: "\
Arguments:
  <command>       one quoted command line; it may use pipes, redirects, && and the like
  --timeout SECS  allow up to SECS seconds (default 120, at most 600)

Only needed to be explicit, e.g. for a program named like an agent command:
  bash 'read -r line < notes.md; echo \"$line\"'
With options (bash -c '…') or an existing script file, the real bash program runs, as in a
terminal. --timeout also works inside pipes, lists and $(…).

Examples:
  bash 'ls -la | head'
  bash --timeout 300 \"make test 2>&1 | tail -20\"",
};

pub struct BashCommand;

impl AgentCommand for BashCommand {
    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn launches(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let (timeout, args) = match args.split_first() {
                Some((flag, rest)) if flag == "--timeout" => {
                    let Some((secs, rest)) = rest.split_first() else {
                        return SPEC.usage_error("--timeout needs a number of seconds");
                    };
                    match ctx.timeouts().parse(secs) {
                        Ok(t) => (Some(t), rest.to_vec()),
                        Err(e) => return SPEC.usage_error(e),
                    }
                }
                _ => (None, args),
            };
            let line = match args.as_slice() {
                [] => return SPEC.usage_error("missing <command>"),
                [one] if !one.starts_with('-') && !ctx.resolve(one).is_file() => one.clone(),
                // The real bash program, with the words re-quoted as they were given.
                words => {
                    let quoted: Result<Vec<String>, _> = words
                        .iter()
                        .map(|w| shlex::try_quote(w).map(|q| q.into_owned()))
                        .collect();
                    match quoted {
                        Ok(q) => format!("bash {}", q.join(" ")),
                        Err(e) => return SPEC.usage_error(e),
                    }
                }
            };
            match timeout {
                Some(t) => ctx.run_native_for(&line, t).await,
                None => ctx.run_native(&line).await,
            }
        })
    }
}
