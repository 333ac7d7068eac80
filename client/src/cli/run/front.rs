//! `synapse run` as a front end of the session driver: what each event prints (the answer on
//! stdout, activity on stderr, or stream-json lines) and how a run that nobody watches answers
//! questions (approvals by `--yes`, forms declined). The turn loop around it is `run::run`'s.

use std::io::{StdoutLock, Write};

use synapse_session::{Answer, Decision, Event, FormAction, FormQuestion, Question, StopReason};

use super::stream_json::StreamJson;
use super::tally::RunTally;
use super::{OutputFormat, failure_line};
use crate::out::Quiet;
use crate::render::events::tool_line;
use crate::render::live_tail::{LiveTail, terminal_width};
use crate::session::{Closed, Frontend};

/// The run's printer and its totals.
pub(super) struct RunFront {
    pub format: OutputFormat,
    pub quiet: bool,
    /// `--yes`: approvals are granted.
    pub yes: bool,
    /// The live tail of a running command on stderr (a terminal only, text output only).
    pub live: bool,
    pub stream: Option<StreamJson>,
    pub tally: RunTally,
    pub enhance_report: Option<String>,
    stdout: Quiet<StdoutLock<'static>>,
    tail: LiveTail,
    /// The first write to stdout that failed (a closed pipe is not one: [`Quiet`] drops it).
    failed: Option<std::io::Error>,
}

impl RunFront {
    pub fn new(
        format: OutputFormat,
        quiet: bool,
        yes: bool,
        stream: Option<StreamJson>,
        model: &str,
    ) -> Self {
        let live = !quiet
            && format == OutputFormat::Text
            && std::io::IsTerminal::is_terminal(&std::io::stderr());
        Self {
            format,
            quiet,
            yes,
            live,
            stream,
            tally: RunTally::new(model),
            enhance_report: None,
            stdout: Quiet(std::io::stdout().lock()),
            tail: LiveTail::new(),
            failed: None,
        }
    }

    /// Prints a line on stdout.
    pub fn out(&mut self, line: impl std::fmt::Display) {
        let written = writeln!(self.stdout, "{line}").and_then(|()| self.stdout.flush());
        if let Err(e) = written {
            self.failed.get_or_insert(e);
        }
    }

    /// The first failed write, once.
    pub fn take_failure(&mut self) -> Option<std::io::Error> {
        self.failed.take()
    }

    fn stream_lines(&mut self, event: &Event) {
        let lines = match self.stream.as_mut() {
            Some(stream) => stream.lines(event),
            None => return,
        };
        for line in lines {
            self.out(line);
        }
    }

    fn text(&self) -> bool {
        self.format == OutputFormat::Text
    }
}

impl Frontend for RunFront {
    async fn on_event(&mut self, event: Event) {
        self.stream_lines(&event);
        match event {
            Event::Assistant(a) => self.tally.answer(&a),
            Event::ToolResults(results) => self.tally.results(&results),
            Event::ToolProgress(p) if self.live => {
                let _ = self
                    .tail
                    .update(&mut std::io::stderr(), &p.tail, terminal_width());
            }
            Event::ToolDone(t) if !self.quiet && self.text() => {
                if self.live {
                    let _ = self.tail.clear(&mut std::io::stderr());
                }
                eprintln!("{}", tool_line(&t.command, t.exit_code));
            }
            Event::Retrying(r) if !self.quiet => eprintln!(
                "{} — retrying, attempt {}/{} in {:.1}s",
                r.reason,
                r.attempt,
                r.max_attempts,
                r.delay_ms as f64 / 1000.0,
            ),
            Event::Error(message) => eprintln!("error: {message}"),
            // Denied commands and problems in the permission rules: always said, even with
            // --quiet, since they change what the run could do.
            Event::Notice(text) if self.text() => eprintln!("synapse: {text}"),
            Event::ModeChanged { mode, .. } if mode == "yolo" && !self.quiet => {
                eprintln!("synapse: permission mode yolo: every command runs, unsandboxed")
            }
            Event::EnhanceReport(report) => {
                if self.text() {
                    eprintln!("skill enhancement: {}", report.trim_end());
                }
                self.enhance_report = Some(report);
            }
            Event::TurnEnded(done) if self.text() => {
                // A failed turn has no answer: stdout stays empty.
                if done.reason != StopReason::Error && !done.final_text.is_empty() {
                    let text = crate::render::safe_text::strip_controls(&done.final_text);
                    self.out(text.trim_end());
                }
                if !done.reason.is_success() {
                    eprintln!("synapse: {}", failure_line(&done));
                }
            }
            _ => {}
        }
    }

    async fn answer(&mut self, question: Question) -> Answer {
        self.stream_lines(&Event::Question(question.clone()));
        match question {
            Question::Approval(a) => {
                let (decision, why) = if self.yes {
                    eprintln!("allowed (--yes): {}", a.title);
                    (Decision::Yes, "--yes")
                } else {
                    eprintln!("denied (non-interactive run; --yes allows it): {}", a.title);
                    (Decision::No, "non-interactive run")
                };
                if let Some(line) = self
                    .stream
                    .as_ref()
                    .map(|s| s.approval_answer(&a.id, decision.as_str(), why))
                {
                    self.out(line);
                }
                Answer::Approval { id: a.id, decision }
            }
            Question::Form(form) => {
                // Always said, even with --quiet: the server's tool goes on without the input.
                eprintln!("synapse: {}", declined_form_note(&form));
                if let Some(line) = self
                    .stream
                    .as_ref()
                    .map(|s| s.elicitation_declined(&form.id, &form.server))
                {
                    self.out(line);
                }
                Answer::Form {
                    id: form.id,
                    action: FormAction::Decline,
                    content_json: String::new(),
                }
            }
        }
    }

    /// The run says it when its turn loop ends ([`super::daemon_stopped`]).
    async fn on_closed(&mut self, _closed: &Closed) {}
}

/// What `run` says when it declines an MCP server's form.
fn declined_form_note(form: &FormQuestion) -> String {
    let message = crate::render::safe_text::strip_controls(form.message.trim());
    let first = message.lines().next().unwrap_or_default();
    format!(
        "declined a form of MCP server {} ({first:?}): `synapse run` cannot ask for input; \
         answer it in `synapse chat`",
        crate::render::safe_text::strip_controls(&form.server),
    )
}
