//! The REPL as a front end of the session driver ([`crate::session`]): during a turn,
//! [`ReplTurn`] renders each event through the [`TurnView`] and asks the person the session's
//! questions ([`Asker`]: an approval with one key, an MCP server's form line by line).

use std::io::Write;

use synapse_session::{Answer, ApprovalQuestion, Decision, Event, Question};
use tokio::signal::unix::Signal;

use super::approval::{self, ANSWER_PROMPT, parse_answer};
use super::input::{LineReader, Reply};
use super::keys::{Key, TurnKeys};
use super::usage::UsageStats;
use super::view::TurnView;
use crate::render::theme::Theme;
use crate::session::{Closed, Frontend};

/// What asks the person at the terminal.
pub(super) struct Asker<'a> {
    pub theme: Theme,
    pub input: &'a mut LineReader,
    pub interrupts: &'a mut Signal,
}

impl Asker<'_> {
    /// Prints while rustyline does not own the terminal.
    pub fn say(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Asks until a key says y, n, s or a (no Enter needed); Esc, Ctrl-C or Ctrl-D deny.
    /// Without a terminal the answer is read as a line.
    pub async fn approval(&mut self, request: &ApprovalQuestion, keys: &mut TurnKeys) -> Decision {
        self.say(&approval::question(&self.theme, request));
        if !keys.is_live() {
            return self.approval_line(request).await;
        }
        self.say(ANSWER_PROMPT);
        let decision = loop {
            tokio::select! {
                key = keys.next() => match key {
                    Key::Char(c) => {
                        if let Some(d) = parse_answer(&c.to_string()) {
                            self.say(&format!("{c}\n"));
                            break d;
                        }
                    }
                    Key::Escape => {
                        self.say("\n");
                        break Decision::No;
                    }
                    Key::Enter | Key::Backspace | Key::ClearLine => {}
                },
                _ = self.interrupts.recv() => {
                    self.say("\n");
                    break Decision::No;
                }
            }
        };
        self.say(&approval::outcome(&self.theme, decision, request));
        decision
    }

    async fn approval_line(&mut self, request: &ApprovalQuestion) -> Decision {
        let decision = loop {
            match self.input.read(ANSWER_PROMPT, false).await {
                Reply::Line(line) => match parse_answer(&line) {
                    Some(d) => break d,
                    None => self.say("Please answer y, n, s or a.\n"),
                },
                _ => break Decision::No,
            }
        };
        self.say(&approval::outcome(&self.theme, decision, request));
        decision
    }
}

/// The REPL while one of the session's turns runs.
pub(super) struct ReplTurn<'a> {
    pub asker: Asker<'a>,
    pub view: &'a mut TurnView,
    pub keys: &'a mut TurnKeys,
    pub usage: &'a mut UsageStats,
    /// Completed turns in the session.
    pub turns: &'a mut u32,
    /// Background jobs still running when the turn ended.
    pub jobs: &'a mut u32,
}

impl Frontend for ReplTurn<'_> {
    async fn on_event(&mut self, event: Event) {
        if let Event::TurnEnded(done) = &event {
            *self.turns = (*self.turns).max(done.turn);
            *self.jobs = done.background_jobs;
            self.view.finish(done, self.usage).await;
            return;
        }
        self.view.event(event, self.usage).await;
    }

    async fn answer(&mut self, question: Question) -> Answer {
        self.view.pause().await;
        self.view.asking(Some(question.id().to_string()));
        let answer = match question {
            Question::Approval(request) => {
                let decision = self.asker.approval(&request, self.keys).await;
                Answer::Approval {
                    id: request.id,
                    decision,
                }
            }
            Question::Form(request) => {
                // The form is typed with line editing: the turn's key reader gives the terminal
                // back meanwhile.
                self.keys.stop();
                let answer = self.asker.fill_form(&request).await;
                *self.keys = TurnKeys::start();
                answer
            }
        };
        self.view.asking(None);
        self.view.resume().await;
        answer
    }

    /// The turn loop reattaches and says so ([`super::Repl::recover`]).
    async fn on_closed(&mut self, _closed: &Closed) {
        self.view.pause().await;
    }
}
