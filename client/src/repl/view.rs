//! How one turn looks while it runs: a spinner until there is something to show, the answer
//! streamed as Markdown, each tool call as a `● command` block, retries, notices and errors on
//! lines of their own, and after the answer the turn's outcome and any skill-enhance report.

use std::io::Write;

use synapse_session::{Event, StopReason, ToolDone, TurnEnded, Usage};

use super::spinner::Spinner;
use super::typeahead::Typed;
use super::usage::{UsageStats, thousands};
use crate::render::markdown::MarkdownStream;
use crate::render::theme::Theme;
use crate::render::tool::tool_block_numbered;

const THINKING: &str = "Thinking…";

pub struct TurnView {
    theme: Theme,
    spinner: Spinner,
    markdown: MarkdownStream,
    /// What the spinner says when it runs again (the running command, or thinking).
    activity: String,
    /// Reports that arrived before the turn finished; printed after the answer.
    reports: Vec<String>,
    started: std::time::Instant,
    /// The number of the next tool call.
    next_call: usize,
    /// Calls finished in this turn, for `/expand`.
    pub calls: Vec<ToolDone>,
    /// The question this terminal shows and has not answered yet: another front end of the
    /// session may answer it first, and then its prompt is dropped and that is said.
    asking: Option<String>,
}

impl TurnView {
    pub fn new(theme: Theme, typed: Typed, next_call: usize) -> Self {
        let markdown = if theme.terminal {
            MarkdownStream::for_terminal(theme.color)
        } else {
            MarkdownStream::plain()
        };
        Self {
            theme,
            spinner: Spinner::new(theme).with_typed(typed),
            markdown,
            activity: THINKING.to_string(),
            reports: Vec::new(),
            started: std::time::Instant::now(),
            next_call,
            calls: Vec::new(),
            asking: None,
        }
    }

    /// This terminal shows question `id` (Some) or has answered it (None).
    pub fn asking(&mut self, id: Option<String>) {
        self.asking = id;
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

    /// Renders one event of the turn (its questions and its end have their own methods).
    pub async fn event(&mut self, event: Event, usage: &mut UsageStats) {
        let t = self.theme;
        match event {
            Event::Text(text) => {
                let out = self.markdown.push(&text);
                if !out.is_empty() {
                    self.spinner.stop().await;
                    print(&out);
                    self.resume().await;
                }
            }
            Event::ToolCall(call) => {
                self.activity = format!("● {}", call.command);
                self.pause().await;
                self.resume().await;
            }
            Event::ToolProgress(o) => {
                // The spinner line shows the running command's latest output line.
                let command = self.activity.split(" │ ").next().unwrap_or_default();
                let last = crate::render::safe_text::strip_controls(
                    o.tail.lines().last().unwrap_or_default(),
                );
                let last: String = last.chars().take(60).collect();
                self.activity = format!("{command} │ {last}");
                self.pause().await;
                self.resume().await;
            }
            Event::ToolDone(call) => {
                self.activity = THINKING.to_string();
                let index = self.next_call + self.calls.len();
                self.note(&tool_block_numbered(&t, &call, index)).await;
                self.calls.push(call);
                self.markdown.reset();
            }
            Event::Usage(u) => usage.observe_call(&u),
            Event::Retrying(r) => {
                let line = format!(
                    "⟳ {} — retrying in {:.1}s (attempt {}/{})\n",
                    r.reason,
                    r.delay_ms as f64 / 1000.0,
                    r.attempt,
                    r.max_attempts
                );
                self.note(&t.yellow(&line)).await;
            }
            Event::Error(message) => {
                let message = real_paths(&message);
                self.note(&t.red(&format!("error: {message}\n"))).await
            }
            Event::Notice(text) => self.note(&t.dim(&format!("{text}\n"))).await,
            Event::EnhanceReport(text) => self.reports.push(enhance_report(&t, &text)),
            // Whole answers and results are for `synapse run --output-format stream-json`; the
            // REPL shows their text and tools as they stream, and the plan in the `todo` call's
            // own output. Questions and the turn's end come through `ReplTurn`.
            Event::Opened(_)
            | Event::Plan(_)
            | Event::ModelChanged(_)
            | Event::ModeChanged { .. }
            | Event::Assistant(_)
            | Event::ToolResults(_)
            | Event::Question(_)
            // Sent only to an editor that offered its files; the REPL never does.
            | Event::FileRequest(_)
            | Event::TurnEnded(_) => {}
            // Closed while this terminal still asked it (answered at another front end, timed
            // out, withdrawn): the dropped prompt is explained. One it answered itself: nothing.
            Event::QuestionClosed(closed) => {
                if self.asking.as_deref() == Some(closed.id.as_str()) {
                    self.asking = None;
                    print(&format!(
                        "\n{}",
                        super::approval::closed_elsewhere(&t, &closed)
                    ));
                    self.resume().await;
                }
            }
        }
    }

    /// Prints the end of the turn: the rest of the answer (or the final text when no delta was
    /// seen, e.g. after reattaching), the outcome unless it completed, and reports.
    pub async fn finish(&mut self, done: &TurnEnded, usage: &mut UsageStats) {
        self.pause().await;
        if !self.markdown.emitted() && !done.final_text.is_empty() {
            let mut out = self.markdown.push(&done.final_text);
            out.push_str(&self.markdown.finish());
            print(&out);
        }
        let t = self.theme;
        match done.reason {
            StopReason::Completed => {}
            StopReason::Cancelled => print(&t.dim("Cancelled.\n")),
            StopReason::Error => print(&t.red(&format!("error: {}\n", real_paths(&done.message)))),
            _ => print(&t.yellow(&format!("{}\n", stopped_message(&done.message)))),
        }
        usage.add_turn(&done.usage);
        let used = done.usage.input_tokens + done.usage.output_tokens > 0;
        if done.reason.is_success() || used {
            print(&t.dim(&turn_summary(self.started.elapsed(), Some(&done.usage))));
        }
        for report in self.reports.drain(..) {
            print(&report);
        }
        print("\n");
    }
}

/// Messages name the real state folder, never a literal `$SYNAPSE_HOME`.
pub fn real_paths(message: &str) -> String {
    if !message.contains("$SYNAPSE_HOME") {
        return message.to_string();
    }
    match synapse_shared::paths::Paths::from_env() {
        Ok(paths) => message.replace("$SYNAPSE_HOME", &paths.home().display().to_string()),
        Err(_) => message.to_string(),
    }
}

/// Why a turn stopped early, said once: the daemon's message may already start with "Stopped".
pub fn stopped_message(message: &str) -> String {
    let message = message.trim();
    if message.is_empty() {
        "Stopped.".to_string()
    } else if message.to_lowercase().starts_with("stopped") {
        message.to_string()
    } else {
        format!("Stopped: {message}")
    }
}

/// The line after each answer: how long the turn took and the tokens it used.
pub fn turn_summary(elapsed: std::time::Duration, usage: Option<&Usage>) -> String {
    let secs = elapsed.as_secs_f64();
    let time = if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        format!("{}m {:02}s", elapsed.as_secs() / 60, elapsed.as_secs() % 60)
    };
    match usage {
        Some(u) => format!(
            "✓ {time} · {} tokens in · {} out\n",
            thousands(u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens),
            thousands(u.output_tokens)
        ),
        None => format!("✓ {time}\n"),
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

    #[test]
    fn stop_reasons_are_said_once() {
        assert_eq!(
            stopped_message("Stopped after 50 steps"),
            "Stopped after 50 steps"
        );
        assert_eq!(stopped_message("budget spent"), "Stopped: budget spent");
    }

    #[test]
    fn summary_names_time_and_tokens() {
        let u = Usage {
            input_tokens: 1200,
            output_tokens: 34,
            ..Usage::default()
        };
        assert_eq!(
            turn_summary(std::time::Duration::from_millis(2300), Some(&u)),
            "✓ 2.3s · 1,200 tokens in · 34 out\n"
        );
    }
}
