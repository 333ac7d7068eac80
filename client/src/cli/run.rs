//! `synapse run "<prompt>"` (alias `-p`): one non-interactive turn. The final answer goes to
//! stdout; tool activity, retries and the skill-enhancement report to stderr (`--quiet` hides
//! tool activity); `--output-format json` prints one result object and `stream-json` every event
//! as a JSON line. Nobody can answer questions: approval requests are denied unless `--yes`, and
//! forms MCP servers ask to be filled in are declined with a note on stderr. A failed turn prints
//! nothing on stdout in text mode; in JSON its result is empty, `is_error` true and `error` says
//! `{kind, message, http_status}`. Never reads stdin unless the prompt is `-`. SIGINT cancels
//! the turn and waits for it to stop; SIGTERM and SIGHUP cancel it and exit at once (the daemon
//! also cancels when the stream closes).
//!
//! Exit codes: 0 completed · 1 the client could not run the turn (daemon unreachable or gone,
//! bad arguments) · 3 the model call failed · 4 stopped by a limit (iterations, failing tools)
//! · 5 the reply was cut at the output limit · 130 cancelled (SIGINT) · 129/143 SIGHUP/SIGTERM.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, ValueEnum};
use synapse_shared::paths::Paths;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{
    ApprovalAnswer, CancelTurn, ClientMessage, ElicitationAnswer, ElicitationRequest, TurnFinished,
    UsageUpdate,
};

use crate::attach::{Attached, OpenOptions};
use crate::render::events::{event_json, tool_line};

/// Exit status when the turn was cancelled (as a shell reports SIGINT).
const EXIT_CANCELLED: u8 = 130;
/// Exit status when the model call failed (HTTP error, unreachable server, retries used up).
const EXIT_MODEL_ERROR: u8 = 3;
/// Exit status when a limit stopped the turn (iterations, tool failures in a row).
const EXIT_LIMIT: u8 = 4;
/// Exit status when the reply was cut at the output limit.
const EXIT_TRUNCATED: u8 = 5;

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
    /// is there to answer), an MCP server's sampling requests (its use of the model) included.
    /// Deny rules and read-only mode still hold. Forms MCP servers ask to be filled in are
    /// declined either way: answer them in `synapse chat`.
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
    spawn_signal_handler(attached.sender())?;

    let mut stdout = std::io::stdout().lock();
    // The live tail of a running command: on a terminal only, and never on stdout.
    let live = !args.quiet
        && args.output_format == OutputFormat::Text
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut tail = crate::render::live_tail::LiveTail::new();
    let mut errors: Vec<String> = Vec::new();
    let mut enhance_report: Option<String> = None;
    loop {
        let event = match attached.events.message().await {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(status) => bail!("{}", daemon_stopped(&status, &session_id)),
        };
        if args.output_format == OutputFormat::StreamJson {
            writeln!(stdout, "{}", event_json(&event, &session_id))?;
            stdout.flush()?;
        }
        let Some(kind) = event.kind else { continue };
        match kind {
            Ev::ToolOutput(o) if live => {
                let width = crate::render::live_tail::terminal_width();
                let _ = tail.update(&mut std::io::stderr(), &o.tail, width);
            }
            Ev::ToolFinished(t) if !args.quiet && args.output_format == OutputFormat::Text => {
                if live {
                    let _ = tail.clear(&mut std::io::stderr());
                }
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
            Ev::Elicitation(form) => {
                // Always said, even with --quiet: the server's tool goes on without the input.
                eprintln!("synapse: {}", declined_form_note(&form));
                if args.output_format == OutputFormat::StreamJson {
                    let event = serde_json::json!({
                        "type": "elicitation_declined",
                        "id": form.request_id,
                        "server": form.server,
                        "reason": "non-interactive run",
                    });
                    writeln!(stdout, "{event}")?;
                    stdout.flush()?;
                }
                attached
                    .send(Out::Elicitation(ElicitationAnswer {
                        request_id: form.request_id,
                        action: "decline".to_string(),
                        content_json: String::new(),
                    }))
                    .await?;
            }
            Ev::EnhanceReport(report) => {
                if args.output_format == OutputFormat::Text {
                    eprintln!("skill enhancement: {}", report.text.trim_end());
                }
                enhance_report = Some(report.text);
            }
            Ev::TurnFinished(done) => {
                let ok = done.reason == "completed";
                let failed = done.reason == "error";
                match args.output_format {
                    OutputFormat::Text => {
                        // A failed turn has no answer: stdout stays empty.
                        if !failed && !done.final_text.is_empty() {
                            let text = crate::render::safe_text::strip_controls(&done.final_text);
                            writeln!(stdout, "{}", text.trim_end())?;
                        }
                        if !ok {
                            eprintln!("synapse: {}", failure_line(&done));
                        }
                    }
                    OutputFormat::Json => {
                        let usage = done.usage.clone().unwrap_or_default();
                        let out = serde_json::json!({
                            "result": if failed { "" } else { done.final_text.as_str() },
                            "is_error": !ok,
                            "stop_reason": done.reason,
                            "error": (!ok).then(|| error_json(&done)),
                            "session_id": session_id,
                            "turn": done.turn,
                            "usage": usage_json(&usage),
                            "context_window": (usage.context_window > 0).then(|| serde_json::json!({
                                "tokens": usage.context_window,
                                "used": usage.context_tokens,
                                "source": usage.context_source,
                            })),
                            "skill_enhance": enhance_report,
                        });
                        writeln!(stdout, "{}", serde_json::to_string_pretty(&out)?)?;
                    }
                    OutputFormat::StreamJson => {}
                }
                stdout.flush()?;
                return Ok(ExitCode::from(exit_status(&done.reason)));
            }
            _ => {}
        }
    }
    let status = tonic::Status::unavailable(errors.last().cloned().unwrap_or_default());
    bail!("{}", daemon_stopped(&status, &session_id))
}

/// What `run` says when it declines an MCP server's form.
fn declined_form_note(form: &ElicitationRequest) -> String {
    let message = crate::render::safe_text::strip_controls(form.message.trim());
    let first = message.lines().next().unwrap_or_default();
    format!(
        "declined a form of MCP server {} ({first:?}): `synapse run` cannot ask for input; \
         answer it in `synapse chat`",
        crate::render::safe_text::strip_controls(&form.server),
    )
}

/// The exit status for a turn's end reason (see the module doc).
fn exit_status(reason: &str) -> u8 {
    match reason {
        "completed" => 0,
        "cancelled" => EXIT_CANCELLED,
        "error" => EXIT_MODEL_ERROR,
        "truncated" => EXIT_TRUNCATED,
        "max_iterations" | "too_many_failures" => EXIT_LIMIT,
        _ => 1,
    }
}

/// One line for stderr: the message, with the failure's class and HTTP status when known.
fn failure_line(done: &TurnFinished) -> String {
    match (done.error_kind.as_str(), done.http_status) {
        ("", _) => done.message.clone(),
        (kind, 0) => format!("model error ({kind}): {}", done.message),
        (kind, status) => format!("model error ({kind}, HTTP {status}): {}", done.message),
    }
}

fn error_json(done: &TurnFinished) -> serde_json::Value {
    let kind = if done.error_kind.is_empty() {
        done.reason.as_str()
    } else {
        done.error_kind.as_str()
    };
    serde_json::json!({
        "kind": kind,
        "message": done.message,
        "http_status": (done.http_status != 0).then_some(done.http_status),
    })
}

/// What to say when the event stream broke: the daemon is gone, and how to pick the session up.
pub fn daemon_stopped(status: &tonic::Status, session_id: &str) -> String {
    let cause = match status.code() {
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled => {
            "the connection closed".to_string()
        }
        _ => status.message().to_string(),
    };
    format!(
        "the daemon stopped ({cause}) before the turn finished. Its log is in \
         $SYNAPSE_HOME/logs (`synapse daemon logs`); continue the session with \
         `synapse run --resume {session_id} \"...\"` (the daemon starts again by itself)"
    )
}

/// SIGINT cancels the turn (and the run ends when the daemon says so); SIGTERM and SIGHUP
/// cancel it and end the run at once, as whoever sent them expects.
fn spawn_signal_handler(out: tokio::sync::mpsc::Sender<ClientMessage>) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            let exit_with = tokio::select! {
                _ = int.recv() => None,
                _ = term.recv() => Some(143),
                _ = hup.recv() => Some(129),
            };
            let cancel = ClientMessage {
                kind: Some(Out::Cancel(CancelTurn {})),
            };
            let sent = tokio::time::timeout(SIGNAL_SEND_TIMEOUT, out.send(cancel)).await;
            if let Some(code) = exit_with {
                if sent.is_ok() {
                    // Give the message a moment to leave; the daemon cancels on close anyway.
                    tokio::task::yield_now().await;
                }
                std::process::exit(code);
            }
        }
    });
    Ok(())
}

/// How long a signal handler tries to tell the daemon before it exits regardless.
const SIGNAL_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(200);

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
