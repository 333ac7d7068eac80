//! The shell functions that make agent commands real commands of a session shell.
//!
//! Each agent command (except `bash`, which stays the real program) becomes a function of the
//! same name that calls `synapsed __agent <name> "$@"`, so bash has already done quoting, `$VAR`,
//! `~` and glob expansion, and the command composes with pipes, lists, `$(…)`, redirects and
//! loops. Functions are not exported, so scripts the shell runs keep the system's `write`,
//! `skill` and `read`. `read` is the agent's only with agent-style arguments (see
//! [`READ_RULE`]); otherwise it is bash's builtin, so `while read -r line` keeps working.
//!
//! `bash` itself gets a function only for the agent's own option: `bash --timeout N '…'` is the
//! agent command wherever it stands in a line ([`BASH_FUNCTION`]); any other `bash …` is the
//! real program.
//!
//! Everything the channel defines is recognisable: the helpers are named with
//! [`INTERNAL_PREFIX`], and each agent function's body is exactly [`function_body`], so a
//! resolver inspecting the live shell (`declare -f NAME`) can tell them from the user's own.

use std::path::Path;

/// Prefix of every internal function and variable the channel defines in a session shell.
pub const INTERNAL_PREFIX: &str = "__synapse_";

/// The rule for `read`, as the system prompt states it.
pub const READ_RULE: &str = "`read` is the agent's file reader when its first word is not a \
    bash `read` option (`-r`, `-p`, …) and some word is not a plain variable name or names an \
    existing file (`read a.txt`, `read \"$PWD/x\"`, `read --offset 5 f`); otherwise it is bash's \
    `read` builtin (`while read -r line`, `read name`)";

/// Agent command names that become shell functions: all but `bash`, and only names bash accepts
/// as function names.
pub fn function_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    names
        .filter(|n| *n != "bash" && !n.is_empty() && !n.starts_with(INTERNAL_PREFIX))
        .filter(|n| {
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
        })
        .collect()
}

/// The body of the function for agent command `name` (as `declare -f` prints it, less layout).
pub fn function_body(name: &str) -> String {
    if name == "read" {
        "if __synapse_read_is_agent \"$@\"; then __synapse_agent read \"$@\"; else builtin read \"$@\"; fi"
            .to_string()
    } else {
        format!("__synapse_agent {name} \"$@\"")
    }
}

/// The `bash` function: `--timeout` as the first word is the agent command's option (the real
/// bash has none of that name), anything else runs the real program.
pub const BASH_FUNCTION: &str = "bash() { if [[ ${1-} == --timeout ]]; then __synapse_agent bash \"$@\"; \
     else command bash \"$@\"; fi; }\n";

/// Single-quotes `s` for bash.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The init script defining the channel in a shell: the session token (read-only, not
/// exported), the helper call, the `read` rule and one function per agent command.
pub fn init_script(names: &[&str], helper: &Path, socket: &Path, token: &str) -> String {
    let mut s = format!(
        "declare -r __synapse_agent_token={}\n\
         declare -r __synapse_agent_exe={}\n\
         declare -r __synapse_agent_socket={}\n\
         __synapse_agent() {{ __SYNAPSE_AGENT_TOKEN=\"$__synapse_agent_token\" \
         __SYNAPSE_AGENT_SOCKET=\"$__synapse_agent_socket\" \"$__synapse_agent_exe\" __agent \"$@\"; }}\n\
         __synapse_read_is_agent() {{ [[ $# -gt 0 ]] || return 1; case $1 in \
         --offset|--limit|-h|--help) return 0;; -*) return 1;; esac; local w; \
         for w in \"$@\"; do [[ $w == --offset || $w == --limit ]] && return 0; \
         [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || return 0; done; [[ -e $1 ]]; }}\n",
        quote(token),
        quote(&helper.to_string_lossy()),
        quote(&socket.to_string_lossy()),
    );
    for name in names {
        s.push_str(&format!("{name}() {{ {}; }}\n", function_body(name)));
    }
    s.push_str(BASH_FUNCTION);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_and_odd_names_get_no_function() {
        let names =
            function_names(["bash", "read", "task:general", "a b", "skill:load"].into_iter());
        assert_eq!(names, vec!["read", "task:general", "skill:load"]);
    }

    #[test]
    fn the_init_script_parses_and_read_follows_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README"), "x").unwrap();
        let script = init_script(
            &["read", "write"],
            Path::new("/nonexistent/synapsed"),
            Path::new("/nonexistent/agent.sock"),
            "abc'def",
        );
        let probe = "for args in 'README' 'line' '-r line' 'a.txt' '--offset 2 f' 'x y' ''; do \
                     if __synapse_read_is_agent $args; then echo agent; else echo builtin; fi; done; \
                     echo \"$__synapse_agent_token\"; declare -F write; \
                     __synapse_agent() { echo \"agent $*\"; }; bash --timeout 5 'echo hi' | cat; \
                     bash -c 'echo real'";
        let out = std::process::Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &format!("{script}\n{probe}")])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "agent\nbuiltin\nbuiltin\nagent\nagent\nbuiltin\nbuiltin\nabc'def\nwrite\n\
             agent bash --timeout 5 echo hi\nreal\n"
        );
    }
}
