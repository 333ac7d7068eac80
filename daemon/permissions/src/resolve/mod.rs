//! Judging what will really run: each simple command's name is resolved against the session
//! shell's state ([`ShellState`]: aliases, functions, `hash -p`, a changed `PATH`, hook traps)
//! before the rules see it, and shell syntax that hides the program is named instead of guessed.
//!
//! [`resolve`] adds, for a parsed line, the commands an alias or a hashed path really starts
//! (so `alias read='rm -f'` then `read x` is judged as `rm -f x`), and reports as opaque what it
//! cannot resolve with certainty: shells fed from stdin (`… | bash`, `bash -s`,
//! `bash /dev/stdin`; a here-string is read instead), brace expansion or a glob as the command
//! name, `{}` filled in by `find`/`xargs`, functions defined in the session, any external
//! command after `PATH` changed, hook traps, variables such as `BASH_ENV`, and functions handed
//! to child shells through the environment (`BASH_FUNC_f%%`, `export -f`). Defining a
//! function or alias with the agent's internal prefix is refused outright.
//! [`wrapped_candidates`] names what an unknown program might start from its arguments, for
//! the deny-rule check.

pub(crate) mod names;
mod state;
mod tokens;

#[cfg(test)]
mod tests;

pub use state::ShellState;

use super::agent_commands::AgentCommands;
use super::parse::{Parsed, Pipeline, RedirectOp, SimpleCommand, parse_nested};
use names::{is_builtin, is_plain_program, stdin_shell};
use state::{HOOK_VARS, snippet};
use tokens::{assigns, mentions};

/// Prefix of the agent's own shell functions and variables (`__synapse_agent`).
pub const INTERNAL_PREFIX: &str = "__synapse_";
/// How bash hands a function to a child process in its environment (`BASH_FUNC_f%%=() {…}`).
pub(crate) const FUNCTION_ENV_PREFIX: &str = "BASH_FUNC_";
/// How many aliases deep an expansion is followed.
const MAX_ALIAS_DEPTH: usize = 8;

/// What resolving a line found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    /// Commands that really run in place of what the line names (alias expansions, hashed
    /// paths), to be judged like the line's own.
    pub extra: Vec<Pipeline>,
    /// Why some part cannot be resolved with certainty.
    pub opaque: Vec<String>,
    /// Why the line is refused whatever the mode.
    pub refused: Vec<String>,
}

/// Resolves every command of `parsed` (read from `line`) against `state`; `agent` names the
/// agent commands the shell defines.
pub fn resolve(
    parsed: &Parsed,
    line: &str,
    state: &ShellState,
    agent: &AgentCommands,
) -> Resolution {
    let mut out = Resolution::default();
    if let Some(why) = &state.unknown {
        out.opaque.push(format!(
            "this shell's aliases, functions and PATH are unknown since {why} (restart the shell to check commands again)"
        ));
    }
    for (signal, action) in &state.traps {
        out.opaque.push(format!(
            "a {signal} trap set in this shell runs `{}` around every command",
            snippet(action)
        ));
    }
    if state.functions.contains("command_not_found_handle") {
        out.opaque
            .push("`command_not_found_handle` runs in place of any unknown command".to_string());
    }
    for var in HOOK_VARS {
        if mentions(line, var) > 0 {
            out.opaque.push(format!(
                "`{var}` makes the programs it reaches run code of its choosing first"
            ));
        }
    }
    exported_functions(parsed, line, &mut out);
    for name in parsed
        .functions
        .iter()
        .chain(defined_aliases(parsed).iter())
    {
        if name.starts_with(INTERNAL_PREFIX) {
            out.refused.push(format!(
                "`{name}` is an internal name of the agent's shell and cannot be redefined"
            ));
        }
    }
    for cmd in parsed.all_commands() {
        resolve_command(cmd, state, agent, &mut out, 0);
    }
    out.opaque.dedup();
    out
}

/// Functions handed to child processes through the environment (`env 'BASH_FUNC_f%%=() { …; }'
/// bash -c f`, `export -f f`): a child bash runs them in place of the command it names, so the
/// line is opaque like `BASH_ENV`. A body written out in the line is judged as well, so a deny
/// rule refuses what it would run.
fn exported_functions(parsed: &Parsed, line: &str, out: &mut Resolution) {
    let mut through_env = line.contains(FUNCTION_ENV_PREFIX);
    for cmd in parsed.all_commands() {
        for word in cmd.words.iter().chain(&cmd.assignments) {
            let Some(rest) = word.strip_prefix(FUNCTION_ENV_PREFIX) else {
                continue;
            };
            through_env = true;
            if let Some((_, body)) = rest.split_once('=')
                && body.trim_start().starts_with("()")
            {
                out.extra
                    .extend(parse_nested(&format!("f{body}"), 1).pipelines);
            }
        }
        let Some(first) = cmd.words.first() else {
            continue;
        };
        let flags: String = cmd.words[1..]
            .iter()
            .filter(|w| w.starts_with('-') && !w.starts_with("--"))
            .flat_map(|w| w.chars().skip(1))
            .collect();
        let exports = match first.as_str() {
            "export" => flags.contains('f') && !flags.contains('n'),
            "declare" | "typeset" | "local" => flags.contains('f') && flags.contains('x'),
            _ => false,
        };
        if exports {
            out.opaque.push(format!(
                "`{}` hands a shell function to child processes, which run it in place of the command it names",
                cmd.text
            ));
        }
    }
    if through_env {
        out.opaque.push(
            "a `BASH_FUNC_…` variable defines a function in child shells, which run it in place of the command it names".to_string(),
        );
    }
}

fn defined_aliases(parsed: &Parsed) -> Vec<String> {
    parsed
        .all_commands()
        .filter(|c| c.words.first().is_some_and(|w| w == "alias"))
        .flat_map(|c| c.words[1..].iter())
        .filter_map(|a| a.split_once('=').map(|(n, _)| n.to_string()))
        .collect()
}

fn resolve_command(
    cmd: &SimpleCommand,
    state: &ShellState,
    agent: &AgentCommands,
    out: &mut Resolution,
    depth: usize,
) {
    let Some(name) = cmd.words.first() else {
        return;
    };
    let name = name.as_str();
    if name == "{}" {
        out.opaque.push(format!(
            "`{}` runs a program whose name is filled in at run time",
            cmd.text
        ));
    } else if name.contains('{')
        && name.contains('}')
        && (name.contains(',') || name.contains(".."))
    {
        out.opaque
            .push(format!("brace expansion in the command name `{name}`"));
    } else if !matches!(name, "[" | "[[") && name.contains(['*', '?', '[']) {
        out.opaque
            .push(format!("the command name `{name}` is a glob pattern"));
    }
    match name {
        "trap" => {
            let mut probe = ShellState::default();
            probe.record_parsed(&parse_nested(&cmd.text, 1), "");
            if let Some((signal, action)) = probe.traps.iter().next() {
                out.opaque.push(format!(
                    "a {signal} trap would run `{}` around every later command",
                    snippet(action)
                ));
            }
        }
        "enable"
            if cmd.words[1..]
                .iter()
                .any(|a| !matches!(a.as_str(), "-a" | "-p" | "-s")) =>
        {
            out.opaque.push(format!(
                "`{}` changes which builtins the shell has",
                cmd.text
            ));
        }
        _ => {}
    }
    if let Some(shell) = stdin_shell(&cmd.words) {
        match cmd
            .redirects
            .iter()
            .find(|r| r.op == RedirectOp::HereString)
        {
            Some(here) => push_nested(&here.target, out),
            None => out.opaque.push(format!(
                "`{}`: {shell} reads its commands from stdin, which this check cannot see",
                cmd.text
            )),
        }
    }
    let bare = !name.contains('/');
    if bare {
        if let Some(value) = state.aliases.get(name) {
            expand_alias(cmd, value, state, agent, out, depth);
        }
        if state.functions.contains(name) {
            out.opaque.push(format!(
                "`{name}` is a shell function defined in this session; what it runs with these arguments cannot be checked"
            ));
        }
        if let Some(path) = state.hashed.get(name) {
            let mut words = cmd.words.clone();
            words[0] = path.clone();
            out.extra.push(pipeline(SimpleCommand::derived(
                words,
                cmd.assignments.clone(),
            )));
        }
        let external = !is_builtin(name)
            && !state.functions.contains(name)
            && !agent.contains(name)
            && !state.hashed.contains_key(name);
        if external {
            if let Some(change) = &state.path_changed {
                out.opaque.push(format!(
                    "PATH was changed in this shell (`{change}`): which `{name}` runs cannot be told; give its full path or restart the shell"
                ));
            } else if cmd.assignments.iter().any(|a| assigns(a, "PATH")) {
                out.opaque.push(format!(
                    "`{name}` is looked up in a PATH set on the same line"
                ));
            }
        }
    }
}

fn expand_alias(
    cmd: &SimpleCommand,
    value: &str,
    state: &ShellState,
    agent: &AgentCommands,
    out: &mut Resolution,
    depth: usize,
) {
    if depth >= MAX_ALIAS_DEPTH {
        out.opaque.push(format!(
            "aliases nested more than {MAX_ALIAS_DEPTH} deep at `{}`",
            cmd.text
        ));
        return;
    }
    if value.ends_with(' ') {
        out.opaque.push(format!(
            "the alias `{}` ends in a space, so the next word may be an alias too",
            cmd.words[0]
        ));
    }
    let rest = super::parse::join_words(cmd.words.get(1..).unwrap_or_default());
    let expanded = parse_nested(&format!("{value} {rest}"), 1);
    out.opaque.extend(
        expanded
            .opaque
            .iter()
            .map(|r| format!("in the alias `{}`: {r}", cmd.words[0])),
    );
    for inner in expanded.all_commands() {
        // An alias naming itself (`alias ls='ls -F'`) is not expanded again by bash.
        if inner.words.first() != cmd.words.first() {
            resolve_command(inner, state, agent, out, depth + 1);
        }
    }
    out.extra.extend(expanded.pipelines);
}

/// A here-string fed to a shell: its text is the commands.
fn push_nested(text: &str, out: &mut Resolution) {
    let parsed = parse_nested(text, 1);
    out.opaque.extend(
        parsed
            .opaque
            .iter()
            .map(|r| format!("in a here-string fed to a shell: {r}")),
    );
    out.extra.extend(parsed.pipelines);
}

fn pipeline(cmd: SimpleCommand) -> Pipeline {
    Pipeline {
        commands: vec![cmd],
    }
}

/// For a program this check does not know to run only itself: the commands it might start,
/// read from each later word that could be a program name (`mywrap -q rm -rf x` → `rm -rf x`
/// and `x`; options and relative paths are skipped). Empty for programs known not to start
/// others.
pub fn wrapped_candidates(cmd: &SimpleCommand, agent: &AgentCommands) -> Vec<SimpleCommand> {
    let Some(program) = cmd.program() else {
        return Vec::new();
    };
    if is_plain_program(program, agent) || is_builtin(program) {
        return Vec::new();
    }
    cmd.words
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, w)| {
            !w.is_empty()
                && !w.starts_with('-')
                && !w.contains('=')
                && (!w.contains('/') || w.starts_with('/'))
        })
        .take(6)
        .map(|(i, _)| SimpleCommand::derived(cmd.words[i..].to_vec(), Vec::new()))
        .collect()
}
