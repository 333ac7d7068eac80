//! `--fallback-model`: when a turn's model call fails because the model is overloaded or
//! unavailable (Anthropic's 529, a 5xx, a 429 whose retries ran out, a 404 for a model the
//! server does not have), the turn goes on with the next fallback model, and the user is told
//! which model took over and why. Nothing else falls back: a rejected key or a bad request fails
//! the same way with any model. The main model is tried again at the next turn's start.

use crate::agent::events::TurnEnd;

/// Whether `end` is a failure another model might not have.
pub(super) fn model_unavailable(end: &TurnEnd) -> bool {
    let TurnEnd::Error(failure) = end else {
        return false;
    };
    matches!(failure.kind.as_str(), "retries_exhausted" | "rate_limited")
        || failure
            .status
            .is_some_and(|s| matches!(s, 404 | 429 | 500 | 502 | 503 | 504 | 529))
}

/// What the user is told when `next` takes over from `model`.
pub(super) fn notice(model: &str, next: &str, end: &TurnEnd) -> String {
    let why = match end {
        TurnEnd::Error(f) => f.message.as_str(),
        _ => "unavailable",
    };
    format!(
        "model {model} is overloaded or unavailable ({why}); falling back to {next} (--fallback-model)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::events::TurnFailure;

    fn failed(kind: &str, status: Option<u16>) -> TurnEnd {
        TurnEnd::Error(TurnFailure {
            kind: kind.into(),
            message: "m".into(),
            status,
        })
    }

    #[test]
    fn only_an_overloaded_or_missing_model_falls_back() {
        assert!(model_unavailable(&failed("api", Some(529))));
        assert!(model_unavailable(&failed("api", Some(404))));
        assert!(model_unavailable(&failed("retries_exhausted", None)));
        assert!(!model_unavailable(&failed("auth", Some(401))));
        assert!(!model_unavailable(&failed("api", Some(400))));
        assert!(!model_unavailable(&TurnEnd::Completed));
    }
}
