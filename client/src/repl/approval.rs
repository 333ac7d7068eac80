//! Approval requests: the daemon asks before something its permission policy does not allow
//! on its own (a risky command, a write outside the project, a skill marked `ask`). The REPL
//! shows what is asked and why, and takes y / n / s / a: `s` allows it for the rest of this
//! session, `a` always (the daemon saves the rule shown to the rules file shown). The answer
//! goes back on the chat stream.

use synapse_session::ApprovalQuestion;

use crate::render::safe_text::strip_controls;
use crate::render::theme::Theme;

/// The prompt rustyline shows while waiting for an answer.
pub const ANSWER_PROMPT: &str = "Allow? [y]es / [n]o / [s]ession / [a]lways: ";

pub use synapse_session::Decision;

/// Parses what the user typed; `None` asks again.
pub fn parse_answer(text: &str) -> Option<Decision> {
    match text.trim().to_lowercase().as_str() {
        "y" | "yes" => Some(Decision::Yes),
        "n" | "no" => Some(Decision::No),
        "s" | "session" => Some(Decision::Session),
        "a" | "always" => Some(Decision::Always),
        _ => None,
    }
}

/// What is asked, printed before the answer prompt: the question, why, and what "always"
/// would save where.
pub fn question(theme: &Theme, request: &ApprovalQuestion) -> String {
    // The detail may quote a server (a sampling request's messages): shown, never obeyed.
    let title = strip_controls(&request.title);
    let mut out = format!("{} {}\n", theme.yellow("?"), theme.bold(&title));
    for line in strip_controls(&request.detail).lines() {
        out.push_str(&format!("  {}\n", theme.dim(line)));
    }
    if !request.pattern.is_empty() {
        out.push_str(&format!(
            "  {}\n",
            theme.dim(&format!(
                "[a]lways saves the rule `{}` to {}",
                request.pattern, request.rules_file
            ))
        ));
    }
    out
}

/// The line printed after answering.
pub fn outcome(theme: &Theme, decision: Decision, request: &ApprovalQuestion) -> String {
    match decision {
        Decision::Yes => format!("{} allowed\n", theme.green("✓")),
        Decision::Session => format!(
            "{} allowed for the rest of this session\n",
            theme.green("✓")
        ),
        Decision::Always if !request.pattern.is_empty() => format!(
            "{} allowed; `{}` saved to {}\n",
            theme.green("✓"),
            request.pattern,
            request.rules_file
        ),
        Decision::Always => format!(
            "{} allowed for the rest of this session\n",
            theme.green("✓")
        ),
        Decision::No => format!("{} denied\n", theme.red("✗")),
    }
}

/// A question that closed before this front end answered: answered at another front end of the
/// session (the first answer wins), timed out, or withdrawn with its turn.
pub fn closed_elsewhere(theme: &Theme, closed: &synapse_session::QuestionClosed) -> String {
    use synapse_session::ClosedWhy;
    let answer = crate::render::safe_text::strip_controls(&closed.answer);
    match closed.why {
        ClosedWhy::Answered => theme.dim(&format!(
            "Answered at another front end of this session: {answer}\n"
        )),
        ClosedWhy::TimedOut => theme.dim(&format!(
            "Nobody answered in time (questions.timeoutSecs): {answer}\n"
        )),
        ClosedWhy::Withdrawn => theme.dim("The question was withdrawn.\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ApprovalQuestion {
        ApprovalQuestion {
            id: "r1".into(),
            call_id: String::new(),
            options: Vec::new(),
            title: "Load skill `deploy`?".into(),
            detail: "permissions.skill says ask for deploy\nIt can run scripts/release.sh".into(),
            pattern: String::new(),
            rules_file: String::new(),
        }
    }

    fn command_request() -> ApprovalQuestion {
        ApprovalQuestion {
            id: "r2".into(),
            call_id: String::new(),
            options: Vec::new(),
            title: "Run `git push --force`?".into(),
            detail: "force-push rewrites the remote branch".into(),
            pattern: "git push --force:*".into(),
            rules_file: "/home/u/.synapse/settings.json".into(),
        }
    }

    #[test]
    fn answers_map_to_wire_decisions() {
        assert_eq!(parse_answer("y").map(Decision::as_str), Some("yes"));
        assert_eq!(parse_answer(" YES ").map(Decision::as_str), Some("yes"));
        assert_eq!(parse_answer("n").map(Decision::as_str), Some("no"));
        assert_eq!(parse_answer("s").map(Decision::as_str), Some("session"));
        assert_eq!(parse_answer("a").map(Decision::as_str), Some("always"));
        assert_eq!(parse_answer("maybe"), None);
        assert_eq!(parse_answer(""), None);
    }

    #[test]
    fn question_and_outcomes_render() {
        let t = Theme::plain();
        let r = request();
        let c = command_request();
        let shown = format!(
            "{}{ANSWER_PROMPT}y\n{}{}{}{}{ANSWER_PROMPT}a\n{}",
            question(&t, &r),
            outcome(&t, Decision::Yes, &r),
            outcome(&t, Decision::No, &r),
            outcome(&t, Decision::Session, &r),
            question(&t, &c),
            outcome(&t, Decision::Always, &c),
        );
        insta::assert_snapshot!(shown);
    }
}
