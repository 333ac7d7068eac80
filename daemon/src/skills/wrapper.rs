//! Skill2Bash: what the wrapper `skill:<skill>:<stem>` of a skill script is — its help texts and
//! the runner it `exec`s. Rendering and writing belong to [`synapse_command::wrappers`], which owns every
//! wrapper folder. `-h` as the first argument prints the help without running the script; so does
//! `--help`, unless the script has its own parser (argparse, click, a `--help` case): then
//! `--help` names the command and passes through to the script.

use synapse_command::wrappers::{Help, ScriptError, WrapperScript};

use super::script::SkillScript;

/// The `-h` text: usage line and one-line description.
pub fn short_help(script: &SkillScript) -> String {
    let args = script.doc.usage_args.as_deref().unwrap_or("[args...]");
    let usage = if args.is_empty() {
        format!("Usage: {}", script.command)
    } else {
        format!("Usage: {} {args}", script.command)
    };
    format!("{usage}\n{}", description(script))
}

/// The `--help` text: name and summary, the script's whole documentation, where it lives.
pub fn full_help(script: &SkillScript) -> String {
    let mut out = format!("{} - {}\n", script.command, description(script));
    if !script.doc.full.is_empty() {
        out.push('\n');
        out.push_str(&script.doc.full);
        out.push('\n');
    }
    out.push_str(&format!("\nScript: {}", script.path.display()));
    out
}

/// The one-line description used by `-h` and `tools search`.
pub fn description(script: &SkillScript) -> String {
    script.doc.summary.clone().unwrap_or_else(|| {
        format!(
            "Runs {} (no description: add a docstring or comment block).",
            script.file_name
        )
    })
}

/// The wrapper of `script` (skill `skill_id`): runs the script with its runner, with
/// `SYNAPSE_SKILL_ID` set. A script with its own parser answers `--help` better than we can:
/// the wrapper names the command, then lets the script print its own options.
pub fn script_wrapper(skill_id: &str, script: &SkillScript) -> WrapperScript {
    let long_help = if script.doc.own_help {
        Help::ThenTarget(format!(
            "{} - {} (the script's own help follows)\nScript: {}",
            script.command,
            description(script),
            script.path.display()
        ))
    } else {
        Help::Text(full_help(script))
    };
    let mut exec = script.runner.words();
    exec.push(script.path.to_string_lossy().into_owned());
    WrapperScript {
        command: script.command.clone(),
        origin: "a skill script",
        about: vec![
            ("Skill", skill_id.to_string()),
            ("Script", script.path.display().to_string()),
        ],
        short_help: short_help(script),
        long_help,
        exports: vec![("SYNAPSE_SKILL_ID", skill_id.to_string())],
        exec,
    }
}

/// The wrapper text of `script`, or why it cannot be written (a path with a control character).
pub fn render(skill_id: &str, script: &SkillScript) -> Result<String, ScriptError> {
    script_wrapper(skill_id, script).render()
}

#[cfg(test)]
#[path = "wrapper_tests.rs"]
mod tests;
