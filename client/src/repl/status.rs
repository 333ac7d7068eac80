//! The status line under the prompt: model, how full the context window is, the session's
//! estimated cost, the permission mode, the workspace and the background jobs still running. It is drawn on the row below the
//! prompt before rustyline starts reading (cursor moved back up), so rustyline never has to
//! know about it, and cleared when the line is submitted. Numbers come from the same
//! [`UsageStats`] as `/cost` and `/context`, so they always agree.

use super::Repl;
use super::usage::UsageStats;

/// What the status line says.
pub struct Status<'a> {
    pub model: &'a str,
    pub usage: &'a UsageStats,
    pub mode: &'a str,
    pub workspace: &'a str,
    /// The session's background jobs running when the last turn ended.
    pub jobs: u32,
}

/// The status line's text (no newline), cut to `width` columns.
pub fn status_text(s: &Status<'_>, width: usize) -> String {
    let context = if s.usage.context_window == 0 {
        "context –".to_string()
    } else {
        let share = s.usage.context_tokens as f64 / s.usage.context_window as f64 * 100.0;
        format!(
            "context {share:.0}% of {}",
            short_tokens(s.usage.context_window)
        )
    };
    let cost = match s.usage.estimate(s.model) {
        Some(usd) => format!("${usd:.4}"),
        None => "cost n/a".to_string(),
    };
    let model = if s.model.is_empty() {
        "no model"
    } else {
        s.model
    };
    let mut parts = vec![
        model.to_string(),
        context,
        cost,
        s.mode.to_string(),
        s.workspace.to_string(),
    ];
    match s.jobs {
        0 => {}
        1 => parts.push("1 job running".into()),
        n => parts.push(format!("{n} jobs running")),
    }
    crate::render::width::fit(&parts.join(" · "), width)
}

/// `200000` → `200k`.
fn short_tokens(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// `/home/me/src/x` → `~/src/x`.
pub fn tilde(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_string(),
    }
}

impl Repl {
    /// Draws the status line on the row below where the prompt will be.
    pub(super) fn show_status(&self) {
        if !self.theme.terminal {
            return;
        }
        let (cols, _) = termimad::terminal_size();
        let width = if cols == 0 { 80 } else { usize::from(cols) };
        let workspace = tilde(&self.link.opened().cwd);
        let status = Status {
            model: &self.model,
            usage: &self.usage,
            mode: self.permission_mode.as_deref().unwrap_or("auto"),
            workspace: &workspace,
            jobs: self.jobs,
        };
        let text = status_text(&status, width.saturating_sub(1));
        // New row, status, back up to the start of the (now empty) prompt row.
        self.say(&format!("\n\x1b[2K{}\x1b[1A\r", self.theme.dim(&text)));
    }

    /// Clears the status row after a line was submitted (the cursor is on it then).
    pub(super) fn clear_status(&self) {
        if self.theme.terminal {
            self.say("\r\x1b[J");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_model_context_cost_mode_and_workspace() {
        let mut usage = UsageStats::default();
        usage.add_turn(&synapse_session::Usage {
            input_tokens: 1_000_000,
            ..Default::default()
        });
        usage.context_tokens = 50_000;
        usage.context_window = 200_000;
        let s = Status {
            model: "claude-sonnet-4-5",
            usage: &usage,
            mode: "auto",
            workspace: "~/src/app",
            jobs: 0,
        };
        assert_eq!(
            status_text(&s, 200),
            "claude-sonnet-4-5 · context 25% of 200k · $3.0000 · auto · ~/src/app"
        );
        assert_eq!(status_text(&s, 20).chars().count(), 20);
        let busy = Status { jobs: 2, ..s };
        assert!(status_text(&busy, 200).ends_with(" · ~/src/app · 2 jobs running"));
    }
}
