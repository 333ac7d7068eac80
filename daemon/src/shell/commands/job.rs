//! `job start|list|read|kill`: background jobs for work longer than one call's timeout. The
//! jobs themselves live in the session's [`JobTable`](crate::shell::jobs::JobTable).

use futures::future::BoxFuture;

use crate::shell::command::{AgentCommand, CommandContext, CommandOutput, CommandSpec, PromptForm};
use crate::shell::gate::Effect;
use crate::shell::jobs::JobInfo;
use crate::shell::paths::PathResolver;

pub static SPEC: CommandSpec = CommandSpec {
    name: "job",
    usage: "job start <command> | job list | job read <id> | job kill <id>",
    summary: "Background jobs, no timeout: `job start '<cmd>'` prints an id; `job read ID` \
              (new output, exit status); `job list`; `job kill ID`.",
    help: "\
Subcommands:
  start <command>  start <command> (one quoted line) in the background, in the current folder;
                   prints its id at once. Its stdout and stderr go to a log file
  list             every job: id, running or its exit status, run time, command
  read <id>        what the job printed since the last `job read`, and whether it still runs
  kill <id>        stop the job and every process it started

Use it for servers, watchers and builds longer than the command timeout. A job's output is
capped like any result; the whole log can be read with `read <log> --offset N`.

Examples:
  job start 'npm run dev'
  job read 1
  job kill 1",
};

pub struct JobCommand;

impl AgentCommand for JobCommand {
    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn prompt_form(&self) -> PromptForm {
        PromptForm::Brief
    }

    fn effect(&self, args: &[String], _at: &PathResolver<'_>) -> Effect {
        // `start` is judged as the command line it runs (see `GateAction::shell_line`); the
        // others only look at or stop this session's own jobs.
        match args.first().map(String::as_str) {
            Some("list" | "read" | "kill") => Effect::ReadOnly,
            _ => Effect::Other,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let Some((sub, rest)) = args.split_first() else {
                return SPEC.usage_error("missing subcommand (start, list, read or kill)");
            };
            match sub.as_str() {
                "start" => start(ctx, rest),
                "list" if rest.is_empty() => list(ctx),
                "read" => match job_id(rest) {
                    Ok(id) => read(ctx, id),
                    Err(e) => e,
                },
                "kill" => match job_id(rest) {
                    Ok(id) => match ctx.jobs().kill(id).await {
                        Ok(info) => CommandOutput::success(format!("{}\n", describe(&info))),
                        Err(e) => CommandOutput::failure(e.to_string(), 1),
                    },
                    Err(e) => e,
                },
                "list" => SPEC.usage_error("`job list` takes no arguments"),
                other => SPEC.usage_error(format!(
                    "unknown subcommand {other:?}; expected start, list, read or kill"
                )),
            }
        })
    }
}

/// The command line `job start` runs: one word as typed, several re-quoted as given.
pub fn start_line(words: &[String]) -> Option<String> {
    match words {
        [] => None,
        [one] => Some(one.clone()),
        many => shlex::try_join(many.iter().map(String::as_str)).ok(),
    }
}

fn start(ctx: &mut CommandContext<'_>, words: &[String]) -> CommandOutput {
    let Some(line) = start_line(words).filter(|l| !l.trim().is_empty()) else {
        return SPEC.usage_error("`job start` needs the command to run, e.g. job start 'make all'");
    };
    let cwd = ctx.cwd().to_path_buf();
    match ctx.jobs().start(ctx.shell_spec(), &cwd, &line) {
        Ok(info) => CommandOutput::success(format!(
            "started job {} in the background: {line}\noutput goes to {}; check on it with \
             `job read {}`, stop it with `job kill {}`\n",
            info.id,
            info.log.display(),
            info.id,
            info.id
        )),
        Err(e) => CommandOutput::failure(e.to_string(), 1),
    }
}

fn list(ctx: &CommandContext<'_>) -> CommandOutput {
    let jobs = ctx.jobs().list();
    if jobs.is_empty() {
        return CommandOutput::success("no background jobs in this session\n");
    }
    let text: String = jobs.iter().map(|j| format!("{}\n", describe(j))).collect();
    CommandOutput::success(text)
}

fn read(ctx: &CommandContext<'_>, id: u32) -> CommandOutput {
    match ctx.jobs().read_new(id, ctx.output_cap_chars()) {
        Ok(out) => {
            let mut text = out.text;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            if text.is_empty() {
                text.push_str("(no new output)\n");
            }
            text.push_str(&format!("[{}]\n", describe(&out.info)));
            CommandOutput::success(text)
        }
        Err(e) => CommandOutput::failure(e.to_string(), 1),
    }
}

fn job_id(words: &[String]) -> Result<u32, CommandOutput> {
    match words {
        [one] => one
            .trim_start_matches('%')
            .parse()
            .map_err(|_| SPEC.usage_error(format!("expected a job id such as 1 (got {one:?})"))),
        _ => Err(SPEC.usage_error("expected one job id, e.g. job read 1")),
    }
}

/// `job 1: running for 12 s: make all` / `job 1: exited with status 0 after 3 s: …`.
fn describe(info: &JobInfo) -> String {
    let secs = info.elapsed.as_secs();
    let state = match info.exit_code {
        None => format!("running for {secs} s"),
        Some(_) if info.killed => format!("killed after {secs} s"),
        Some(code) => format!("exited with status {code} after {secs} s"),
    };
    format!("job {}: {state}: {}", info.id, info.command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_takes_one_line_or_requotes_words() {
        assert_eq!(
            start_line(&["sleep 1; echo hi".into()]).as_deref(),
            Some("sleep 1; echo hi")
        );
        assert_eq!(
            start_line(&["echo".into(), "a b".into()]).as_deref(),
            Some("echo 'a b'")
        );
        assert_eq!(start_line(&[]), None);
    }
}
