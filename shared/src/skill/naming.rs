//! Names of the generated skill commands: `skill:<skill>:<script-stem>`. Both halves must be safe
//! to use as a file name in `$SYNAPSE_HOME/bin` and as the first word of a shell command without
//! quoting, so anything outside `[A-Za-z0-9._-]` (or starting with `-` or `.`) is refused.

/// Prefix of every skill command.
pub const SKILL_COMMAND_PREFIX: &str = "skill:";
/// Longest accepted skill or script part of a command name.
pub const COMMAND_COMPONENT_MAX_CHARS: usize = 128;

/// `skill:<skill>:<stem>`; callers check both parts with [`check_command_component`] first.
pub fn wrapper_name(skill: &str, stem: &str) -> String {
    format!("{SKILL_COMMAND_PREFIX}{skill}:{stem}")
}

/// Splits `skill:<skill>:<stem>` into its parts.
pub fn split_wrapper_name(command: &str) -> Option<(&str, &str)> {
    let rest = command.strip_prefix(SKILL_COMMAND_PREFIX)?;
    let (skill, stem) = rest.split_once(':')?;
    (check_command_component(skill).is_ok() && check_command_component(stem).is_ok())
        .then_some((skill, stem))
}

/// Whether `part` can be one half of a command name; the error says why not.
pub fn check_command_component(part: &str) -> Result<(), String> {
    if part.is_empty() {
        return Err("it is empty".to_string());
    }
    if part.chars().count() > COMMAND_COMPONENT_MAX_CHARS {
        return Err(format!(
            "it is longer than {COMMAND_COMPONENT_MAX_CHARS} characters"
        ));
    }
    if part.starts_with('-') || part.starts_with('.') {
        return Err("it starts with `-` or `.`".to_string());
    }
    if let Some(bad) = part
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "it contains {bad:?}; command names may only use letters, digits, `_`, `-` and `.`"
        ));
    }
    Ok(())
}

/// The stem of a script file name: `extract_text.py` → `extract_text`, `run` → `run`,
/// `.hidden` → `.hidden` (refused later by [`check_command_component`]).
pub fn script_stem(file_name: &str) -> &str {
    match file_name.rfind('.') {
        Some(0) | None => file_name,
        Some(i) => &file_name[..i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_and_unsafe_components() {
        for ok in ["pdf-editor", "extract_text", "v1.2", "A9"] {
            assert!(check_command_component(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "a;b", "-rf", ".x", "a b", "a:b", "$(x)", "a'b", "a\nb", "ä",
        ] {
            assert!(check_command_component(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_roundtrip() {
        let n = wrapper_name("pdf-editor", "extract_text");
        assert_eq!(n, "skill:pdf-editor:extract_text");
        assert_eq!(split_wrapper_name(&n), Some(("pdf-editor", "extract_text")));
        assert_eq!(split_wrapper_name("mcp:a:b"), None);
        assert_eq!(script_stem("a.tar.gz"), "a.tar");
        assert_eq!(script_stem("run"), "run");
    }
}
