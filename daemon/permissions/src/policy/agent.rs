//! In-process agent commands (`read`, `write`, `edit`, `task:*`, …): judged by the effect the
//! command declares, with the bash rules applied to the command string's words.

use std::path::PathBuf;

use super::super::context::Context;
use super::super::parse::parse;
use super::super::readonly::is_read_only;
use super::super::rules::{RuleSet, Verdict};
use super::{Decision, Effect, Mode, allowed_by_rule, denied_by_rule};

pub(super) fn decide(
    name: &str,
    command: &str,
    effect: &Effect,
    mode: Mode,
    rules: &RuleSet,
    ctx: &Context,
) -> Decision {
    let parsed = parse(command);
    let commands: Vec<_> = parsed.all_commands().collect();
    for cmd in &commands {
        if let Some(hit) = rules.bash_rule(Verdict::Deny, cmd) {
            return denied_by_rule(&cmd.text, &hit);
        }
    }
    if mode == Mode::Yolo {
        return Decision::Allow {
            escalate: true,
            note: None,
        };
    }
    let suggestion = agent_suggestion(name, effect, commands.first().map(|c| c.words.as_slice()));
    let ask = |reason: String| Decision::Ask {
        reason,
        suggestion: suggestion.clone(),
        escalate: false,
    };
    let allow = Decision::Allow {
        escalate: false,
        note: None,
    };
    let ask_rule = commands
        .iter()
        .find_map(|c| rules.bash_rule(Verdict::Ask, c));
    let allow_rule = match commands.as_slice() {
        [] => None,
        all => all
            .iter()
            .map(|c| rules.bash_rule(Verdict::Allow, c))
            .collect::<Option<Vec<_>>>()
            .and_then(|hits| hits.into_iter().next()),
    };
    if mode == Mode::ReadOnly {
        if let Some(refusal) = read_only_refusal(name, command, effect, &parsed) {
            return Decision::Deny {
                reason: format!("read-only mode: {refusal}"),
            };
        }
    } else if let Some(hit) = &allow_rule
        && ask_rule.is_none()
    {
        return Decision::Allow {
            escalate: false,
            note: Some(allowed_by_rule(hit)),
        };
    }
    if let Some(hit) = ask_rule {
        return ask(format!(
            "{} the ask rule `{}` from {}",
            hit.subject(command),
            hit.pattern,
            hit.source
        ));
    }
    match (mode, effect) {
        (Mode::Auto, Effect::Writes(paths)) => {
            let outside: Vec<String> = paths
                .iter()
                .filter(|p| !ctx.is_writable(p))
                .map(|p| ctx.show(p))
                .collect();
            if outside.is_empty() {
                allow
            } else {
                ask(format!(
                    "`{name}` writes outside the writable folders: {}",
                    outside.join(", ")
                ))
            }
        }
        (Mode::Ask, Effect::Writes(_) | Effect::Other) => {
            ask(format!("ask mode: `{name}` needs approval"))
        }
        _ => allow,
    }
}

/// Why read-only mode refuses the agent command, if it does.
fn read_only_refusal(
    name: &str,
    command: &str,
    effect: &Effect,
    parsed: &super::super::parse::Parsed,
) -> Option<String> {
    match effect {
        Effect::ReadOnly | Effect::SubAgent { read_only: true } => None,
        Effect::Writes(paths) => Some(format!("`{name}` writes {}", show_paths(paths))),
        Effect::SubAgent { read_only: false } => {
            Some("sub-agents run as task:explore only".to_string())
        }
        Effect::Other => {
            let known = parsed.opaque.is_empty()
                && parsed.all_commands().next().is_some()
                && parsed.all_commands().all(is_read_only);
            (!known).then(|| format!("`{command}` is not known to only read"))
        }
    }
}

fn show_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `write /etc/hosts:*` for a write (the path is what was approved), `skill search:*` for a
/// command with a subcommand (its first word, when that is a plain lowercase word), `name:*`
/// otherwise.
fn agent_suggestion(name: &str, effect: &Effect, words: Option<&[String]>) -> String {
    let quote = |w: &String| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned());
    let subcommand = |w: &String| {
        w.len() <= 24
            && w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
    };
    match (effect, words) {
        (Effect::Writes(_), Some(words)) if words.len() >= 2 => {
            format!("{} {}:*", quote(&words[0]), quote(&words[1]))
        }
        (_, Some([first, sub, _, ..])) if first == name && subcommand(sub) => {
            format!("{name} {sub}:*")
        }
        _ => format!("{name}:*"),
    }
}
