//! `synapse run "<prompt>"` (alias `-p`): a non-interactive run with `claude -p`'s flags. The
//! final answer goes to stdout; tool activity, retries and the skill-enhancement report to stderr
//! (`--quiet` hides tool activity); `--output-format json` prints one result object and
//! `stream-json` Claude Code's event schema ([`stream_json`]). With `--input-format stream-json`
//! every user message on stdin is one more turn of the same session ([`input`]); the run stops at
//! the first turn that does not complete. Nobody can answer questions: approval requests are
//! denied unless `--yes`, and forms MCP servers ask to be filled in are declined with a note on
//! stderr. A failed turn prints nothing on stdout in text mode; in JSON its result is empty,
//! `is_error` true and `error` says `{kind, message, http_status}`. Never reads stdin unless the
//! prompt is `-` or the input format is stream-json. SIGINT cancels the turn and waits for it to
//! stop; SIGTERM and SIGHUP cancel it and exit at once (the daemon also cancels when the stream
//! closes).
//!
//! Exit codes: 0 completed · 1 the client could not run the turn (daemon unreachable or gone,
//! bad arguments, a bad stdin line), or `--max-turns` was reached (as in Claude Code) · 3 the
//! model call failed · 4 stopped by another limit (iterations, failing tools) · 5 the reply was
//! cut at the output limit · 130 cancelled (SIGINT) · 129/143 SIGHUP/SIGTERM. A closed stdout or
//! stderr (`| head -1`) ends nothing: the output is dropped and the run exits with its own status.

mod cc_flags;
mod detach;
mod front;
mod init;
mod input;
mod stamp;
pub mod stream_json;
mod tally;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use synapse_session::{Control, Input, StopReason, TurnEnded, Usage};
use synapse_shared::paths::Paths;

use self::front::RunFront;
use self::input::Inputs;
use self::stream_json::StreamJson;
use self::tally::RunTally;
use crate::session::{OpenOptions, Scripting, Session, SessionSender};

/// Exit status when the turn was cancelled (as a shell reports SIGINT).
const EXIT_CANCELLED: u8 = 130;
/// Exit status when the model call failed (HTTP error, unreachable server, retries used up).
const EXIT_MODEL_ERROR: u8 = 3;
/// Exit status when a limit stopped the turn (iterations, tool failures in a row).
const EXIT_LIMIT: u8 = 4;
/// Exit status when the reply was cut at the output limit.
const EXIT_TRUNCATED: u8 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Text,
    StreamJson,
}

/// `synapse run --help`'s examples; each one is run by the e2e tests (`run_scripting`).
pub const RUN_EXAMPLES: &str = r#"Examples:
  synapse run "summarise README.md"
  synapse -p "list the TODO comments" --output-format json
  synapse run "fix the failing test" --max-turns 5 --allowedTools "Bash(cargo test:*) Read Edit"
  synapse run "review the diff" --disallowedTools "Bash(git push:*)" --append-system-prompt "Answer in one paragraph."
  synapse run "triage the log" --system-prompt "You are a terse SRE." --output-format stream-json
  echo '{"type":"user","message":{"role":"user","content":"hello"}}' | synapse run --input-format stream-json --output-format stream-json

claude -p flags: --output-format, --input-format, --max-turns, --system-prompt,
--append-system-prompt, --allowedTools, --disallowedTools, --resume, --continue, --model,
--add-dir, --mcp-config, --strict-mcp-config, --session-id, --settings and --fallback-model work
as in Claude Code; --disallowedTools Bash removes the tool (the model answers in text);
--dangerously-skip-permissions approves every question but keeps the sandbox; --permission-mode
also takes Claude Code's names (default = ask, acceptEdits = auto, plan = read-only,
bypassPermissions = yolo). stream-json prints Claude Code's events (system/init, assistant, user,
result) and Synapse's own as system events."#;

#[derive(Debug, Args)]
#[command(after_help = RUN_EXAMPLES)]
pub struct RunArgs {
    /// The task for the agent; `-` reads it from stdin.
    pub prompt: Option<String>,
    /// The task (same as the positional prompt, as in `claude -p`); a bare `-p` before other
    /// flags (`synapse -p --input-format stream-json`, `-p --verbose "<prompt>"`) takes none.
    #[arg(
        short = 'p',
        long = "print",
        value_name = "PROMPT",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub print: Option<String>,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// Do not print tool activity on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Claude Code's `--verbose` (which its stream-json requires): accepted so scripts written
    /// for `claude -p … --output-format stream-json --verbose` run unchanged. Synapse prints
    /// every event with or without it.
    #[arg(long)]
    pub verbose: bool,
    /// Model for this session.
    #[arg(long)]
    pub model: Option<String>,
    /// Continue the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub continue_latest: bool,
    /// Allow what the session asks approval for (without it, every request is denied: nobody
    /// is there to answer), an MCP server's sampling requests (its use of the model) included.
    /// Deny rules and read-only mode still hold. Forms MCP servers ask to be filled in are
    /// declined either way: answer them in `synapse chat`.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Start the turn and return at once, printing the session id (one line on stdout:
    /// `id=$(synapse run --detach "…")`); the turn goes on in the daemon. `synapse attach ID`
    /// shows it live and answers its questions, `synapse sessions list` says whether it is
    /// running or waiting for an answer. A question waits for a front end up to
    /// `questions.timeoutSecs` of settings.json (600 by default), then is answered no.
    #[arg(long)]
    pub detach: bool,
    /// Allow commands matching PATTERN for this run without asking (`git push:*`, `npm run *`,
    /// `mcp:fs:write_file`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// What the agent may do without asking: auto (default), ask, read-only or yolo.
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<super::chat::PermissionMode>,
    /// With `--output-format stream-json`: also print the answer's text as it streams
    /// (`stream_event` lines with `text_delta`s).
    #[arg(long)]
    pub include_partial_messages: bool,
    /// Where user messages come from: the prompt (text), or stream-json lines on stdin, each
    /// `{"type":"user","message":{"role":"user","content":"…"}}` one turn of the same session.
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,
    /// Model requests this run may make in all; reaching it ends the run with
    /// `error_max_turns` and exit status 1, as in Claude Code.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// Text added at the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Replaces Synapse's role paragraph of the system prompt. The documentation of the `Bash`
    /// tool and the agent commands stays, so the agent can still act.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Claude Code tool rules this run allows without asking: `Bash(git status:*)`,
    /// `Bash(npm run test)`, `Read`, `Edit`, `Write`, `mcp__srv__tool`, `mcp__srv`;
    /// comma- or space-separated, repeatable.
    #[arg(long = "allowedTools", alias = "allowed-tools", value_name = "RULES")]
    pub allowed_tools: Vec<String>,
    /// Claude Code tool rules this run refuses, in every mode and even with --yes (same syntax
    /// as --allowedTools). A rule that cannot be read exactly stops the run.
    #[arg(
        long = "disallowedTools",
        alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
    /// Claude Code's bypass mode: nothing is asked, every question is answered yes, and the
    /// command still runs inside the sandbox (what cannot stay inside is refused); deny rules
    /// and read-only mode hold. `--permission-mode yolo` is the one that leaves the sandbox.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// More folders the session may read and write, as its own (the sandbox's writable list
    /// and the permission rules); each must exist.
    #[arg(long = "add-dir", value_name = "DIRECTORIES", num_args = 1..)]
    pub add_dir: Vec<String>,
    /// Load MCP servers from JSON files or strings (space-separated), for this session only:
    /// Claude Code's `{"mcpServers": {"name": {"command": "…", "args": […]}}}` (or `"type":
    /// "http", "url": …`), `${VAR}` from this environment. They start when the session opens,
    /// need no approval, run under the MCP sandbox, replace a configured server of the same
    /// name for this session and stop when it ends; they never reach another session, a config
    /// file or `synapse mcp list`. A resumed session gets them only when given again.
    #[arg(long = "mcp-config", value_name = "CONFIGS", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Only use MCP servers from --mcp-config, ignoring all other MCP configurations (the
    /// user's, the project's and plugins' servers are not offered to this session).
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// The id of the new session (a UUID not used before).
    #[arg(long, value_name = "UUID", conflicts_with_all = ["resume", "continue_latest"])]
    pub session_id: Option<String>,
    /// More settings for this run, from a JSON file or string; they win over the user's and
    /// the project's.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Option<String>,
    /// Models to fall back to when the main model is overloaded or unavailable
    /// (comma-separated, in order); the main model is tried again at each turn's start.
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Vec<String>,
}

pub async fn run(paths: Paths, args: RunArgs) -> anyhow::Result<ExitCode> {
    let print = args.print.clone().filter(|p| !p.is_empty());
    if args.prompt.is_some() && print.is_some() {
        bail!("two prompts given: pass the task either after -p or as the argument, not both");
    }
    let given = args.prompt.clone().or(print);
    let mut inputs = match args.input_format {
        InputFormat::Text => Inputs::prompt(prompt_text(given)?),
        InputFormat::StreamJson => {
            Inputs::stream_json(given.filter(|p| p != "-" && !p.trim().is_empty()))
        }
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    if let Some(id) = &args.session_id {
        cc_flags::session_id(id)?;
    }
    let add_dirs = cc_flags::add_dirs(&args.add_dir, &cwd)?;
    let mcp_servers = cc_flags::mcp_servers(&args.mcp_config, &cwd)?;
    let settings_json = match &args.settings {
        Some(value) => cc_flags::settings(value, &cwd)?,
        None => String::new(),
    };
    let channel = crate::connect::connect(&paths).await?;
    let options = OpenOptions {
        model: args.model.clone(),
        resume_id: args.resume.clone(),
        resume_latest: args.continue_latest,
        permission_mode: args.permission_mode.map(|m| m.wire().to_string()),
        allow: args.allow.clone(),
        non_interactive: true,
        approve_all: args.yes,
        scripting: Scripting {
            system_prompt: args.system_prompt.clone(),
            append_system_prompt: args.append_system_prompt.clone(),
            max_turns: args.max_turns,
            allowed_tools: args.allowed_tools.clone(),
            disallowed_tools: args.disallowed_tools.clone(),
            add_dirs,
            mcp_servers,
            strict_mcp_config: args.strict_mcp_config,
            session_id: args.session_id.clone(),
            settings_json,
            fallback_models: cc_flags::fallback_models(&args.fallback_model),
            bypass_permissions: args.dangerously_skip_permissions,
        },
        cleared: false,
        cwd: None,
        detach: args.detach,
        editor_files: false,
    };
    if args.detach {
        detach::refuse_with(&args)?;
    }
    let mut session = Session::open(channel.clone(), &options).await?;
    let session_id = session.id().to_string();
    if args.detach {
        let Some(first) = inputs.next().await? else {
            bail!("--detach needs a task: synapse run --detach \"<task>\"");
        };
        return detach::start(session, first).await;
    }
    for warning in &session.opened().warnings {
        eprintln!("warning: {warning}");
    }
    let model = session.opened().model.clone();
    let stream = match args.output_format {
        OutputFormat::StreamJson => Some(StreamJson::new(
            &session_id,
            &session.opened().cwd,
            &model,
            stream_json::InitFacts {
                tools: if removes_bash(&args.disallowed_tools) {
                    Vec::new()
                } else {
                    vec!["Bash".to_string()]
                },
                bypass: args.dangerously_skip_permissions,
                ..init::init_facts(channel, &session_id).await
            },
            args.include_partial_messages,
        )),
        _ => None,
    };
    let Some(first) = inputs.next().await? else {
        bail!(
            "no user message on stdin: send lines such as {}",
            input::EXAMPLE_LINE
        );
    };
    // A reader that went away (`| head -1`) does not stop the run: its output is dropped.
    let mut front = RunFront::new(args.output_format, args.quiet, args.yes, stream, &model);
    session.input(Input::text(first)).await?;
    spawn_signal_handler(session.sender())?;
    let mut ended = session.follow(&mut front).await;
    loop {
        let done = match ended {
            Ok(done) => done,
            Err(closed) => bail!("{}", daemon_stopped(closed.cause(), &session_id)),
        };
        if let Some(e) = front.take_failure() {
            return Err(e).context("cannot write the run's output");
        }
        let ok = done.reason.is_success();
        // The next stdin message is the next turn; the run ends with the last one, or at the
        // first turn that did not complete. Messages that arrived while this turn ran are of its
        // batch: one stream-json result for them all, as Claude Code.
        if ok && let Some(next) = inputs.ready() {
            ended = session.run_turn(&mut front, Input::text(next)).await;
            continue;
        }
        if let Some(line) = front
            .stream
            .as_ref()
            .map(|s| s.result(&done, &front.tally, args.max_turns))
        {
            front.out(line);
        }
        if ok && let Some(next) = inputs.next().await? {
            if let Some(stream) = front.stream.as_mut() {
                // A new batch: its own init and totals, as Claude Code counts them.
                stream.next_batch();
                front.tally = RunTally::new(&model);
            }
            ended = session.run_turn(&mut front, Input::text(next)).await;
            continue;
        }
        if args.output_format == OutputFormat::Json {
            let out = json_result(
                &done,
                &front.tally,
                &session_id,
                args.max_turns,
                front.enhance_report.take(),
            );
            front.out(serde_json::to_string_pretty(&out)?);
        }
        if let Some(e) = front.take_failure() {
            return Err(e).context("cannot write the run's output");
        }
        return Ok(ExitCode::from(exit_status(&done.reason)));
    }
}

/// `--output-format json`'s object: Claude Code's result fields, then Synapse's own.
fn json_result(
    done: &TurnEnded,
    tally: &RunTally,
    session_id: &str,
    max_turns: Option<u32>,
    skill_enhance: Option<String>,
) -> serde_json::Value {
    let mut out = stream_json::result_json(done, tally, session_id, max_turns);
    let usage = &done.usage;
    if let Some(obj) = out.as_object_mut() {
        obj.insert("turn".into(), done.turn.into());
        obj.insert("turn_usage".into(), usage_json(usage));
        obj.insert(
            "context_window".into(),
            (usage.context_window > 0)
                .then(|| {
                    serde_json::json!({
                        "tokens": usage.context_window,
                        "used": usage.context_tokens,
                        "source": usage.context_source,
                    })
                })
                .into(),
        );
        obj.insert("skill_enhance".into(), skill_enhance.into());
    }
    out
}

/// The exit status for a turn's end reason (see the module doc).
fn exit_status(reason: &StopReason) -> u8 {
    match reason {
        StopReason::Completed => 0,
        StopReason::Cancelled => EXIT_CANCELLED,
        StopReason::Error => EXIT_MODEL_ERROR,
        StopReason::Truncated => EXIT_TRUNCATED,
        // As `claude -p` ends at its --max-turns.
        StopReason::MaxTurns => 1,
        StopReason::MaxIterations | StopReason::TooManyFailures => EXIT_LIMIT,
        StopReason::Other(_) => 1,
    }
}

/// One line for stderr: the message, with the failure's class and HTTP status when known.
fn failure_line(done: &TurnEnded) -> String {
    match (done.error_kind.as_str(), done.http_status) {
        ("", _) => done.message.clone(),
        // A custom command that could not be expanded: no model was called.
        ("command", _) => done.message.clone(),
        (kind, 0) => format!("model error ({kind}): {}", done.message),
        (kind, status) => format!("model error ({kind}, HTTP {status}): {}", done.message),
    }
}

pub(super) fn error_json(done: &TurnEnded) -> serde_json::Value {
    let kind = if done.error_kind.is_empty() {
        done.reason.as_str()
    } else {
        done.error_kind.as_str()
    };
    serde_json::json!({
        "kind": kind,
        "message": done.message,
        "http_status": (done.http_status != 0).then_some(done.http_status),
    })
}

/// What to say when the event stream broke: the daemon is gone, and how to pick the session up.
pub fn daemon_stopped(cause: &str, session_id: &str) -> String {
    let logs = synapse_shared::paths::Paths::from_env()
        .map(|p| p.logs_dir().display().to_string())
        .unwrap_or_else(|_| "the Synapse home's logs folder".to_string());
    format!(
        "the daemon stopped ({cause}) before the turn finished. Its log is in \
         {logs} (`synapse daemon logs`); continue the session with \
         `synapse run --resume {session_id} \"...\"` (the daemon starts again by itself)"
    )
}

/// SIGINT cancels the turn (and the run ends when the daemon says so); SIGTERM and SIGHUP
/// cancel it and end the run at once, as whoever sent them expects.
fn spawn_signal_handler(out: SessionSender) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            let exit_with = tokio::select! {
                _ = int.recv() => None,
                _ = term.recv() => Some(143),
                _ = hup.recv() => Some(129),
            };
            let sent =
                tokio::time::timeout(SIGNAL_SEND_TIMEOUT, out.control(Control::Cancel)).await;
            if let Some(code) = exit_with {
                if sent.is_ok() {
                    // Give the message a moment to leave; the daemon cancels on close anyway.
                    tokio::task::yield_now().await;
                }
                std::process::exit(code);
            }
        }
    });
    Ok(())
}

/// How long a signal handler tries to tell the daemon before it exits regardless.
const SIGNAL_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(200);

fn prompt_text(prompt: Option<String>) -> anyhow::Result<String> {
    match prompt.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            if text.trim().is_empty() {
                bail!("the prompt read from stdin is empty");
            }
            Ok(text)
        }
        Some(p) if !p.trim().is_empty() => Ok(p.to_string()),
        _ if !std::io::stdin().is_terminal() => {
            bail!("no prompt given: pass it as an argument, or `-` to read it from stdin")
        }
        _ => bail!(
            "no prompt given: synapse run \"<what to do>\" (or `synapse chat` for a conversation)"
        ),
    }
}

pub fn usage_json(u: &Usage) -> serde_json::Value {
    serde_json::json!({
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation_input_tokens": u.cache_creation_tokens,
    })
}

/// True when `--disallowedTools` names the whole `Bash` tool (the daemon then offers none).
fn removes_bash(disallowed: &[String]) -> bool {
    disallowed
        .iter()
        .flat_map(|r| r.split([',', ' ']))
        .any(|rule| rule.trim() == "Bash")
}
