//! The lines printed when the REPL starts or reattaches: version, model, session id and cwd,
//! and a reminder of the keys.

use synapse_session::Opened;

use super::theme::Theme;

/// The start-up banner.
pub fn banner(theme: &Theme, version: &str, opened: &Opened) -> String {
    let mut out = format!(
        "{} {}\n",
        theme.cyan("✻"),
        theme.bold(&format!("Synapse {version}"))
    );
    let model = if opened.model.is_empty() {
        "(not configured)"
    } else {
        &opened.model
    };
    out.push_str(&format!("  {}    {model}\n", theme.dim("model")));
    out.push_str(&format!(
        "  {}  {}\n",
        theme.dim("session"),
        session_label(opened)
    ));
    out.push_str(&format!("  {}      {}\n", theme.dim("cwd"), opened.cwd));
    out.push_str(&theme.dim(
        "  /help for commands · !<command> runs in your shell · Ctrl-C cancels · Ctrl-D exits",
    ));
    out.push('\n');
    for warning in &opened.warnings {
        out.push_str(&theme.yellow(&format!("  warning: {warning}")));
        out.push('\n');
    }
    if opened.broken_skills > 0 {
        let n = opened.broken_skills;
        let noun = if n == 1 { "skill" } else { "skills" };
        out.push_str(&theme.yellow(&format!(
            "  warning: {n} {noun} could not be loaded; `synapse skill list` shows why"
        )));
        out.push('\n');
    }
    out
}

/// `<id> (new)` or `<id> (resumed, N messages)`.
pub fn session_label(opened: &Opened) -> String {
    if opened.resumed {
        let noun = if opened.messages == 1 {
            "message"
        } else {
            "messages"
        };
        format!(
            "{} (resumed, {} {noun})",
            opened.session_id, opened.messages
        )
    } else {
        format!("{} (new)", opened.session_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_names_version_model_session_and_cwd() {
        let opened = Opened {
            session_id: "20250101-120000-abcd".into(),
            model: "claude-sonnet-4-5".into(),
            cwd: "/home/me/project".into(),
            resumed: true,
            messages: 4,
            warnings: vec!["1 command(s) were interrupted".into()],
            turns: 2,
            turn_running: false,
            broken_skills: 0,
            instructions: vec![],
        };
        insta::assert_snapshot!(banner(&Theme::plain(), "0.1.0", &opened));
    }

    #[test]
    fn broken_skills_are_named_at_start() {
        let opened = Opened {
            session_id: "s".into(),
            broken_skills: 2,
            ..Opened::default()
        };
        let text = banner(&Theme::plain(), "0.1.0", &opened);
        assert!(
            text.contains("warning: 2 skills could not be loaded; `synapse skill list` shows why"),
            "{text}"
        );
    }
}
