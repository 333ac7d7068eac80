//! How long one submitted line may run: `shell.defaultTimeoutSec` (default 120) for a call that
//! names no timeout, raisable per command (`bash --timeout N`) up to `shell.maxTimeoutSec`
//! (default 600). Read from settings.json before each call, so an edit applies to the next one.

use std::time::Duration;

use serde_json::Value;
use synapse_shared::settings::Settings;

/// Timeout of a command when the call gives none.
pub const COMMAND_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);
/// Longest timeout a call may ask for.
pub const COMMAND_TIMEOUT_MAX: Duration = Duration::from_secs(600);

/// Longest maximum a setting may configure: one day. Longer work belongs in a background job.
const MAX_TIMEOUT_CEILING: Duration = Duration::from_secs(24 * 60 * 60);

/// The timeout limits of a session's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For a call that names none.
    pub default: Duration,
    /// The most a call or `bash --timeout` may ask for.
    pub max: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            default: COMMAND_TIMEOUT_DEFAULT,
            max: COMMAND_TIMEOUT_MAX,
        }
    }
}

impl Timeouts {
    /// The limits `settings` configure under `shell`; a key that is missing or not a positive
    /// number keeps its default (and is logged). The default never exceeds the maximum.
    pub fn from_settings(settings: &Settings) -> Self {
        let shell = settings.other.get("shell");
        let read = |key: &str, fallback: Duration| -> Duration {
            match shell.and_then(|s| s.get(key)) {
                None | Some(Value::Null) => fallback,
                Some(v) => match v.as_f64() {
                    Some(secs) if secs.is_finite() && secs > 0.0 => {
                        Duration::from_secs_f64(secs).min(MAX_TIMEOUT_CEILING)
                    }
                    _ => {
                        tracing::warn!(
                            "settings.json: shell.{key} must be a positive number of seconds \
                             (got {v}); using {} s",
                            fallback.as_secs()
                        );
                        fallback
                    }
                },
            }
        };
        let max = read("maxTimeoutSec", COMMAND_TIMEOUT_MAX);
        let default = read("defaultTimeoutSec", COMMAND_TIMEOUT_DEFAULT).min(max);
        Self { default, max }
    }

    /// The timeout for a call asking for `asked` (none: the default), held to the maximum.
    pub fn for_call(&self, asked: Option<Duration>) -> Duration {
        asked.unwrap_or(self.default).min(self.max)
    }

    /// The timeout of a whole submitted line: [`Timeouts::for_call`], raised to the longest
    /// `bash --timeout N` the line holds anywhere (in a list, a pipe or `$(…)`), so that option
    /// means the same inside a compound line as on its own.
    pub fn for_line(&self, line: &str, asked: Option<Duration>) -> Duration {
        let base = self.for_call(asked);
        if !line.contains("--timeout") {
            return base;
        }
        synapse_permissions::parse(line)
            .all_commands()
            .filter_map(|cmd| match cmd.words.as_slice() {
                [bash, flag, secs, ..] if bash == "bash" && flag == "--timeout" => {
                    self.parse(secs).ok()
                }
                _ => None,
            })
            .fold(base, Duration::max)
    }

    /// `--timeout` seconds as written: positive and at most the maximum, else a message saying
    /// what is allowed and how to run longer work.
    pub fn parse(&self, word: &str) -> Result<Duration, String> {
        let max = self.max.as_secs_f64();
        match word.parse::<f64>() {
            Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= max => {
                Ok(Duration::from_secs_f64(secs))
            }
            Ok(secs) if secs.is_finite() && secs > max => Err(format!(
                "--timeout {word} is over the limit of {max} s (settings.json \
                 shell.maxTimeoutSec); run longer work as a background job: `job start '<cmd>'`, \
                 then `job read ID`"
            )),
            _ => Err(format!(
                "--timeout expects a positive number of seconds up to {max} (got {word:?})"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_timeout_anywhere_in_a_line_raises_the_line_timeout() {
        let t = Timeouts::default();
        assert_eq!(t.for_line("echo hi", None), t.default);
        assert_eq!(
            t.for_line("bash --timeout 300 'make' | tail -5", None),
            Duration::from_secs(300)
        );
        assert_eq!(
            t.for_line("x=$(bash --timeout 200 'sleep 1'); echo $x", None),
            Duration::from_secs(200)
        );
        assert_eq!(
            t.for_line("bash --timeout 5 'echo hi' | cat", None),
            t.default
        );
        assert_eq!(t.for_line("bash --timeout 9999 x; true", None), t.default);
    }

    fn settings(shell: Value) -> Settings {
        let mut s = Settings::default();
        s.other.insert("shell".into(), shell);
        s
    }

    #[test]
    fn settings_set_the_default_and_the_maximum() {
        let t = Timeouts::from_settings(&settings(serde_json::json!({
            "defaultTimeoutSec": 30, "maxTimeoutSec": 900
        })));
        assert_eq!(t.default, Duration::from_secs(30));
        assert_eq!(t.max, Duration::from_secs(900));
        assert_eq!(t.for_call(None), Duration::from_secs(30));
        assert_eq!(t.for_call(Some(Duration::from_secs(5000))), t.max);
        assert_eq!(t.parse("900"), Ok(Duration::from_secs(900)));
        let err = t.parse("901").unwrap_err();
        assert!(
            err.contains("over the limit of 900 s") && err.contains("job start"),
            "{err}"
        );
    }

    #[test]
    fn missing_or_bad_values_keep_the_defaults() {
        assert_eq!(
            Timeouts::from_settings(&Settings::default()),
            Timeouts::default()
        );
        let t = Timeouts::from_settings(&settings(serde_json::json!({
            "defaultTimeoutSec": "soon", "maxTimeoutSec": -1
        })));
        assert_eq!(t, Timeouts::default());
        let low_max = Timeouts::from_settings(&settings(serde_json::json!({"maxTimeoutSec": 60})));
        assert_eq!(low_max.default, Duration::from_secs(60));
        assert!(Timeouts::default().parse("0").is_err() && Timeouts::default().parse("x").is_err());
    }
}
