//! Plain renderings of chat events shared by `synapse run` and the REPL.

/// `● <command>` with ` [exit N]` when it failed; the command is cut to one line.
pub fn tool_line(command: &str, exit_code: i32) -> String {
    let command = super::safe_text::strip_controls(command);
    let first = command.lines().next().unwrap_or_default();
    let more = if command.lines().count() > 1 {
        " …"
    } else {
        ""
    };
    if exit_code == 0 {
        format!("● {first}{more}")
    } else {
        format!("● {first}{more} [exit {exit_code}]")
    }
}
