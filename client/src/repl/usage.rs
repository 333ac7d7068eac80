//! Token accounting for `/cost` and `/context`: sums of the turns this REPL saw, the last
//! model call's context size, and a price estimate from a small table of public list prices.

use synapse_session::Usage;

use crate::render::theme::Theme;

/// Cells of the `/context` bar.
const BAR_CELLS: usize = 30;

/// List prices in USD per million tokens: input, output, cache read, cache write.
struct Price {
    prefix: &'static str,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
}

/// Most specific prefixes first; matched against the model name without a provider prefix.
const PRICES: &[Price] = &[
    price("claude-opus-4-5", 5.0, 25.0),
    price("claude-opus-4", 15.0, 75.0),
    price("claude-sonnet-4", 3.0, 15.0),
    price("claude-3-7-sonnet", 3.0, 15.0),
    price("claude-3-5-sonnet", 3.0, 15.0),
    price("claude-haiku-4", 1.0, 5.0),
    price("claude-3-5-haiku", 0.8, 4.0),
    price("claude-3-haiku", 0.25, 1.25),
    Price {
        prefix: "gpt-4o-mini",
        input: 0.15,
        output: 0.6,
        cache_read: 0.075,
        cache_write: 0.15,
    },
    Price {
        prefix: "gpt-4o",
        input: 2.5,
        output: 10.0,
        cache_read: 1.25,
        cache_write: 2.5,
    },
    Price {
        prefix: "gpt-4.1-mini",
        input: 0.4,
        output: 1.6,
        cache_read: 0.1,
        cache_write: 0.4,
    },
    Price {
        prefix: "gpt-4.1",
        input: 2.0,
        output: 8.0,
        cache_read: 0.5,
        cache_write: 2.0,
    },
];

/// Anthropic's pricing shape: cache reads at a tenth, cache writes at 1.25 times the input.
const fn price(prefix: &'static str, input: f64, output: f64) -> Price {
    Price {
        prefix,
        input,
        output,
        cache_read: input / 10.0,
        cache_write: input * 1.25,
    }
}

/// What this REPL has seen of the session's token use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageStats {
    pub turns: u32,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// The last model call: tokens in the window, and the window's size.
    pub context_tokens: u64,
    pub context_window: u64,
    /// Where the window's size came from (settings, the server, the model's name, a default).
    pub context_source: String,
}

impl UsageStats {
    /// Adds a finished turn's usage.
    pub fn add_turn(&mut self, u: &Usage) {
        self.turns += 1;
        self.input += u.input_tokens;
        self.output += u.output_tokens;
        self.cache_read += u.cache_read_tokens;
        self.cache_write += u.cache_creation_tokens;
    }

    /// Records one model call's context size.
    pub fn observe_call(&mut self, u: &Usage) {
        self.context_tokens = u.context_tokens;
        if u.context_window > 0 {
            self.context_window = u.context_window;
            self.context_source = u.context_source.clone();
        }
    }

    /// Estimated USD for `model`, when its price is known.
    pub fn estimate(&self, model: &str) -> Option<f64> {
        let name = model.rsplit('/').next().unwrap_or(model);
        let p = PRICES.iter().find(|p| name.starts_with(p.prefix))?;
        let m = 1_000_000.0;
        Some(
            self.input as f64 * p.input / m
                + self.output as f64 * p.output / m
                + self.cache_read as f64 * p.cache_read / m
                + self.cache_write as f64 * p.cache_write / m,
        )
    }

    /// The `/cost` report.
    pub fn cost_report(&self, theme: &Theme, model: &str) -> String {
        let turns = if self.turns == 1 { "turn" } else { "turns" };
        let mut out = format!(
            "Tokens used in this session since this REPL attached ({} {turns}):\n",
            self.turns
        );
        let rows = [
            ("input", self.input),
            ("output", self.output),
            ("cache read", self.cache_read),
            ("cache write", self.cache_write),
        ];
        for (name, n) in rows {
            out.push_str(&format!("  {name:<12} {:>12}\n", thousands(n)));
        }
        match self.estimate(model) {
            Some(usd) => out.push_str(&format!(
                "  {:<12} {:>12}  {}\n",
                "estimate",
                format!("${usd:.4}"),
                theme.dim(&format!("at list prices for {model}"))
            )),
            None => out.push_str(&format!(
                "  {}\n",
                theme.dim(&format!("no price known for model {model:?}; no estimate"))
            )),
        }
        out
    }

    /// The `/context` report: a bar and the numbers.
    pub fn context_report(&self, theme: &Theme) -> String {
        if self.context_window == 0 {
            return "No model call yet in this REPL; the context size is known after the next turn.\n"
                .to_string();
        }
        let share = (self.context_tokens as f64 / self.context_window as f64).clamp(0.0, 1.0);
        let filled = ((share * BAR_CELLS as f64).round() as usize).min(BAR_CELLS);
        let bar = format!("{}{}", "█".repeat(filled), "░".repeat(BAR_CELLS - filled));
        let bar = if share >= 0.8 {
            theme.red(&bar)
        } else if share >= 0.5 {
            theme.yellow(&bar)
        } else {
            theme.green(&bar)
        };
        let source = if self.context_source.is_empty() {
            String::new()
        } else {
            format!(" · window: {}", self.context_source)
        };
        format!(
            "Context  {bar}  {} / {} tokens ({:.0}%){source}\n{}\n",
            thousands(self.context_tokens),
            thousands(self.context_window),
            share * 100.0,
            theme.dim(
                "/compact shrinks it; older turns are summarised automatically near the limit"
            )
        )
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_creation_tokens: write,
            context_tokens: input + read + write + output,
            context_window: 200_000,
            context_source: String::new(),
        }
    }

    #[test]
    fn sums_turns_and_estimates_known_models() {
        let mut s = UsageStats::default();
        s.add_turn(&usage(1_000_000, 0, 0, 0));
        s.add_turn(&usage(0, 100_000, 1_000_000, 0));
        assert_eq!(s.turns, 2);
        let usd = s.estimate("claude-sonnet-4-5-20250929").unwrap();
        assert!((usd - (3.0 + 1.5 + 0.3)).abs() < 1e-9, "{usd}");
        assert!(s.estimate("anthropic/claude-sonnet-4").is_some());
        assert_eq!(s.estimate("local-model"), None);
    }

    #[test]
    fn reports_render() {
        let mut s = UsageStats::default();
        s.add_turn(&usage(12_345, 678, 1_000, 0));
        s.observe_call(&usage(50_000, 0, 0, 0));
        let t = Theme::plain();
        insta::assert_snapshot!(format!(
            "{}{}{}",
            s.cost_report(&t, "claude-sonnet-4-5"),
            s.cost_report(&t, "local-model"),
            s.context_report(&t)
        ));
        assert!(
            UsageStats::default()
                .context_report(&t)
                .starts_with("No model call yet")
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
