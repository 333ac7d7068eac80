//! Approval requests: the daemon asks before something it may not do on its own (a skill with
//! `ask` permission, later risky commands). The REPL shows what is asked and takes y / n / a;
//! `a` allows it for the rest of this session. The answer goes back on the chat stream.

use synapse_shared::proto::ApprovalRequest;

use crate::render::theme::Theme;

/// The prompt rustyline shows while waiting for an answer.
pub const ANSWER_PROMPT: &str = "Allow? [y]es / [n]o / [a]lways this session: ";

/// An answer, as the wire names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Yes,
    No,
    /// Allowed for the rest of this session.
    Session,
}

impl Decision {
    pub fn wire(self) -> &'static str {
        match self {
            Decision::Yes => "yes",
            Decision::No => "no",
            Decision::Session => "session",
        }
    }
}

/// Parses what the user typed; `None` asks again.
pub fn parse_answer(text: &str) -> Option<Decision> {
    match text.trim().to_lowercase().as_str() {
        "y" | "yes" => Some(Decision::Yes),
        "n" | "no" => Some(Decision::No),
        "a" | "always" => Some(Decision::Session),
        _ => None,
    }
}

/// What is asked, printed before the answer prompt.
pub fn question(theme: &Theme, request: &ApprovalRequest) -> String {
    let mut out = format!("{} {}\n", theme.yellow("?"), theme.bold(&request.title));
    for line in request.detail.lines() {
        out.push_str(&format!("  {}\n", theme.dim(line)));
    }
    out
}

/// The line printed after answering.
pub fn outcome(theme: &Theme, decision: Decision) -> String {
    match decision {
        Decision::Yes => format!("{} allowed\n", theme.green("✓")),
        Decision::Session => format!(
            "{} allowed for the rest of this session\n",
            theme.green("✓")
        ),
        Decision::No => format!("{} denied\n", theme.red("✗")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            request_id: "r1".into(),
            title: "Load skill `deploy`?".into(),
            detail: "permissions.skill says ask for deploy\nIt can run scripts/release.sh".into(),
        }
    }

    #[test]
    fn answers_map_to_wire_decisions() {
        assert_eq!(parse_answer("y").map(Decision::wire), Some("yes"));
        assert_eq!(parse_answer(" YES ").map(Decision::wire), Some("yes"));
        assert_eq!(parse_answer("n").map(Decision::wire), Some("no"));
        assert_eq!(parse_answer("a").map(Decision::wire), Some("session"));
        assert_eq!(parse_answer("maybe"), None);
        assert_eq!(parse_answer(""), None);
    }

    #[test]
    fn question_and_outcomes_render() {
        let t = Theme::plain();
        let shown = format!(
            "{}{ANSWER_PROMPT}y\n{}{}{}",
            question(&t, &request()),
            outcome(&t, Decision::Yes),
            outcome(&t, Decision::No),
            outcome(&t, Decision::Session)
        );
        insta::assert_snapshot!(shown);
    }
}
