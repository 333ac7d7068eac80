//! How one turn looks while it runs: a spinner until there is something to show, the answer
//! streamed as Markdown, each tool call as a `● command` block, retries, notices and errors on
//! lines of their own, and after the answer the turn's outcome and any skill-enhance report.

use std::io::Write;

use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::{ApprovalRequest, TurnFinished};

use super::spinner::Spinner;
use super::usage::UsageStats;
use crate::render::markdown::MarkdownStream;
use crate::render::theme::Theme;
use crate::render::tool::tool_block;

const THINKING: &str = "Thinking…";

/// What the turn loop does after an event.
pub enum Step {
    Continue,
    Approval(ApprovalRequest),
    Finished(TurnFinished),
}

pub struct TurnView {
    theme: Theme,
    spinner: Spinner,
    markdown: MarkdownStream,
    /// What the spinner says when it runs again (the running command, or thinking).
    activity: String,
    /// Reports that arrived before the turn finished; printed after the answer.
    reports: Vec<String>,
}

impl TurnView {
    pub fn new(theme: Theme) -> Self {
        let markdown = if theme.terminal {
            MarkdownStream::for_terminal(theme.color)
        } else {
            MarkdownStream::plain()
        };
        Self {
            theme,
            spinner: Spinner::new(theme),
            markdown,
            activity: THINKING.to_string(),
            reports: Vec::new(),
        }
    }

    /// Shows the spinner with the current activity.
    pub async fn resume(&mut self) {
        self.spinner.start(&self.activity).await;
    }

    /// Stops the spinner and prints what the Markdown stream still holds.
    pub async fn pause(&mut self) {
        self.spinner.stop().await;
        let rest = self.markdown.finish();
        print(&rest);
    }

    /// Prints a line of our own between events (spinner paused around it).
    pub async fn note(&mut self, text: &str) {
        self.pause().await;
        print(text);
        self.resume().await;
    }

    pub async fn event(&mut self, event: Ev, usage: &mut UsageStats) -> Step {
        let t = self.theme;
        match event {
            Ev::Text(delta) => {
                let out = self.markdown.push(&delta.text);
                if !out.is_empty() {
                    self.spinner.stop().await;
                    print(&out);
                    self.resume().await;
                }
            }
            Ev::ToolStarted(call) => {
                self.activity = format!("● {}", call.command);
                self.pause().await;
                self.resume().await;
            }
            Ev::ToolFinished(call) => {
                self.activity = THINKING.to_string();
                self.note(&tool_block(&t, &call)).await;
                self.markdown.reset();
            }
            Ev::Usage(u) => usage.observe_call(&u),
            Ev::Retrying(r) => {
                let line = format!(
                    "⟳ {} — retrying in {:.1}s (attempt {}/{})\n",
                    r.reason,
                    r.delay_ms as f64 / 1000.0,
                    r.attempt,
                    r.max_attempts
                );
                self.note(&t.yellow(&line)).await;
            }
            Ev::Error(e) => self.note(&t.red(&format!("error: {}\n", e.message))).await,
            Ev::Notice(n) => self.note(&t.dim(&format!("{}\n", n.text))).await,
            Ev::EnhanceReport(r) => self.reports.push(enhance_report(&t, &r.text)),
            Ev::Approval(request) => {
                self.pause().await;
                return Step::Approval(request);
            }
            Ev::TurnFinished(done) => return Step::Finished(done),
            Ev::Opened(_) | Ev::ModelChanged(_) | Ev::PermissionMode(_) => {}
        }
        Step::Continue
    }

    /// Prints the end of the turn: the rest of the answer (or the final text when no delta was
    /// seen, e.g. after reattaching), the outcome unless it completed, and reports.
    pub async fn finish(&mut self, done: &TurnFinished, usage: &mut UsageStats) {
        self.pause().await;
        if !self.markdown.emitted() && !done.final_text.is_empty() {
            let mut out = self.markdown.push(&done.final_text);
            out.push_str(&self.markdown.finish());
            print(&out);
        }
        let t = self.theme;
        match done.reason.as_str() {
            "completed" => {}
            "cancelled" => print(&t.dim("Cancelled.\n")),
            "error" => print(&t.red(&format!("error: {}\n", done.message))),
            _ => print(&t.yellow(&format!("Stopped: {}\n", done.message))),
        }
        if let Some(u) = &done.usage {
            usage.add_turn(u);
        }
        for report in self.reports.drain(..) {
            print(&report);
        }
        print("\n");
    }
}

/// A skill-enhance report, printed after the answer.
pub fn enhance_report(theme: &Theme, text: &str) -> String {
    let mut out = format!(
        "\n{} {}\n",
        theme.cyan("✻"),
        theme.bold("Skill enhancement")
    );
    for line in text.trim_end().lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out
}

/// The line that says which permission mode is in force, when it is not the default: `yolo`
/// in red (nothing is asked or sandboxed), the others in yellow. `None` for auto.
pub fn permission_line(theme: &Theme, mode: &str) -> Option<String> {
    match mode {
        "auto" | "" => None,
        "yolo" => Some(
            theme.red("Permission mode: yolo — every command runs without questions or sandbox.\n"),
        ),
        other => Some(theme.yellow(&format!("Permission mode: {other}\n"))),
    }
}

fn print(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enhance_report_follows_the_seed_format() {
        let text = "Skill enhancement done:\n- Action: created a skill\n- Name: analyzing-logs\n- Tools: search, read, glob\n";
        insta::assert_snapshot!(enhance_report(&Theme::plain(), text));
    }
}
