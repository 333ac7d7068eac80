//! `synapse run --dangerously-skip-permissions`, Claude Code's bypass mode: every question is
//! answered yes, but the answer keeps the command inside the sandbox (Synapse's sandbox is not a
//! permission prompt, so skipping prompts does not skip it). A question whose command could not
//! stay inside — an agent command writing outside the sandbox's folders, a line that needs to
//! leave a sandbox this system does not have — is refused, saying why. Deny rules, read-only
//! mode and the rules files' own questions are untouched (the caller leaves those out).

use synapse_permissions::Decision;

/// The flag, as the audit and the model read it.
pub(super) const FLAG: &str = "--dangerously-skip-permissions";

/// `decision` under bypass mode; `beyond` says why the command could not stay in the sandbox.
pub(super) fn weighed(decision: Decision, beyond: Option<String>) -> Decision {
    match decision {
        Decision::Ask { reason, .. } => match beyond {
            None => Decision::Allow {
                escalate: false,
                note: Some(format!("allowed by {FLAG}, inside the sandbox")),
            },
            Some(why) => Decision::Deny {
                reason: format!(
                    "{reason}; {FLAG} answers questions but never widens the sandbox ({why})"
                ),
            },
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(escalate: bool) -> Decision {
        Decision::Ask {
            reason: "writes outside".into(),
            suggestion: "touch:*".into(),
            escalate,
        }
    }

    #[test]
    fn a_question_becomes_a_sandboxed_run_or_a_refusal() {
        assert!(matches!(
            weighed(ask(true), None),
            Decision::Allow {
                escalate: false,
                ..
            }
        ));
        let Decision::Deny { reason } = weighed(ask(false), Some("x is outside".into())) else {
            panic!("not refused");
        };
        assert!(
            reason.contains(FLAG) && reason.contains("x is outside"),
            "{reason}"
        );
        let deny = Decision::Deny {
            reason: "rule".into(),
        };
        assert!(matches!(weighed(deny, None), Decision::Deny { .. }));
    }
}
