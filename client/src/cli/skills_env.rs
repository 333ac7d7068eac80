//! `SYNAPSE_SKILLS_DIR` as the client sees it against the folder the daemon read when it
//! started (the daemon reads its environment once): `skill list` and `daemon status` name the
//! folder in force and say once, with the fix, when this shell's value differs.

use std::path::Path;

/// The variable naming an extra skills folder.
pub const ENV_SKILLS_DIR: &str = "SYNAPSE_SKILLS_DIR";

/// The line to print on stderr, if any: a warning when this shell's `SYNAPSE_SKILLS_DIR`
/// (`client`) is not what the daemon uses (`daemon`, "" when unset), else a note naming the
/// folder in force.
pub fn skills_dir_line(client: Option<&str>, daemon: &str) -> Option<String> {
    let client = client.filter(|c| !c.is_empty());
    const FIX: &str = "it is read only when the daemon starts: restart it with `synapse daemon stop` \
                       (the next command starts it with this shell's environment)";
    match client {
        Some(c) if !Path::new(c).is_absolute() => Some(format!(
            "warning: {ENV_SKILLS_DIR}={c} is not an absolute path, so it is ignored; set it to \
             an absolute folder"
        )),
        Some(c) if Path::new(c) != Path::new(daemon) => Some(if daemon.is_empty() {
            format!(
                "warning: {ENV_SKILLS_DIR} is {c} in this shell, but the daemon started without \
                 it, so those skills are not loaded; {FIX}"
            )
        } else {
            format!(
                "warning: {ENV_SKILLS_DIR} is {c} in this shell, but the daemon uses {daemon}; \
                 {FIX}"
            )
        }),
        None if !daemon.is_empty() => Some(format!(
            "warning: {ENV_SKILLS_DIR} is unset in this shell, but the daemon still uses \
             {daemon}; {FIX}"
        )),
        Some(_) => Some(format!(
            "skills from {ENV_SKILLS_DIR}: {daemon} (the `env:` skills)"
        )),
        None => None,
    }
}

/// [`skills_dir_line`] for this process's environment.
pub fn skills_dir_line_here(daemon: &str) -> Option<String> {
    let client = std::env::var(ENV_SKILLS_DIR).ok();
    skills_dir_line(client.as_deref(), daemon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_different_unset_and_relative() {
        assert_eq!(skills_dir_line(None, ""), None);
        assert_eq!(skills_dir_line(Some(""), ""), None);
        assert_eq!(
            skills_dir_line(Some("/s"), "/s").as_deref(),
            Some("skills from SYNAPSE_SKILLS_DIR: /s (the `env:` skills)")
        );
        let w = skills_dir_line(Some("/new"), "/old").unwrap();
        assert!(w.starts_with("warning: SYNAPSE_SKILLS_DIR is /new in this shell, but the daemon uses /old; it is read only when the daemon starts: restart it with `synapse daemon stop`"), "{w}");
        let w = skills_dir_line(Some("/new"), "").unwrap();
        assert!(w.contains("the daemon started without it"), "{w}");
        let w = skills_dir_line(None, "/old").unwrap();
        assert!(
            w.contains("unset in this shell, but the daemon still uses /old"),
            "{w}"
        );
        let w = skills_dir_line(Some("rel/dir"), "").unwrap();
        assert!(w.contains("not an absolute path"), "{w}");
    }
}
