//! `job start|list|read|wait|kill`: background jobs for work longer than one call's timeout. The
//! jobs themselves live in the session's [`JobTable`](crate::shell::jobs::JobTable).

use futures::future::BoxFuture;

use std::sync::Arc;
use synapse_command::gate::Effect;
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec, PromptForm};

use crate::shell::jobs::{JobInfo, JobTable};
use crate::shell::process::ShellSpec;
use synapse_command::paths::PathResolver;

pub static SPEC: CommandSpec = CommandSpec {
    name: "job",
    usage: "job start <command> | job list | job read <id> | job wait <id> [--timeout SECS] | \
            job kill <id>",
    summary: "Background jobs, no timeout: `job start '<cmd>'` prints an id; `job read ID` \
              (new output, exit status); `job wait ID [--timeout SECS]` (until it ends); \
              `job list`; `job kill ID`.",
    help: "\
Subcommands:
  start <command>  start <command> (one quoted line) in the background, in the current folder;
                   prints its id at once. Its stdout and stderr go to a log file
  list             every job: id, running or its exit status, run time, command
  read <id>        what the job printed since the last `job read ID`, and whether it still runs
  wait <id> [--timeout SECS]
                   wait until the job ends (at most SECS, default and limit: the call's own
                   timeout), then show it as `job read ID` does; exits with the job's status, or
                   124 when it still runs
  kill <id>        stop the job and every process it started

Use it for servers, watchers and builds longer than the command timeout. A job's output is
capped like any result; the whole log can be read with `read <log> --offset N`.

Examples:
  job start 'sleep 1; echo built'
  job wait 1 --timeout 30
  job start 'python3 -m http.server 8000'
  job read 2
  job kill 2",
};

pub struct JobCommand;

impl AgentCommand for JobCommand {
    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn launches(&self) -> bool {
        true
    }

    fn prompt_form(&self) -> PromptForm {
        PromptForm::Brief
    }

    fn effect(&self, args: &[String], _at: &PathResolver<'_>) -> Effect {
        // `start` is judged as the command line it runs (see `GateAction::shell_line`); the
        // others only look at or stop this session's own jobs.
        match args.first().map(String::as_str) {
            Some("list" | "read" | "wait" | "kill") => Effect::ReadOnly,
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
                return SPEC.usage_error("missing subcommand (start, list, read, wait or kill)");
            };
            let Some(jobs) = ctx.part::<Arc<JobTable>>().cloned() else {
                return CommandOutput::failure(
                    "job: background jobs run only in a session's own shell",
                    1,
                );
            };
            match sub.as_str() {
                "start" => start(ctx, &jobs, rest),
                "list" if rest.is_empty() => list(&jobs),
                "read" => match job_id(rest) {
                    Ok(id) => read(ctx, &jobs, id),
                    Err(e) => e,
                },
                "wait" => wait(ctx, &jobs, rest).await,
                "kill" => match job_id(rest) {
                    Ok(id) => match jobs.kill(id).await {
                        Ok(info) => CommandOutput::success(format!("{}\n", describe(&info))),
                        Err(e) => CommandOutput::failure(e.to_string(), 1),
                    },
                    Err(e) => e,
                },
                "list" => SPEC.usage_error("`job list` takes no arguments"),
                other => SPEC.usage_error(format!(
                    "unknown subcommand {other:?}; expected start, list, read, wait or kill"
                )),
            }
        })
    }
}

pub use synapse_command::gate::start_line;

fn start(ctx: &CommandContext<'_>, jobs: &JobTable, words: &[String]) -> CommandOutput {
    let Some(line) = start_line(words).filter(|l| !l.trim().is_empty()) else {
        return SPEC.usage_error("`job start` needs the command to run, e.g. job start 'make all'");
    };
    let Some(spec) = ctx.part::<ShellSpec>() else {
        return CommandOutput::failure("job: background jobs run only in a session's own shell", 1);
    };
    match jobs.start(spec, ctx.cwd(), &line) {
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

fn list(jobs: &JobTable) -> CommandOutput {
    let jobs = jobs.list();
    if jobs.is_empty() {
        return CommandOutput::success("no background jobs in this session\n");
    }
    let text: String = jobs.iter().map(|j| format!("{}\n", describe(j))).collect();
    CommandOutput::success(text)
}

fn read(ctx: &CommandContext<'_>, jobs: &JobTable, id: u32) -> CommandOutput {
    match jobs.read_new(id, ctx.output_cap_chars()) {
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

/// `job wait ID [--timeout SECS]`: bounded by SECS and by the call's own timeout, so the line
/// ends in time either way.
async fn wait(ctx: &CommandContext<'_>, jobs: &JobTable, words: &[String]) -> CommandOutput {
    let (limit, words) = match words {
        [id, flag, secs] if flag == "--timeout" => match ctx.timeouts().parse(secs) {
            Ok(t) => (Some(t), std::slice::from_ref(id)),
            Err(e) => return SPEC.usage_error(e),
        },
        [flag, secs, id] if flag == "--timeout" => match ctx.timeouts().parse(secs) {
            Ok(t) => (Some(t), std::slice::from_ref(id)),
            Err(e) => return SPEC.usage_error(e),
        },
        _ => (None, words),
    };
    let id = match job_id(words) {
        Ok(id) => id,
        Err(e) => return e,
    };
    // Leave a moment of the call's own time to report.
    let budget = ctx
        .timeout()
        .saturating_sub(std::time::Duration::from_millis(500));
    let limit = limit.map_or(budget, |t| t.min(budget));
    let cancel = ctx.cancel().clone();
    let info = match jobs.wait(id, limit, &cancel).await {
        Ok(info) => info,
        Err(e) => return CommandOutput::failure(e.to_string(), 1),
    };
    let mut out = read(ctx, jobs, id);
    match info.exit_code {
        Some(code) => out.exit_code = code,
        None => {
            out.text.push_str(&format!(
                "job {id} still runs after waiting {:.0} s; `job wait {id}` again or `job kill {id}`\n",
                limit.as_secs_f64()
            ));
            out.exit_code = 124;
        }
    }
    out
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
