//! `synapse run "<prompt>"` (alias `-p`): one non-interactive turn. The final answer goes to
//! stdout; tool activity to stderr (`--quiet` hides it); `--output-format json` prints one
//! result object and `stream-json` every event as a JSON line. Never reads stdin unless the
//! prompt is `-`. Ctrl-C cancels the turn in the daemon.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, ValueEnum};
use synapse_shared::paths::Paths;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ApprovalAnswer, CancelTurn, ClientMessage, UsageUpdate};

use crate::attach::{Attached, OpenOptions};
use crate::render::events::{event_json, tool_line};

/// Exit status when the turn was cancelled (as a shell reports SIGINT).
const EXIT_CANCELLED: u8 = 130;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task for the agent; `-` reads it from stdin.
    pub prompt: Option<String>,
    /// The task (same as the positional prompt, as in `claude -p`).
    #[arg(
        short = 'p',
        long = "print",
        value_name = "PROMPT",
        conflicts_with = "prompt"
    )]
    pub print: Option<String>,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// Do not print tool activity on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Model for this session.
    #[arg(long)]
    pub model: Option<String>,
    /// Continue the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub continue_latest: bool,
    /// Allow what the session asks approval for (without it, every request is denied: nobody
    /// is there to answer). Deny rules and read-only mode still hold.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Allow commands matching PATTERN for this run without asking (`git push:*`, `npm run *`,
    /// `mcp:fs:write_file`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// What the agent may do without asking: auto (default), ask, read-only or yolo.
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<super::chat::PermissionMode>,
}

pub async fn run(paths: Paths, args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = prompt_text(args.prompt.clone().or(args.print.clone()))?;
    let channel = crate::connect::connect(&paths).await?;
    let options = OpenOptions {
        model: args.model.clone(),
        resume_id: args.resume.clone(),
        resume_latest: args.continue_latest,
        permission_mode: args.permission_mode.map(|m| m.wire().to_string()),
        allow: args.allow.clone(),
        non_interactive: true,
        approve_all: args.yes,
    };
    let mut attached = Attached::open(channel, &options).await?;
    let session_id = attached.opened.session_id.clone();
    for warning in &attached.opened.warnings {
        eprintln!("warning: {warning}");
    }
    attached.input(prompt).await?;
    let cancel = attached.sender();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel
                .send(ClientMessage {
                    kind: Some(Out::Cancel(CancelTurn {})),
                })
                .await;
        }
    });

    let mut stdout = std::io::stdout().lock();
    let mut errors: Vec<String> = Vec::new();
    while let Some(event) = attached.events.message().await? {
        if args.output_format == OutputFormat::StreamJson {
            writeln!(stdout, "{}", event_json(&event, &session_id))?;
            stdout.flush()?;
        }
        let Some(kind) = event.kind else { continue };
        match kind {
            Ev::ToolFinished(t) if !args.quiet && args.output_format == OutputFormat::Text => {
                eprintln!("{}", tool_line(&t.command, t.exit_code));
            }
            Ev::Retrying(r) if !args.quiet => eprintln!(
                "{} — retrying, attempt {}/{} in {:.1}s",
                r.reason,
                r.attempt,
                r.max_attempts,
                r.delay_ms as f64 / 1000.0,
            ),
            Ev::Error(e) => {
                eprintln!("error: {}", e.message);
                errors.push(e.message);
            }
            // Denied commands and problems in the permission rules: always said, even with
            // --quiet, since they change what the run could do.
            Ev::Notice(n) if args.output_format == OutputFormat::Text => {
                eprintln!("synapse: {}", n.text)
            }
            Ev::PermissionMode(m) if m.mode == "yolo" && !args.quiet => {
                eprintln!("synapse: permission mode yolo: every command runs, unsandboxed")
            }
            Ev::Approval(a) => {
                let decision = if args.yes { "yes" } else { "no" };
                if args.yes {
                    eprintln!("allowed (--yes): {}", a.title);
                } else {
                    eprintln!("denied (non-interactive run; --yes allows it): {}", a.title);
                }
                attached
                    .send(Out::Approval(ApprovalAnswer {
                        request_id: a.request_id,
                        decision: decision.to_string(),
                    }))
                    .await?;
            }
            Ev::TurnFinished(done) => {
                let ok = done.reason == "completed";
                match args.output_format {
                    OutputFormat::Text => {
                        if !done.final_text.is_empty() {
                            let text = crate::render::safe_text::strip_controls(&done.final_text);
                            writeln!(stdout, "{}", text.trim_end())?;
                        }
                        if !ok {
                            eprintln!("synapse: {}", done.message);
                        }
                    }
                    OutputFormat::Json => {
                        let usage = done.usage.unwrap_or_default();
                        let out = serde_json::json!({
                            "result": done.final_text,
                            "is_error": !ok,
                            "stop_reason": done.reason,
                            "error": (!ok).then_some(&done.message),
                            "session_id": session_id,
                            "turn": done.turn,
                            "usage": usage_json(&usage),
                        });
                        writeln!(stdout, "{}", serde_json::to_string_pretty(&out)?)?;
                    }
                    OutputFormat::StreamJson => {}
                }
                stdout.flush()?;
                return Ok(match done.reason.as_str() {
                    "completed" => ExitCode::SUCCESS,
                    "cancelled" => ExitCode::from(EXIT_CANCELLED),
                    _ => ExitCode::FAILURE,
                });
            }
            _ => {}
        }
    }
    bail!(
        "the daemon closed the session before the turn finished{}",
        errors.last().map(|e| format!(": {e}")).unwrap_or_default()
    )
}

fn prompt_text(prompt: Option<String>) -> anyhow::Result<String> {
    match prompt.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            if text.trim().is_empty() {
                bail!("the prompt read from stdin is empty");
            }
            Ok(text)
        }
        Some(p) if !p.trim().is_empty() => Ok(p.to_string()),
        _ if !std::io::stdin().is_terminal() => {
            bail!("no prompt given: pass it as an argument, or `-` to read it from stdin")
        }
        _ => bail!(
            "no prompt given: synapse run \"<what to do>\" (or `synapse chat` for a conversation)"
        ),
    }
}

pub fn usage_json(u: &UsageUpdate) -> serde_json::Value {
    serde_json::json!({
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation_input_tokens": u.cache_creation_tokens,
    })
}
