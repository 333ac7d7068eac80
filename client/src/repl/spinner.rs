//! The "working" indicator drawn on the current line while the REPL waits for the model or a
//! command. It runs only while rustyline does not own the terminal and only when stdout is a
//! terminal; [`Spinner::stop`] clears its line before anything else is printed.

use std::io::Write;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::typeahead::Typed;
use crate::render::theme::Theme;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_INTERVAL: Duration = Duration::from_millis(80);
/// Labels longer than this are cut so the spinner stays on one line.
const LABEL_CHARS: usize = 70;

/// A running or idle spinner.
pub struct Spinner {
    theme: Theme,
    /// Type-ahead drawn after the label.
    typed: Option<Typed>,
    running: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
}

impl Spinner {
    pub fn new(theme: Theme) -> Self {
        Self {
            theme,
            typed: None,
            running: None,
        }
    }

    /// Also draws what the user types meanwhile (redrawn as soon as it changes).
    pub fn with_typed(mut self, typed: Typed) -> Self {
        self.typed = Some(typed);
        self
    }

    /// Shows `label` with an animation and the elapsed seconds (replacing a running one).
    pub async fn start(&mut self, label: &str) {
        self.stop().await;
        if !self.theme.terminal {
            return;
        }
        let label = cut(label);
        let theme = self.theme;
        let typed = self.typed.clone();
        let (stop_tx, mut stop_rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut tick = tokio::time::interval(FRAME_INTERVAL);
            let mut frame = 0usize;
            loop {
                let typed_changed = async {
                    match &typed {
                        Some(t) => t.changed().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = &mut stop_rx => break,
                    _ = typed_changed => {
                        tick.reset_immediately();
                    }
                    _ = tick.tick() => {
                        let secs = started.elapsed().as_secs();
                        let elapsed = if secs > 0 { format!(" ({secs}s · Esc to cancel)") } else { String::new() };
                        let shown = typed.as_ref().map(Typed::text).unwrap_or_default();
                        let shown = if shown.is_empty() { String::new() } else { format!("  › {shown}") };
                        let line = format!(
                            "\r\x1b[2K{} {}{}{}",
                            theme.cyan(FRAMES[frame % FRAMES.len()]),
                            label,
                            theme.dim(&elapsed),
                            shown
                        );
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(line.as_bytes());
                        let _ = out.flush();
                        frame += 1;
                    }
                }
            }
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\r\x1b[2K");
            let _ = out.flush();
        });
        self.running = Some((stop_tx, task));
    }

    /// Stops and clears the line; returns once the line is clear.
    pub async fn stop(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            let _ = stop.send(());
            let _ = task.await;
        }
    }
}

fn cut(label: &str) -> String {
    let first = label.lines().next().unwrap_or_default();
    if first.chars().count() <= LABEL_CHARS && !label.contains('\n') {
        return first.to_string();
    }
    let mut s: String = first.chars().take(LABEL_CHARS).collect();
    s.push('…');
    s
}
