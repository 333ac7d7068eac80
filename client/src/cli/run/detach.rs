//! `synapse run --detach "<task>"`: sends the task, waits only until the daemon says the turn
//! started without a front end, prints the session id (the one line on stdout) and returns. The
//! turn goes on in the daemon; `synapse attach ID` shows it.

use std::process::ExitCode;

use anyhow::bail;
use synapse_session::{Event, Input};

use super::{InputFormat, OutputFormat, RunArgs};
use crate::session::{Incoming, Session};

/// The flags that make no sense without a client staying for the answer.
pub(super) fn refuse_with(args: &RunArgs) -> anyhow::Result<()> {
    if args.input_format == InputFormat::StreamJson {
        bail!(
            "--detach runs one task and leaves: it cannot read --input-format stream-json; \
             give the task as the argument"
        );
    }
    if args.output_format != OutputFormat::Text {
        bail!(
            "--detach prints only the session id: drop --output-format, and read the result \
             with `synapse attach <id>` or `synapse sessions list`"
        );
    }
    Ok(())
}

/// Starts `task` as a detached turn and prints the session id.
pub(super) async fn start(mut session: Session, task: String) -> anyhow::Result<ExitCode> {
    let id = session.id().to_string();
    session.input(Input::text(task)).await?;
    loop {
        match session.next().await {
            Incoming::Event(Event::Notice(text))
                if text.starts_with(synapse_session::DETACHED_NOTICE) =>
            {
                break;
            }
            Incoming::Event(Event::Error(message)) => bail!("session {id}: {message}"),
            Incoming::Event(_) => {}
            Incoming::Closed(closed) => {
                bail!("the daemon closed session {id} before the turn started: {closed}")
            }
        }
    }
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}
