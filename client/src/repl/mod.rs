//! `synapse chat`: the interactive REPL. Data flow: rustyline reads lines on its own thread
//! ([`input`]); each line is classified ([`commands`]) and either runs locally (`!`, [`local`]),
//! runs a slash command ([`slash`]) or starts a turn in the daemon ([`turn`]), whose events are
//! rendered as they arrive ([`view`]). The attachment to the session ([`link`]) survives a
//! daemon restart: the REPL reattaches to the same session and resends what was not received.

mod approval;
mod catalog;
mod commands;
mod complete;
mod custom_commands;
mod form;
mod front;
mod hooks_view;
mod input;
mod keys;
mod local;
mod mcp_prompts;
mod memory;
mod mentions;
mod sessions_view;
mod setup;
pub(crate) mod skill_invoke;
mod slash;
mod spinner;
mod status;
mod turn;
mod typeahead;
pub(crate) mod usage;
mod view;

use std::io::Write;
use std::process::ExitCode;

use synapse_session::{Event, Question};
use synapse_shared::paths::Paths;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::render::banner::{banner, session_label};
use crate::render::theme::Theme;
use crate::render::tool::tool_block;
use crate::session::{Incoming, OpenOptions, Session};
use commands::{Line, Slash, classify};
use input::{LineReader, Reply};
use usage::UsageStats;

/// Runs the REPL until the user leaves; `prompt` is sent as the first message. With
/// `pick_session` (`synapse --resume` without an id) the user first picks the session to resume
/// from this folder's list.
pub async fn run(
    paths: Paths,
    mut options: OpenOptions,
    prompt: Option<String>,
    pick_session: bool,
) -> anyhow::Result<ExitCode> {
    let theme = Theme::detect();
    // The editor and its history load on their own thread while we connect.
    let mut input = LineReader::spawn(paths.history_file())?;
    // Registered before anything runs, so Ctrl-C never kills the REPL.
    let interrupts = signal(SignalKind::interrupt())?;
    let mut picked = None;
    if pick_session {
        let channel = crate::connect::connect(&paths).await?;
        let cwd = std::env::current_dir()?.display().to_string();
        match sessions_view::pick_session(&channel, &cwd, &theme, &mut input).await? {
            sessions_view::Picked::Session(id) => {
                options.resume_id = Some(id.clone());
                picked = Some(id);
            }
            sessions_view::Picked::New => options.resume_id = None,
            sessions_view::Picked::Quit => return Ok(ExitCode::SUCCESS),
        }
    }
    let link = Session::connect(&paths, &options).await?;
    let mut repl = Repl {
        theme,
        model: link.opened().model.clone(),
        turns: link.opened().turns,
        model_override: options.model.clone(),
        permission_mode: options.permission_mode.clone(),
        link,
        paths,
        input,
        interrupts,
        usage: UsageStats::default(),
        unsent: String::new(),
        typeahead: typeahead::TypeAhead::default(),
        calls: Vec::new(),
        jobs: 0,
    };
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        repl.typeahead.queue(prompt);
    }
    repl.say(&banner(
        &repl.theme,
        synapse_shared::VERSION,
        repl.link.opened(),
    ));
    if let Some(id) = picked {
        repl.recap(&id).await;
    }
    if repl.model.is_empty()
        && repl.theme.terminal
        && !repl.link.opened().turn_running
        && let Err(e) = repl.first_run_setup().await
    {
        repl.say(&theme.red(&format!("error: {e:#}\n")));
    }
    repl.refresh_skill_commands().await;
    repl.refresh_prompt_commands();
    if repl.link.opened().turn_running {
        repl.say(&theme.dim("A turn of this session is running; its output follows.\n"));
        repl.follow_running_turn().await?;
    }
    repl.main_loop().await
}

pub(crate) struct Repl {
    paths: Paths,
    theme: Theme,
    link: Session,
    input: LineReader,
    interrupts: Signal,
    usage: UsageStats,
    /// Model asked for with `--model` or `/model`; kept across reattaching.
    model_override: Option<String>,
    /// Permission mode chosen with `--permission-mode` or `/permissions`; kept across
    /// reattaching (a restarted daemon would otherwise fall back to the default).
    permission_mode: Option<String>,
    /// The session's model as the daemon last reported it.
    model: String,
    /// Completed turns in the session (the prompt shows the next one).
    turns: u32,
    /// Input that could not be delivered; the next prompt starts with it.
    unsent: String,
    /// Lines typed during a turn (and the start-up prompt), run before the next prompt.
    typeahead: typeahead::TypeAhead,
    /// Tool calls finished while this REPL watched, numbered from 1 for `/expand`.
    calls: Vec<synapse_session::ToolDone>,
    /// The session's background jobs running when the last turn ended (status line).
    jobs: u32,
}

impl Repl {
    async fn main_loop(&mut self) -> anyhow::Result<ExitCode> {
        loop {
            let prompt = format!("You ({})> ", self.turns + 1);
            let reply = match self.typeahead.next_line() {
                Some(line) => {
                    // Shown as if typed at the prompt, so the transcript reads naturally.
                    self.say(&format!("{prompt}{line}\n"));
                    Reply::Line(line)
                }
                None => {
                    let mut initial = std::mem::take(&mut self.unsent);
                    initial.push_str(&self.typeahead.take_partial());
                    self.show_status();
                    let reply = self.read_line(&prompt, true, initial).await;
                    self.clear_status();
                    reply
                }
            };
            match reply {
                Reply::Eof => return Ok(self.goodbye()),
                Reply::Interrupted => {}
                Reply::Failed(e) => anyhow::bail!("cannot read input: {e}"),
                Reply::Line(line) => match classify(&line) {
                    Line::Empty => {}
                    Line::Shell(command) => {
                        if let Some(note) = local::run_local(&self.theme, &command).await {
                            self.say(&note);
                        }
                        // Ctrl-C meant for the command must not cancel the next turn.
                        self.drain_interrupts();
                    }
                    Line::Slash(Slash::Exit) => return Ok(self.goodbye()),
                    Line::Slash(command) => self.slash(command).await?,
                    Line::Message(text) => {
                        let text = self.attach(text);
                        self.turn(text).await?;
                        // A turn may have created or changed a skill: Tab offers it at once.
                        self.refresh_skill_commands().await;
                    }
                },
            }
        }
    }

    fn goodbye(&self) -> ExitCode {
        self.say("Goodbye!\n");
        ExitCode::SUCCESS
    }

    /// Reads a line while serving session events (printed above the prompt).
    async fn read_line(&mut self, prompt: &str, history: bool, initial: String) -> Reply {
        if let Err(e) = self.input.request(prompt, history, initial) {
            return Reply::Failed(e.to_string());
        }
        loop {
            tokio::select! {
                reply = self.input.reply() => return reply,
                incoming = self.link.next() => self.idle_incoming(incoming),
                // rustyline reads Ctrl-C as a key; a stray SIGINT is ignored.
                _ = self.interrupts.recv() => {}
            }
        }
    }

    /// Events that arrive while no turn of ours runs (another client's turn, late reports).
    fn idle_incoming(&mut self, incoming: Incoming) {
        let t = self.theme;
        let text = match incoming {
            Incoming::Closed(closed) => t.yellow(&format!(
                "The daemon went away ({closed}). Your next message reattaches to session {}.\n",
                self.link.id()
            )),
            Incoming::Event(ev) => match ev {
                Event::ToolDone(call) => tool_block(&t, &call),
                Event::Notice(text) => t.dim(&format!("{text}\n")),
                Event::Error(message) => t.red(&format!("error: {}\n", view::real_paths(&message))),
                Event::EnhanceReport(text) => view::enhance_report(&t, &text),
                Event::Question(Question::Approval(a)) => t.yellow(&format!(
                    "Another client of this session is asked: {}\n",
                    a.title
                )),
                Event::Question(Question::Form(e)) => t.yellow(&format!(
                    "Another client of this session is asked to fill in a form of MCP server {}\n",
                    crate::render::safe_text::strip_controls(&e.server)
                )),
                Event::TurnEnded(done) => {
                    self.turns = self.turns.max(done.turn);
                    self.jobs = done.background_jobs;
                    self.usage.add_turn(&done.usage);
                    if done.final_text.is_empty() {
                        return;
                    }
                    format!("{}\n", done.final_text.trim_end())
                }
                Event::Usage(u) => {
                    self.usage.observe_call(&u);
                    return;
                }
                Event::ModelChanged(model) => {
                    self.model = model;
                    return;
                }
                Event::ModeChanged { mode, .. } => match view::permission_line(&t, &mode) {
                    Some(line) => line,
                    None => return,
                },
                _ => return,
            },
        };
        self.input.printer().print(text);
    }

    /// Reattaches when the daemon went away; says what happened.
    async fn ensure_link(&mut self) -> anyhow::Result<()> {
        if self.link.is_up() {
            return Ok(());
        }
        self.reattach().await
    }

    async fn reattach(&mut self) -> anyhow::Result<()> {
        let id = self.link.id().to_string();
        let mut spinner = spinner::Spinner::new(self.theme);
        spinner
            .start(&format!("Reattaching to session {id}…"))
            .await;
        let result = Session::reopen(
            &self.paths,
            &id,
            self.model_override.clone(),
            self.permission_mode.clone(),
        )
        .await;
        spinner.stop().await;
        self.link = result?;
        self.model = self.link.opened().model.clone();
        self.turns = self.link.opened().turns;
        self.say(&self.theme.cyan(&format!(
            "↻ Reattached to session {} after the daemon restarted.\n",
            session_label(self.link.opened())
        )));
        Ok(())
    }

    /// Attaches the files the message mentions with `@path`, saying what was attached.
    fn attach(&self, text: String) -> String {
        let cwd = std::path::PathBuf::from(&self.link.opened().cwd);
        let (text, attached) = mentions::attach_mentions(&text, &cwd);
        for a in &attached {
            self.say(&self.theme.dim(&mentions::attachment_note(a)));
        }
        text
    }

    /// Forgets Ctrl-C presses that arrived while nothing could be cancelled.
    fn drain_interrupts(&mut self) {
        use futures::FutureExt;
        while self.interrupts.recv().now_or_never().is_some() {}
    }

    /// Prints while rustyline does not own the terminal.
    fn say(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}
