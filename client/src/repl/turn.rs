//! One turn: send the message, render events until the turn finishes. Ctrl-C or Esc cancels it
//! in the daemon (which kills the running command); other keys are type-ahead ([`super::keys`],
//! [`super::typeahead`]); approval requests are answered with a single key, an MCP server's
//! form line by line ([`super::form`]);
//! if the daemon goes away the REPL reattaches to the same session and resends the message when
//! the daemon never recorded it.

use synapse_shared::proto::ApprovalAnswer;
use synapse_shared::proto::CancelTurn;
use synapse_shared::proto::UserInput;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;

use super::Repl;
use super::approval::{self, ANSWER_PROMPT, Decision, parse_answer};
use super::keys::{Key, TurnKeys};
use super::link::{Incoming, Link};
use super::view::{Step, TurnView};
use crate::render::banner::session_label;

impl Repl {
    /// Runs a turn for `text`; returns when it finished, was cancelled or was lost.
    pub(super) async fn turn(&mut self, text: String) -> anyhow::Result<()> {
        if !self.deliver(&text).await {
            return Ok(());
        }
        let number = self.turns + 1;
        self.drain_interrupts();
        let mut view = self.turn_view();
        view.resume().await;
        let result = self.run_events(&mut view, Some((number, text))).await;
        self.calls.append(&mut view.calls);
        result
    }

    /// Shows a turn that was already running when we attached, until it ends.
    pub(super) async fn follow_running_turn(&mut self) -> anyhow::Result<()> {
        let mut view = self.turn_view();
        view.resume().await;
        let result = self.run_events(&mut view, None).await;
        self.calls.append(&mut view.calls);
        result
    }

    fn turn_view(&self) -> TurnView {
        TurnView::new(self.theme, self.typeahead.shown(), self.calls.len() + 1)
    }

    /// `/expand [N]`: prints the whole output of a finished call.
    pub(super) fn expand(&self, n: Option<usize>) {
        let index = n.unwrap_or(self.calls.len());
        let Some(call) = index.checked_sub(1).and_then(|i| self.calls.get(i)) else {
            let known = match self.calls.len() {
                0 => "no tool call has finished in this REPL yet".to_string(),
                n => format!("calls 1 to {n} can be expanded"),
            };
            self.say(&format!("There is no tool call {index}: {known}.\n"));
            return;
        };
        let t = self.theme;
        let output = if call.output.is_empty() {
            &call.output_preview
        } else {
            &call.output
        };
        let mut out = format!("{}\n", t.bold(&format!("[{index}] {}", call.command)));
        for line in output.lines() {
            out.push_str(&format!("  {line}\n"));
        }
        self.say(&out);
    }

    /// Sends the message, reattaching first when needed. On failure the text goes back to the
    /// prompt so nothing typed is lost.
    async fn deliver(&mut self, text: &str) -> bool {
        for _ in 0..2 {
            if let Err(e) = self.ensure_link().await {
                self.say(&self.theme.red(&format!("error: {e:#}\n")));
                break;
            }
            let input = Out::Input(UserInput {
                text: text.to_string(),
                ..Default::default()
            });
            if self.link.send(input).await.is_ok() {
                return true;
            }
        }
        self.say(&self.theme.yellow(
            "Your message was not sent; it is back at the prompt. Press Enter to try again.\n",
        ));
        self.unsent = text.to_string();
        false
    }

    async fn run_events(
        &mut self,
        view: &mut TurnView,
        mut sent: Option<(u32, String)>,
    ) -> anyhow::Result<()> {
        let mut cancelling = false;
        let mut keys = TurnKeys::start();
        loop {
            tokio::select! {
                incoming = self.link.next() => match incoming {
                    Incoming::Event(event) => match view.event(event, &mut self.usage).await {
                        Step::Continue => {}
                        Step::Approval(request) => {
                            // None: another front end answered first.
                            if let Some(decision) = self.ask_approval(&request, &mut keys).await {
                                let answer = Out::Approval(ApprovalAnswer {
                                    request_id: request.request_id,
                                    decision: decision.wire().to_string(),
                                });
                                // A lost connection shows up as Lost on the next event.
                                let _ = self.link.send(answer).await;
                            }
                            view.resume().await;
                        }
                        Step::Elicitation(request) => {
                            // The form is typed with line editing: the turn's key reader
                            // gives the terminal back meanwhile.
                            keys.stop();
                            let answer = self.fill_form(&request).await;
                            keys = TurnKeys::start();
                            let _ = self.link.send(Out::Elicitation(answer)).await;
                            view.resume().await;
                        }
                        Step::Finished(done) => {
                            self.turns = self.turns.max(done.turn);
                            self.jobs = done.background_jobs;
                            view.finish(&done, &mut self.usage).await;
                            return Ok(());
                        }
                    },
                    Incoming::Lost(reason) => {
                        view.pause().await;
                        self.say(&self.theme.yellow(&format!(
                            "The connection to synapsed was lost ({reason}); reattaching…\n"
                        )));
                        if !self.recover(&mut sent).await {
                            return Ok(());
                        }
                        view.resume().await;
                    }
                },
                _ = self.interrupts.recv() => {
                    if !cancelling {
                        cancelling = true;
                        let _ = self.link.send(Out::Cancel(CancelTurn {})).await;
                        view.note(&self.theme.dim("^C cancelling…\n")).await;
                    }
                }
                key = keys.next() => match key {
                    Key::Escape => {
                        if !cancelling {
                            cancelling = true;
                            let _ = self.link.send(Out::Cancel(CancelTurn {})).await;
                            view.note(&self.theme.dim("Esc cancelling…\n")).await;
                        }
                    }
                    key => self.typeahead.key(key),
                }
            }
        }
    }

    /// After a lost stream: reattach; true when the turn goes on (still running, or resent).
    async fn recover(&mut self, sent: &mut Option<(u32, String)>) -> bool {
        let id = self.link.session_id().to_string();
        let link = match Link::reattach(
            &self.paths,
            &id,
            self.model_override.clone(),
            self.permission_mode.clone(),
        )
        .await
        {
            Ok(link) => link,
            Err(e) => {
                self.say(&self.theme.red(&format!("error: {e:#}\n")));
                return false;
            }
        };
        self.link = link;
        let opened = self.link.opened.clone();
        self.model = opened.model.clone();
        let label = session_label(&opened);
        if opened.turn_running {
            self.say(&self.theme.cyan(&format!(
                "↻ Reattached to session {label}; the turn is still running.\n"
            )));
            return true;
        }
        self.turns = opened.turns;
        if let Some((number, text)) = sent.take()
            && opened.turns < number
        {
            self.say(&self.theme.cyan(&format!(
                "↻ Reattached to session {label}; the daemon never received your message, sending it again.\n"
            )));
            if self
                .link
                .send(Out::Input(UserInput {
                    text: text.clone(),
                    ..Default::default()
                }))
                .await
                .is_ok()
            {
                return true;
            }
            self.unsent = text;
            return false;
        }
        self.say(&self.theme.cyan(&format!(
            "↻ Reattached to session {label}. The daemon restarted during the turn, so it was interrupted; what it did so far is kept.\n\n"
        )));
        false
    }

    /// Asks until a key says y, n, s or a (no Enter needed); Esc, Ctrl-C or Ctrl-D deny.
    /// Without a terminal the answer is read as a line. `None`: the question closed first
    /// (another front end of the session answered it, or it was withdrawn); that is said.
    async fn ask_approval(
        &mut self,
        request: &synapse_shared::proto::ApprovalRequest,
        keys: &mut TurnKeys,
    ) -> Option<Decision> {
        self.say(&approval::question(&self.theme, request));
        if !keys.is_live() {
            return self.ask_approval_line(request).await;
        }
        self.say(ANSWER_PROMPT);
        let decision = loop {
            tokio::select! {
                incoming = self.link.next() => match incoming {
                    Incoming::Event(Ev::QuestionClosed(closed))
                        if closed.request_id == request.request_id =>
                    {
                        self.say(&format!("\n{}", approval::closed_elsewhere(&self.theme, &closed)));
                        return None;
                    }
                    Incoming::Event(event) => self.link.hold(event),
                    Incoming::Lost(_) => {
                        self.say("\n");
                        break Decision::No;
                    }
                },
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
        Some(decision)
    }

    async fn ask_approval_line(
        &mut self,
        request: &synapse_shared::proto::ApprovalRequest,
    ) -> Option<Decision> {
        let decision = loop {
            match self.input.read(ANSWER_PROMPT, false).await {
                super::input::Reply::Line(line) => match parse_answer(&line) {
                    Some(d) => break d,
                    None => self.say("Please answer y, n, s or a.\n"),
                },
                _ => break Decision::No,
            }
        };
        self.say(&approval::outcome(&self.theme, decision, request));
        Some(decision)
    }
}
