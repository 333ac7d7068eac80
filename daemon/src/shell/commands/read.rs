//! `read <path> [--offset N] [--limit N]`: a file's lines numbered like `cat -n`, paged. With
//! an editor attached that offered its files, a file inside the session's folder is read
//! through it (its unsaved buffer); an editor that is gone leaves the read to the disk.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use futures::future::BoxFuture;
use synapse_command::editor_files::{EditorError, disk_fallback_notice};

use crate::shell::capture::{OUTPUT_CAP_CHARS, looks_binary};
use synapse_command::args::{self, OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Lines shown when no `--limit` is given.
pub const READ_LIMIT_DEFAULT_LINES: usize = 2000;
/// Characters of one line shown before it is cut.
pub const READ_LINE_MAX_CHARS: usize = 2000;
/// Characters of one page; stays under the result cap so a page is never elided.
const READ_PAGE_MAX_CHARS: usize = OUTPUT_CAP_CHARS - 1000;
/// Bytes sniffed for NULs to refuse binary files.
const BINARY_SNIFF_BYTES: usize = 8192;

pub static SPEC: CommandSpec = CommandSpec {
    name: "read",
    usage: "read <path> [--offset N] [--limit N]",
    summary: "Show a text file with numbered lines (like `cat -n`).",
    help: "\
Arguments:
  <path>        file to show; relative paths start from the shell's current directory
  --offset N    first line to show, counted from 0 (default 0)
  --limit N     number of lines to show (default 2000)

Lines are numbered from 1. Lines longer than 2000 characters are cut. A page also stops before
the output gets too long for one result; the last line then says which --offset continues.
Binary files are refused (with their size); use `xxd`, `file` or `strings` for those.

Examples:
  read src/main.rs
  read logs/app.log --offset 2000 --limit 500",
};

pub struct ReadCommand;

impl AgentCommand for ReadCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Read
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let parsed = match SPEC.parse(args, &options(), UnknownOpts::Reject) {
                Ok(p) => p,
                Err(usage) => return usage,
            };
            let [path] = parsed.positionals.as_slice() else {
                return SPEC.usage_error(if parsed.positionals.is_empty() {
                    "missing <path>".to_owned()
                } else {
                    format!("expected one path, got {}", parsed.positionals.len())
                });
            };
            let (offset, limit) = match (
                parsed.number("--offset", 0),
                parsed.number("--limit", READ_LIMIT_DEFAULT_LINES),
            ) {
                (Ok(o), Ok(l)) => (o, l),
                (Err(e), _) | (_, Err(e)) => return SPEC.usage_error(e),
            };
            let abs = ctx.resolve(path);
            let shown = path.clone();
            let mut notice = None;
            if let Some(editor) = ctx.editor_for(&abs).filter(|_| !abs.is_dir()) {
                match editor.read(&abs).await {
                    Ok(text) => return page_text(&text, &shown, offset, limit),
                    Err(EditorError::Refused(why)) => {
                        return CommandOutput::failure(
                            format!("read: {shown}: the editor could not read it: {why}"),
                            1,
                        );
                    }
                    Err(EditorError::Gone(why)) => {
                        notice = Some(disk_fallback_notice("read", &why));
                    }
                }
            }
            let mut out = SPEC
                .off_thread(move || read_page(&abs, &shown, offset, limit))
                .await;
            if let Some(notice) = notice {
                if !out.text.ends_with('\n') {
                    out.text.push('\n');
                }
                out.text.push_str(&notice);
            }
            out
        })
    }
}

fn options() -> [OptSpec; 2] {
    [OptSpec::value("--offset"), OptSpec::value("--limit")]
}

/// `read`'s words as Claude Code's `Read` tool input (for hooks); `None` when they do not parse.
pub(super) fn claude_input(
    args: &[String],
    abs: &dyn Fn(&str) -> String,
) -> Option<serde_json::Value> {
    let parsed = args::parse(args.to_vec(), &options(), UnknownOpts::Reject).ok()?;
    let [path] = parsed.positionals.as_slice() else {
        return None;
    };
    let mut input = serde_json::json!({ "file_path": abs(path) });
    for (opt, key) in [("--offset", "offset"), ("--limit", "limit")] {
        if let Some(n) = parsed.value(opt).and_then(|v| v.parse::<u64>().ok()) {
            input[key] = serde_json::json!(n);
        }
    }
    Some(input)
}

/// The file `read` with these words shows (`None` when they name no single path).
pub(super) fn path_word(args: &[String]) -> Option<String> {
    let parsed = args::parse(args.to_vec(), &options(), UnknownOpts::Reject).ok()?;
    match parsed.positionals.as_slice() {
        [path] => Some(path.clone()),
        _ => None,
    }
}

/// Reads one page of `abs`; `shown` is the path as the model wrote it.
pub fn read_page(abs: &Path, shown: &str, offset: usize, limit: usize) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("read: {msg}"), 1);
    let meta = match std::fs::metadata(abs) {
        Ok(m) => m,
        Err(e) => return fail(format!("{shown}: {}", io_reason(&e))),
    };
    if meta.is_dir() {
        return fail(format!(
            "{shown} is a directory; list it with `ls {shown}` or `glob`"
        ));
    }
    // A FIFO, socket or device is refused by name, never opened blocking (a FIFO would hold
    // the command until a writer came).
    let file = match synapse_shared::bounded::open_regular(abs) {
        Ok((f, _)) => f,
        Err(e) => return fail(format!("{shown}: {}", io_reason(&e))),
    };
    let mut reader = BufReader::new(file);
    let mut sniff = Vec::with_capacity(BINARY_SNIFF_BYTES);
    if let Err(e) = reader
        .by_ref()
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut sniff)
    {
        return fail(format!("{shown}: {}", io_reason(&e)));
    }
    if looks_binary(&sniff) {
        return fail(format!(
            "{shown} is a binary file ({} bytes); not shown. Inspect it with `file`, `xxd {shown} | \
             head` or `strings`",
            meta.len()
        ));
    }
    page(
        std::io::Cursor::new(sniff).chain(reader),
        shown,
        offset,
        limit,
    )
}

/// One page of `text` (the editor's buffer of the file `shown`).
pub fn page_text(text: &str, shown: &str, offset: usize, limit: usize) -> CommandOutput {
    let sniff = &text.as_bytes()[..text.len().min(BINARY_SNIFF_BYTES)];
    if looks_binary(sniff) {
        return CommandOutput::failure(
            format!(
                "read: {shown} is a binary file ({} bytes); not shown. Inspect it with `file`, \
                 `xxd {shown} | head` or `strings`",
                text.len()
            ),
            1,
        );
    }
    page(std::io::Cursor::new(text.as_bytes()), shown, offset, limit)
}

/// Numbers and pages the lines `reader` gives.
fn page(mut reader: impl BufRead, shown: &str, offset: usize, limit: usize) -> CommandOutput {
    let fail = |msg: String| CommandOutput::failure(format!("read: {msg}"), 1);
    let mut out = String::new();
    let mut line = Vec::new();
    let mut index = 0usize; // lines seen so far
    let mut last_shown = None;
    let mut stopped_for_size = false;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return fail(format!("{shown}: {}", io_reason(&e))),
        }
        if index >= offset && index < offset.saturating_add(limit) && !stopped_for_size {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches('\n').trim_end_matches('\r');
            let entry = format_line(index + 1, text);
            if out.len() + entry.len() > READ_PAGE_MAX_CHARS && last_shown.is_some() {
                stopped_for_size = true;
            } else {
                out.push_str(&entry);
                last_shown = Some(index);
            }
        }
        index += 1;
    }
    let total = index;
    if total == 0 {
        return CommandOutput::success(format!("[{shown} is empty]"));
    }
    let Some(last) = last_shown else {
        return fail(format!(
            "--offset {offset} is past the end of {shown}, which has {total} lines"
        ));
    };
    if last + 1 < total {
        out.push_str(&format!(
            "[lines {}-{} of {total}; more with `read {shown} --offset {}`]\n",
            offset + 1,
            last + 1,
            last + 1
        ));
    }
    CommandOutput::success(out)
}

fn format_line(number: usize, text: &str) -> String {
    match text.char_indices().nth(READ_LINE_MAX_CHARS) {
        None => format!("{number:>6}\t{text}\n"),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!(
                "{number:>6}\t{}… [line cut: {rest} more characters]\n",
                &text[..cut]
            )
        }
    }
}

/// The OS reason without Rust's "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_owned(),
                None => s,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        std::fs::write(&p, content).unwrap();
        (dir, p)
    }

    #[test]
    fn numbered_page_with_paging_note() {
        let (_d, p) = file(b"a\nb\r\nc\nd\n");
        let out = read_page(&p, "f.txt", 1, 2);
        assert_eq!(
            out.text,
            "     2\tb\n     3\tc\n[lines 2-3 of 4; more with `read f.txt --offset 3`]\n"
        );
        assert_eq!(
            read_page(&p, "f.txt", 0, 10).text,
            "     1\ta\n     2\tb\n     3\tc\n     4\td\n"
        );
        let past = read_page(&p, "f.txt", 9, 1);
        assert_eq!(past.exit_code, 1);
        assert!(
            past.text
                .contains("past the end of f.txt, which has 4 lines")
        );
    }

    #[test]
    fn long_lines_are_cut_and_pages_stay_under_the_cap() {
        let long = "x".repeat(READ_LINE_MAX_CHARS + 5);
        let (_d, p) = file(format!("{long}\n").repeat(40).as_bytes());
        let out = read_page(&p, "f.txt", 0, 100);
        assert!(out.text.contains("… [line cut: 5 more characters]"));
        assert!(out.text.len() <= OUTPUT_CAP_CHARS);
        assert!(
            out.text.contains("more with `read f.txt --offset "),
            "{}",
            &out.text[out.text.len() - 200..]
        );
    }

    #[test]
    fn binary_missing_and_empty_files() {
        let (_d, p) = file(b"\x00\x01\x02binary");
        let out = read_page(&p, "f.bin", 0, 10);
        assert!(
            out.text.contains("f.bin is a binary file (9 bytes)"),
            "{}",
            out.text
        );
        let out = read_page(Path::new("/nonexistent/x"), "x", 0, 10);
        assert_eq!(out.text, "read: x: no such file or directory");
        let (_d, p) = file(b"");
        assert_eq!(read_page(&p, "e", 0, 10).text, "[e is empty]");
    }

    #[test]
    fn a_fifo_is_refused_by_name_at_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(read_page(&p, "pipe", 0, 10).text);
        });
        let text = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("read blocked on a FIFO");
        assert_eq!(text, "read: pipe: it is a FIFO, not a regular file");
    }
}
