//! `synapse run --detach "<task>"`: sends the task, waits only until the daemon says the turn
//! started without a front end, prints the session id (the one line on stdout) and returns. The
//! turn goes on in the daemon; `synapse attach ID` shows it.

use std::process::ExitCode;

use anyhow::bail;
use synapse_shared::proto::chat_event::Kind as Ev;

use super::{InputFormat, OutputFormat, RunArgs};
use crate::attach::Attached;

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
pub(super) async fn start(mut attached: Attached, task: String) -> anyhow::Result<ExitCode> {
    let id = attached.opened.session_id.clone();
    attached.input(task).await?;
    loop {
        let event = match attached.events.message().await {
            Ok(Some(event)) => event,
            Ok(None) => bail!("the daemon closed session {id} before the turn started"),
            Err(status) => bail!("session {id}: {}", status.message()),
        };
        match event.kind {
            Some(Ev::Notice(n)) if n.text.starts_with(synapse_session::DETACHED_NOTICE) => break,
            Some(Ev::Error(e)) => bail!("session {id}: {}", e.message),
            _ => {}
        }
    }
    println!("{id}");
    Ok(ExitCode::SUCCESS)
}
