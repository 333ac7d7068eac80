//! Line input on its own thread. rustyline blocks while it owns the terminal, so it runs on a
//! dedicated thread: the REPL asks for a line ([`LineReader::request`]) and awaits the answer
//! ([`LineReader::reply`]) while it keeps serving daemon events. History lives in
//! `$SYNAPSE_HOME/history`; a line ending in `\` continues on the next one, Ctrl-J, Alt+Enter
//! and Shift+Enter (where the terminal sends it distinctly) insert a newline, bracketed paste
//! inserts pasted newlines without submitting, and Tab completes ([`super::complete`]; its list
//! clears the status line's row as it is written). Output that must appear while rustyline is
//! reading goes through [`IdlePrinter`], which prints above the prompt.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ColorMode, CompletionType, Config, Editor, EventHandler, ExternalPrinter, Helper, KeyCode,
    KeyEvent, Modifiers,
};
use tokio::sync::mpsc;

use super::complete::SlashExtras;

/// History entries kept.
const HISTORY_SIZE: usize = 2000;

/// What the input thread answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A submitted line; continuation backslashes are already joined.
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D on an empty line, or stdin closed.
    Eof,
    /// The terminal failed.
    Failed(String),
}

enum Request {
    Read {
        prompt: String,
        history: bool,
        /// Text to start the line with (input that could not be sent).
        initial: String,
    },
}

/// Handle to the input thread.
pub struct LineReader {
    requests: std_mpsc::Sender<Request>,
    replies: mpsc::Receiver<Reply>,
    printer: IdlePrinter,
    extras: SlashExtras,
    groups: Groups,
    /// While set, the line being typed shows as `*` (an API key in the setup).
    masked: Arc<AtomicBool>,
}

/// Run-time slash commands by group (`skills`, `prompts`).
type Groups =
    Arc<parking_lot::Mutex<std::collections::BTreeMap<&'static str, Vec<(String, String)>>>>;

/// [`LineReader::set_slash_group`] for a task that does not own the reader.
#[derive(Clone)]
pub struct SlashGroups {
    groups: Groups,
    extras: SlashExtras,
}

impl SlashGroups {
    pub fn set(&self, group: &'static str, entries: Vec<(String, String)>) {
        let mut groups = self.groups.lock();
        groups.insert(group, entries);
        *self.extras.write() = groups.values().flatten().cloned().collect();
    }
}

impl LineReader {
    /// Starts the thread; the editor and history load there, in parallel with connecting.
    pub fn spawn(history: PathBuf) -> anyhow::Result<Self> {
        let (requests, requests_rx) = std_mpsc::channel::<Request>();
        let (replies_tx, replies) = mpsc::channel(4);
        let (printer_tx, printer_rx) = std_mpsc::channel::<Box<dyn ExternalPrinter + Send>>();
        let extras = SlashExtras::default();
        let masked = Arc::new(AtomicBool::new(false));
        let helper = LineHelper {
            extras: extras.clone(),
            masked: masked.clone(),
        };
        std::thread::Builder::new()
            .name("synapse-input".into())
            .spawn(move || input_thread(history, helper, requests_rx, replies_tx, printer_tx))?;
        Ok(Self {
            requests,
            replies,
            printer: IdlePrinter::spawn(printer_rx)?,
            extras,
            groups: Arc::default(),
            masked,
        })
    }

    /// Shows the following lines as `*` while typed (`true`), or as typed again (`false`).
    pub fn set_masked(&self, masked: bool) {
        self.masked.store(masked, Ordering::SeqCst);
    }

    /// Replaces the run-time slash commands Tab offers (`/<skill>` and its argument hint).
    pub fn set_slash_extras(&self, extras: Vec<(String, String)>) {
        self.set_slash_group("skills", extras);
    }

    /// Replaces one group of run-time slash commands (`skills`, `prompts`); Tab offers them all.
    pub fn set_slash_group(&self, group: &'static str, entries: Vec<(String, String)>) {
        self.slash_groups().set(group, entries);
    }

    /// A handle that can replace a group from another task.
    pub fn slash_groups(&self) -> SlashGroups {
        SlashGroups {
            groups: self.groups.clone(),
            extras: self.extras.clone(),
        }
    }

    /// Asks for one line with `prompt`, pre-filled with `initial`; `history` adds it to the
    /// history file.
    pub fn request(&self, prompt: &str, history: bool, initial: String) -> anyhow::Result<()> {
        self.requests
            .send(Request::Read {
                prompt: prompt.to_string(),
                history,
                initial,
            })
            .map_err(|_| anyhow::anyhow!("the input thread stopped"))
    }

    /// The answer to the last request.
    pub async fn reply(&mut self) -> Reply {
        self.replies
            .recv()
            .await
            .unwrap_or_else(|| Reply::Failed("the input thread stopped".into()))
    }

    /// Reads one line (request + reply) when nothing else needs serving meanwhile.
    pub async fn read(&mut self, prompt: &str, history: bool) -> Reply {
        if let Err(e) = self.request(prompt, history, String::new()) {
            return Reply::Failed(e.to_string());
        }
        self.reply().await
    }

    /// Prints above the prompt while rustyline owns the line.
    pub fn printer(&self) -> &IdlePrinter {
        &self.printer
    }
}

fn input_thread(
    history: PathBuf,
    helper: LineHelper,
    requests: std_mpsc::Receiver<Request>,
    replies: mpsc::Sender<Reply>,
    printer: std_mpsc::Sender<Box<dyn ExternalPrinter + Send>>,
) {
    let config = Config::builder()
        .max_history_size(HISTORY_SIZE)
        .and_then(|b| b.history_ignore_dups(true))
        .map(|b| {
            b.history_ignore_space(true)
                .bracketed_paste(true)
                .auto_add_history(false)
                .completion_type(CompletionType::List)
                // The helper adds no colour of its own; forcing it keeps the `*` masking of a
                // secret working under NO_COLOR, which would otherwise switch the helper off.
                .color_mode(ColorMode::Forced)
                .build()
        })
        .unwrap_or_default();
    let mut editor: Editor<LineHelper, _> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            let _ = replies.blocking_send(Reply::Failed(format!("cannot start line editing: {e}")));
            return;
        }
    };
    editor.set_helper(Some(helper));
    for key in [
        KeyEvent::ctrl('J'),
        KeyEvent(KeyCode::Enter, Modifiers::ALT),
        KeyEvent(KeyCode::Enter, Modifiers::SHIFT),
    ] {
        editor.bind_sequence(key, EventHandler::Simple(Cmd::Newline));
    }
    // A missing history file is the normal first run.
    let _ = editor.load_history(&history);
    if let Ok(p) = editor.create_external_printer() {
        let _ = printer.send(Box::new(p));
    }
    drop(printer);
    while let Ok(Request::Read {
        prompt,
        history: keep,
        initial,
    }) = requests.recv()
    {
        let reply = match editor.readline_with_initial(&prompt, (&initial, "")) {
            Ok(line) => {
                let line = join_continuations(&line);
                if keep && !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                    if let Err(e) = editor.append_history(&history) {
                        tracing_free_warn(&format!(
                            "cannot save history to {}: {e}",
                            history.display()
                        ));
                    }
                }
                Reply::Line(line)
            }
            Err(ReadlineError::Interrupted) => Reply::Interrupted,
            Err(ReadlineError::Eof) => Reply::Eof,
            Err(e) => Reply::Failed(e.to_string()),
        };
        if replies.blocking_send(reply).is_err() {
            return;
        }
    }
}

/// The client has no log file; a failed history write is said once on stderr.
fn tracing_free_warn(message: &str) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("warning: {message}");
    }
}

/// Removes the `\` + newline pairs of continued lines.
pub fn join_continuations(line: &str) -> String {
    line.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

/// True when the input asks to continue on the next line (ends in one unescaped `\`).
pub fn wants_continuation(input: &str) -> bool {
    let trailing = input.chars().rev().take_while(|c| *c == '\\').count();
    trailing % 2 == 1
}

/// Completion, and validation: a trailing `\` keeps the line open.
struct LineHelper {
    extras: SlashExtras,
    masked: Arc<AtomicBool>,
}

impl Helper for LineHelper {}
impl Highlighter for LineHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if self.masked.load(Ordering::SeqCst) {
            Cow::Owned("*".repeat(line.chars().count()))
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.masked.load(Ordering::SeqCst)
    }

    /// Each candidate of the Tab list clears the rest of its row: the list is written over the
    /// row where the status line was drawn (rustyline does not clear rows it writes), so the
    /// status text must not show through between and after the candidates.
    fn highlight_candidate<'c>(
        &self,
        candidate: &'c str,
        _completion: CompletionType,
    ) -> Cow<'c, str> {
        Cow::Owned(format!("{candidate}\x1b[K"))
    }
}
impl Completer for LineHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let extras = self.extras.read().clone();
        Ok(super::complete::complete_with(line, pos, &extras))
    }
}
impl Hinter for LineHelper {
    type Hint = String;
}

impl Validator for LineHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if wants_continuation(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

/// Prints lines above rustyline's prompt from a thread of its own, so the REPL never blocks
/// on the editor; without a terminal it writes to stdout.
pub struct IdlePrinter {
    lines: std_mpsc::Sender<String>,
}

impl IdlePrinter {
    fn spawn(printer: std_mpsc::Receiver<Box<dyn ExternalPrinter + Send>>) -> anyhow::Result<Self> {
        let (lines, rx) = std_mpsc::channel::<String>();
        std::thread::Builder::new()
            .name("synapse-printer".into())
            .spawn(move || {
                let mut external = printer.recv().ok();
                while let Ok(text) = rx.recv() {
                    let printed = external
                        .as_mut()
                        .is_some_and(|p| p.print(text.clone()).is_ok());
                    if !printed {
                        use std::io::Write;
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(text.as_bytes());
                        let _ = out.flush();
                    }
                }
            })?;
        Ok(Self { lines })
    }

    /// Queues `text` (one or more lines, newline-terminated) for printing.
    pub fn print(&self, text: String) {
        let _ = self.lines.send(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_backslash_continues() {
        assert!(wants_continuation("first line \\"));
        assert!(!wants_continuation("a literal \\\\"));
        assert!(!wants_continuation("done"));
        assert!(wants_continuation("a\\\nb \\"));
    }

    #[test]
    fn continuations_are_joined_with_newlines() {
        assert_eq!(
            join_continuations("one \\\ntwo \\\nthree"),
            "one \ntwo \nthree"
        );
        assert_eq!(join_continuations("no continuation"), "no continuation");
    }
}
