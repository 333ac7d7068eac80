//! One turn: send the message, render events until the turn finishes. Ctrl-C or Esc cancels it
//! in the daemon (which kills the running command); other keys are type-ahead ([`super::keys`],
//! [`super::typeahead`]); approval requests are answered with a single key, an MCP server's
//! form line by line ([`super::form`]);
//! if the daemon goes away the REPL reattaches to the same session and resends the message when
//! the daemon never recorded it.

use synapse_session::{Control, Input};

use super::Repl;
use super::front::{Asker, ReplTurn};
use super::keys::{Key, TurnKeys};
use super::view::TurnView;
use crate::render::banner::session_label;
use crate::session::{Session, Step};

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
            if self.link.input(Input::text(text)).await.is_ok() {
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
                incoming = self.link.next() => {
                    let mut front = ReplTurn {
                        asker: Asker {
                            theme: self.theme,
                            input: &mut self.input,
                            interrupts: &mut self.interrupts,
                        },
                        view: &mut *view,
                        keys: &mut keys,
                        usage: &mut self.usage,
                        turns: &mut self.turns,
                        jobs: &mut self.jobs,
                    };
                    match self.link.deliver(&mut front, incoming).await {
                        Step::Continue => {}
                        Step::TurnEnded(_) => return Ok(()),
                        Step::Closed(closed) => {
                            self.say(&self.theme.yellow(&format!(
                                "The connection to synapsed was lost ({closed}); reattaching…\n"
                            )));
                            if !self.recover(&mut sent).await {
                                return Ok(());
                            }
                            view.resume().await;
                        }
                    }
                },
                _ = self.interrupts.recv() => {
                    if !cancelling {
                        cancelling = true;
                        let _ = self.link.control(Control::Cancel).await;
                        view.note(&self.theme.dim("^C cancelling…\n")).await;
                    }
                }
                key = keys.next() => match key {
                    Key::Escape => {
                        if !cancelling {
                            cancelling = true;
                            let _ = self.link.control(Control::Cancel).await;
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
        let id = self.link.id().to_string();
        let link = match Session::reopen(
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
        let opened = self.link.opened().clone();
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
            if self.link.input(Input::text(text.clone())).await.is_ok() {
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
}
