//! Properties of the router's reading of a command string: it never panics; an agent command
//! receives exactly the words bash would have given it; a second command joined by an operator
//! never rides along into an in-process agent command; a heredoc body arrives verbatim.

use proptest::prelude::*;

use super::*;

fn agent(w: &str) -> bool {
    matches!(
        w,
        "read" | "write" | "edit" | "glob" | "search" | "bash" | "skill" | "tools" | "todo"
    ) || w.starts_with("task:")
}

fn agent_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("read"),
        Just("write"),
        Just("edit"),
        Just("search"),
        Just("bash"),
        Just("todo"),
        Just("task:explore"),
    ]
    .prop_map(str::to_string)
}

/// Words that need no quoting, and words full of what a shell treats specially.
fn plain_word() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_./=,:+-]{1,10}"
}

fn any_word() -> impl Strategy<Value = String> {
    prop_oneof![
        plain_word(),
        "[a-z ]{0,8}",
        "[ '\"\\\\$`;&|<>(){}\n*~#=!-]{1,6}",
        "\\PC{0,10}",
    ]
}

/// `words` as bash source: each quoted so that bash reads it back as exactly that word.
fn quoted(words: &[String]) -> Option<String> {
    let parts: Option<Vec<String>> = words
        .iter()
        .map(|w| shlex::try_quote(w).ok().map(|q| q.into_owned()))
        .collect();
    parts.map(|p| p.join(" "))
}

/// Text that starts like a pasted tool call, then anything (multi-byte characters included).
fn lookalike_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("bash"),
            Just("Bash("),
            Just("BASH "),
            Just("bash {"),
            Just("<invoke"),
            Just("{\"command\":"),
            Just("")
        ],
        "\\PC{0,30}",
    )
        .prop_map(|(head, tail)| format!("{head}{tail}"))
}

proptest! {
    #[test]
    fn any_text_is_classified_without_panic(text in prop_oneof!["\\PC{0,200}", lookalike_text(), "[a-z <>'\"\\\\\n$()`;|&-]{0,60}"]) {
        let route = classify(&text, agent);
        let _ = split_heredoc(&text);
        if let Route::Agent { words, stdin: None } = route {
            prop_assert!(is_simple(text.trim()), "{:?}", text);
            prop_assert!(words.first().is_some_and(|w| agent(w)), "{:?}", words);
        }
    }

    #[test]
    fn an_agent_command_gets_the_words_bash_would_give_it(
        name in agent_name(),
        plain in prop::collection::vec(plain_word(), 0..4),
        hostile in prop::collection::vec(any_word(), 0..4),
    ) {
        let mut words = vec![name.clone()];
        words.extend(plain);
        if let Some(cmd) = quoted(&words) {
            prop_assert_eq!(
                classify(&cmd, agent),
                Route::Agent { words: words.clone(), stdin: None },
                "{:?}", cmd
            );
        }
        words.extend(hostile);
        if let Some(cmd) = quoted(&words) {
            // Unsure cases may go to the real shell, which reads the same words.
            match classify(&cmd, agent) {
                Route::Agent { words: got, stdin: None } => prop_assert_eq!(got, words),
                Route::Native => {}
                other => prop_assert!(false, "{:?} -> {:?}", cmd, other),
            }
        }
    }

    #[test]
    fn a_second_command_never_rides_along(
        a in prop::collection::vec(any_word(), 0..3),
        name in agent_name(),
        op in prop_oneof![
            Just(";"), Just("&&"), Just("||"), Just("|"), Just("&"), Just("\n"), Just(">"),
            Just("<"), Just("$("), Just("`"), Just("("), Just("|&"), Just(">>")
        ],
        b in prop::collection::vec(any_word(), 1..3),
    ) {
        let mut first = vec![name];
        first.extend(a);
        let (Some(a), Some(b)) = (quoted(&first), quoted(&b)) else { return Ok(()) };
        for cmd in [format!("{a} {op} {b}"), format!("{a}{op}{b}")] {
            let route = classify(&cmd, agent);
            prop_assert!(!matches!(route, Route::Agent { .. }), "{:?} -> {:?}", cmd, route);
        }
    }

    #[test]
    fn a_heredoc_body_arrives_verbatim(
        name in agent_name(),
        args in prop::collection::vec(plain_word(), 0..3),
        delim in "[A-Z_]{1,8}",
        style in 0..3usize,
        strip_tabs in any::<bool>(),
        lines in prop::collection::vec(("\t{0,2}", "\\PC{0,24}"), 0..6),
    ) {
        let mut words = vec![name];
        words.extend(args);
        let head = quoted(&words).unwrap_or_default();
        let op = match style { 0 => format!("'{delim}'"), 1 => format!("\"{delim}\""), _ => delim.clone() };
        let dash = if strip_tabs { "-" } else { "" };
        let mut cmd = format!("{head} <<{dash}{op}\n");
        let mut body = String::new();
        for (tabs, text) in &lines {
            let line = format!("{tabs}{text}");
            let kept = if strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
            if kept == delim {
                return Ok(());
            }
            cmd.push_str(&line);
            cmd.push('\n');
            body.push_str(kept);
            body.push('\n');
        }
        cmd.push_str(&delim);
        prop_assert_eq!(
            classify(&cmd, agent),
            Route::Agent { words, stdin: Some(body) },
            "{:?}", cmd
        );
    }
}
