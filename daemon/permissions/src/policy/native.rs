//! Native bash commands: every simple command is judged on its own and the command runs only
//! if every part may. Per part, in auto and ask mode: an ask rule asks; an allow rule allows
//! (outside the sandbox when the part is risky or writes outside the writable folders) — but
//! not a redirect outside them, which the pattern never spelled out; the risky list asks; a
//! write outside the writable folders asks; a write to a path only known at run time asks
//! unless a sandbox contains it; ask mode asks for the rest. Read-only mode refuses write
//! redirects, risky parts and, without a sandbox, anything not known to be read-only.

use super::super::context::Context;
use super::super::parse::{Parsed, parse};
use super::super::parse::{SimpleCommand, unwrap_wrapper};
use super::super::readonly::is_read_only;
use super::super::resolve::{ShellState, resolve, wrapped_candidates};
use super::super::rules::{RuleHit, RuleSet, Verdict};
use super::facts::{Facts, ShellDir};
use super::suggest::suggestion;
use super::{Decision, Mode, allowed_by_rule, denied_by_rule};

/// One part that needs the user.
struct Asking {
    reason: String,
    suggestion: String,
}

pub(super) fn decide(
    command: &str,
    mode: Mode,
    rules: &RuleSet,
    ctx: &Context,
    shell: &ShellState,
) -> Decision {
    let mut parsed = parse(command);
    let resolution = resolve(&parsed, command, shell, ctx.agent_commands);
    if let Some(why) = resolution.refused.first() {
        return Decision::Deny {
            reason: why.clone(),
        };
    }
    parsed.pipelines.extend(resolution.extra);
    for cmd in parsed.all_commands() {
        if let Some(hit) = rules.bash_rule(Verdict::Deny, cmd) {
            return denied_by_rule(&cmd.text, &hit);
        }
    }
    // What the line names may not be what runs: unknown launchers, stdin-fed shells, aliases
    // and functions of the session. Read-only mode refuses it; a deny rule makes it ask even in
    // yolo mode, since the rule cannot be checked.
    let mut unresolved = resolution.opaque;
    unresolved.extend(might_run_denied(&parsed, rules, ctx));
    if !unresolved.is_empty() {
        if mode == Mode::ReadOnly {
            return Decision::Deny {
                reason: format!(
                    "read-only mode: cannot tell what it runs: {}",
                    unresolved.join("; ")
                ),
            };
        }
        if mode == Mode::Yolo && rules.has_bash_deny() {
            return Decision::Ask {
                reason: format!(
                    "cannot tell what it runs, and deny rules are set: {}",
                    unresolved.join("; ")
                ),
                suggestion: String::new(),
                escalate: true,
            };
        }
    }
    if mode == Mode::Yolo && rules.has_bash_deny() && !parsed.opaque.is_empty() {
        return Decision::Ask {
            reason: format!(
                "cannot see what it runs, and deny rules are set: {}",
                parsed.opaque.join("; ")
            ),
            suggestion: String::new(),
            escalate: true,
        };
    }
    parsed.opaque.extend(unresolved);
    match mode {
        Mode::Yolo => Decision::Allow {
            escalate: true,
            note: None,
        },
        Mode::ReadOnly => read_only(&parsed, rules, ctx),
        Mode::Auto | Mode::Ask => approve(&parsed, mode, rules, ctx),
    }
}

/// Commands an unknown program might start that a deny rule refuses.
fn might_run_denied(parsed: &Parsed, rules: &RuleSet, ctx: &Context) -> Vec<String> {
    let mut found = Vec::new();
    for cmd in parsed.all_commands() {
        for inner in wrapped_candidates(cmd, ctx.agent_commands) {
            if let Some(hit) = rules.bash_rule(Verdict::Deny, &inner) {
                found.push(format!(
                    "`{}` may start `{}`, which the deny rule `{}` from {} refuses",
                    cmd.text, inner.text, hit.pattern, hit.source
                ));
                break;
            }
        }
    }
    found
}

fn approve(parsed: &Parsed, mode: Mode, rules: &RuleSet, ctx: &Context) -> Decision {
    let mut asking = Vec::new();
    let mut escalate = false;
    let mut notes = Vec::new();
    if !parsed.opaque.is_empty() {
        asking.push(Asking {
            reason: format!("cannot see what it runs: {}", parsed.opaque.join("; ")),
            suggestion: String::new(),
        });
    }
    let mut dir = ShellDir::Start;
    for pipeline in &parsed.pipelines {
        // Commands a rule-allowed wrapper starts (`sudo apt install x` under
        // `sudo apt install:*`) are allowed with it; they follow it in the pipeline.
        let mut covered: Vec<(Vec<String>, RuleHit)> = Vec::new();
        for cmd in &pipeline.commands {
            let facts = Facts::of(pipeline, cmd, ctx, &dir);
            dir.follow(cmd, ctx);
            // A pattern covers words, never where output goes: no rule can allow a redirect.
            let coverable = facts.redirect_outside.is_empty();
            let ask = |reason: String| Asking {
                reason,
                suggestion: if coverable {
                    suggestion(cmd, facts.needs_exact_rule(), ctx)
                } else {
                    String::new()
                },
            };
            let text = &cmd.text;
            if let Some(hit) = rules.bash_rule(Verdict::Ask, cmd) {
                escalate |= facts.needs_escalation();
                asking.push(ask(format!(
                    "{} the ask rule `{}` from {}",
                    hit.subject(text),
                    hit.pattern,
                    hit.source
                )));
            } else if let Some(hit) = rules.bash_rule(Verdict::Allow, cmd).or_else(|| {
                covered
                    .iter()
                    .find(|(w, _)| *w == cmd.words)
                    .map(|(_, h)| h.clone())
            }) {
                covered.extend(wrapped_chain(cmd).into_iter().map(|w| (w, hit.clone())));
                escalate |= facts.needs_escalation();
                if facts.redirect_outside.is_empty() {
                    notes.push(allowed_by_rule(&hit));
                } else {
                    asking.push(ask(format!(
                        "`{text}` writes outside the writable folders: {} (the rule `{}` covers the command, not where its output goes)",
                        facts.redirect_outside.join(", "),
                        hit.pattern
                    )));
                }
            } else if let Some(risk) = &facts.risk {
                escalate = true;
                asking.push(ask(format!("`{text}`: {risk}")));
            } else if !facts.outside.is_empty() {
                escalate = true;
                asking.push(ask(format!(
                    "`{text}` writes outside the writable folders: {}",
                    facts.outside.join(", ")
                )));
            } else if let Some(cd) = &facts.moved_away {
                asking.push(ask(format!(
                    "`{text}` writes to a relative path after `{cd}` left the working folder"
                )));
            } else if !facts.unknown.is_empty() && !ctx.sandboxed {
                asking.push(ask(format!(
                    "`{text}` writes to a path only known at run time: {}",
                    facts.unknown.join(", ")
                )));
            } else if mode == Mode::Ask {
                asking.push(ask(format!("ask mode: `{text}` needs approval")));
            }
        }
    }
    let Some(first) = asking.first() else {
        notes.dedup();
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        return Decision::Allow { escalate, note };
    };
    Decision::Ask {
        suggestion: first.suggestion.clone(),
        reason: asking
            .iter()
            .map(|a| a.reason.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        escalate,
    }
}

/// The words of the commands `cmd` starts through plain wrappers (`sudo env nice x` → `env nice
/// x`, `nice x`, `x`); not `bash -c` or `find -exec`, whose commands a rule on the outer words
/// never spelled out.
fn wrapped_chain(cmd: &SimpleCommand) -> Vec<Vec<String>> {
    let mut chain = Vec::new();
    let mut words = cmd.words.clone();
    while let Some(inner) = unwrap_wrapper(&words) {
        if chain.len() > 8 {
            break;
        }
        chain.push(inner.words.clone());
        words = inner.words;
    }
    chain
}

fn read_only(parsed: &Parsed, rules: &RuleSet, ctx: &Context) -> Decision {
    if !parsed.opaque.is_empty() && !ctx.sandboxed {
        return Decision::Deny {
            reason: format!(
                "read-only mode: cannot see what it runs: {}",
                parsed.opaque.join("; ")
            ),
        };
    }
    let mut asking: Vec<String> = Vec::new();
    let mut suggestion_text = String::new();
    let mut dir = ShellDir::Start;
    for pipeline in &parsed.pipelines {
        for cmd in &pipeline.commands {
            let risk = Facts::of(pipeline, cmd, ctx, &dir).risk;
            dir.follow(cmd, ctx);
            let text = &cmd.text;
            let writes = cmd.writes();
            let refusal = if !writes.is_empty() {
                Some(format!("`{text}` writes to {}", writes.join(", ")))
            } else if let Some(risk) = risk {
                Some(format!("`{text}`: {risk}"))
            } else if !ctx.sandboxed && !is_read_only(cmd) {
                Some(format!(
                    "`{text}` is not a command known to only read (and no sandbox stops its writes)"
                ))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Decision::Deny {
                    reason: format!("read-only mode: {refusal}"),
                };
            }
            if let Some(hit) = rules.bash_rule(Verdict::Ask, cmd) {
                if asking.is_empty() {
                    suggestion_text = suggestion(cmd, false, ctx);
                }
                asking.push(format!(
                    "{} the ask rule `{}` from {}",
                    hit.subject(text),
                    hit.pattern,
                    hit.source
                ));
            }
        }
    }
    if asking.is_empty() {
        return Decision::Allow {
            escalate: false,
            note: None,
        };
    }
    Decision::Ask {
        reason: asking.join("; "),
        suggestion: suggestion_text,
        escalate: false,
    }
}
