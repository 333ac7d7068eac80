//! When and how long to wait before trying a model call again. The transport asks
//! [`is_retryable_status`] about each failed response, reads the server's wish from
//! [`server_retry_delay`], and otherwise waits [`RetryPolicy::backoff`].

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use reqwest::header::HeaderMap;

/// How often and how patiently a call is retried. Tests shrink `base_delay` so backoff is quick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in total, the first one included.
    pub max_attempts: u32,
    /// The wait before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// The longest computed backoff.
    pub max_delay: Duration,
    /// The longest `retry-after` we honour; a longer one fails the call at once.
    pub max_server_delay: Duration,
    /// Time from sending a request to the first byte of the answer's body.
    pub first_byte_timeout: Duration,
    /// Time allowed between two chunks of a streaming answer.
    pub idle_timeout: Duration,
    /// Time allowed for the whole call, retries and waits included; no retry starts past it.
    pub budget: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(1_000),
            max_delay: Duration::from_secs(30),
            max_server_delay: Duration::from_secs(120),
            first_byte_timeout: crate::limits::FIRST_BYTE_TIMEOUT_DEFAULT,
            idle_timeout: crate::limits::IDLE_TIMEOUT_DEFAULT,
            budget: crate::limits::RETRY_BUDGET_DEFAULT,
        }
    }
}

impl RetryPolicy {
    /// The default policy with the timeouts and budget of settings.json's `"llm"` object.
    pub fn from_settings(llm: &crate::limits::LlmSettings) -> Self {
        Self {
            first_byte_timeout: llm.first_byte_timeout(),
            idle_timeout: llm.idle_timeout(),
            budget: llm.retry_budget(),
            ..Self::default()
        }
    }

    /// Exponential backoff with jitter for the wait after failed try number `failed_attempt`
    /// (1-based): `base * 2^(n-1)`, capped, then scaled by a random factor in [0.75, 1.0] so many
    /// sessions hitting an overloaded API do not retry in lockstep.
    pub fn backoff(&self, failed_attempt: u32) -> Duration {
        let exponent = failed_attempt.saturating_sub(1).min(16);
        let raw = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        raw.mul_f64(0.75 + 0.25 * unit_random())
    }
}

/// Statuses worth another try: rate limits, timeouts, server errors and Anthropic's 529.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// The wait the server asked for: `retry-after-ms` (milliseconds) or `retry-after` (seconds).
pub fn server_retry_delay(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    // An HTTP date is also allowed here; the model APIs send seconds, so a date falls back to
    // our own backoff.
    header("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// Anthropic's explicit hint: `x-should-retry: true|false` overrides the status code.
pub fn server_should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    }
}

/// A random number in [0, 1) from the standard library's randomly keyed hasher; jitter needs no
/// cryptographic quality and this spares a dependency.
fn unit_random() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() as u64)
            .unwrap_or(0),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!(
                d1 >= Duration::from_millis(75) && d1 <= Duration::from_millis(100),
                "{d1:?}"
            );
            let d2 = p.backoff(2);
            assert!(
                d2 >= Duration::from_millis(150) && d2 <= Duration::from_millis(200),
                "{d2:?}"
            );
            let d4 = p.backoff(4);
            assert!(d4 <= Duration::from_millis(350), "{d4:?}");
        }
    }

    #[test]
    fn retry_after_headers_are_read_in_their_units() {
        let mut h = HeaderMap::new();
        assert_eq!(server_retry_delay(&h), None);
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(server_retry_delay(&h), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(server_retry_delay(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(server_retry_delay(&h), None);
    }

    #[test]
    fn retryable_statuses() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }
}
