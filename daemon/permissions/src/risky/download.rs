//! Code fetched from the network and run straight away: `curl … | sh`, `bash <(curl …)`,
//! `sh -c "$(curl …)"`, `eval "$(wget -O- …)"`, `. <(curl …)`.

use super::super::argv::{ArgOpts, has_long, has_short, operands};
use super::super::parse::{Pipeline, RedirectOp, SimpleCommand, parse};

const DOWNLOADERS: [&str; 4] = ["curl", "wget", "fetch", "aria2c"];
const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "fish", "mksh"];
const INTERPRETERS: [&str; 7] = [
    "python", "python2", "python3", "perl", "ruby", "node", "php",
];

fn is_interpreter(program: &str) -> bool {
    INTERPRETERS.contains(&program)
        || program
            .strip_prefix("python3.")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()))
}

/// A downloader earlier in the pipeline feeding a shell or interpreter that runs its input.
pub(super) fn piped_to_interpreter(pipeline: &Pipeline, cmd: &SimpleCommand) -> Option<String> {
    let program = cmd.program()?;
    if !runs_input_as_code(program, &cmd.words) {
        return None;
    }
    let before = match pipeline.commands.iter().position(|c| std::ptr::eq(c, cmd)) {
        Some(i) => &pipeline.commands[..i],
        None => &pipeline.commands[..],
    };
    let downloader = before
        .iter()
        .filter_map(SimpleCommand::program)
        .find(|p| DOWNLOADERS.contains(p))?;
    Some(format!(
        "`{downloader} … | {program}` runs code downloaded from the network"
    ))
}

/// Whether `program` runs its standard input as code: a shell without `-c` or a script file,
/// an interpreter without `-c`/`-e`/`-m` or a script file, `sudo`, `source`.
fn runs_input_as_code(program: &str, words: &[String]) -> bool {
    let first_operand_is_stdin = |opts| {
        let ops = operands(words, opts);
        ops.first().is_none_or(|o| *o == "-" || *o == "/dev/stdin")
    };
    if SHELLS.contains(&program) {
        return !has_short(words, 'c')
            && (has_short(words, 's')
                || first_operand_is_stdin(ArgOpts::new("oO", &["rcfile", "init-file"])));
    }
    if is_interpreter(program) {
        let inline = ['c', 'e', 'E', 'm', 'p']
            .iter()
            .any(|f| has_short(words, *f))
            || has_long(words, "eval")
            || has_long(words, "print");
        return !inline && first_operand_is_stdin(ArgOpts::new("WXQI", &[]));
    }
    matches!(program, "sudo" | "doas" | "source" | ".")
}

/// A shell, interpreter, `eval` or `source` whose words (or input redirect) hold a substitution
/// running a downloader.
pub(super) fn substituted_download(cmd: &SimpleCommand) -> Option<String> {
    let program = cmd.program()?;
    let runs_code = SHELLS.contains(&program)
        || is_interpreter(program)
        || matches!(program, "eval" | "source" | ".");
    if !runs_code {
        return None;
    }
    let redirected = cmd
        .redirects
        .iter()
        .filter(|r| matches!(r.op, RedirectOp::Read | RedirectOp::HereString))
        .map(|r| &r.target);
    let downloader = cmd
        .words
        .iter()
        .skip(1)
        .chain(redirected)
        .filter(|w| w.contains("$(") || w.contains('`') || w.contains("<("))
        .find_map(|w| {
            parse(w)
                .all_commands()
                .filter_map(SimpleCommand::program)
                .find(|p| DOWNLOADERS.contains(p))
                .map(str::to_string)
        })?;
    Some(format!(
        "`{program}` runs code downloaded by `{downloader}` from the network"
    ))
}
