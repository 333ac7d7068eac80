//! What the user typed, classified: a `!` shell command, a slash command (parsed here, names
//! case-insensitive), or a message for the model. Executing them is the REPL's job.

/// One submitted line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Empty,
    /// `!<command>`: run locally, never sent to the model.
    Shell(String),
    Slash(Slash),
    Message(String),
}

/// `/resume` targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeTarget {
    /// Show a numbered list and ask: this workspace's sessions, or every folder's (`--all`).
    Choose {
        all: bool,
    },
    Latest,
    Id(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Help,
    Exit,
    Clear,
    Resume(ResumeTarget),
    /// `/attach [id]`: this REPL joins a session that is running (live, with its questions).
    Attach(Option<String>),
    Sessions,
    Model(Option<String>),
    Cost,
    Context,
    Compact,
    /// `/permissions [mode]`: show the mode and rules, or switch the mode.
    Permissions(Option<String>),
    Tools(Option<String>),
    SkillList,
    /// `None` shows the state.
    SkillEnhance(Option<bool>),
    /// `/expand [N]`: the whole output of tool call N (the last one without N).
    Expand(Option<usize>),
    /// `/memory`: the instruction files the session was given; `/memory <N>` or `/memory edit`
    /// opens one in `$EDITOR`.
    Memory(MemoryTarget),
    /// `/init`: ask the agent to write the project's `AGENTS.md`.
    Init,
    /// `/hooks`: the hooks in force here, by event.
    Hooks,
    /// A known command with arguments it does not take: the usage to show.
    Usage(&'static str),
    /// Not a built-in command: `/<skill> args` when a user-invocable skill has that name, else
    /// unknown. `args` is the rest of the line as typed.
    Other {
        name: String,
        args: String,
    },
}

/// What `/memory` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryTarget {
    List,
    /// Open file N of the list (1-based).
    Open(usize),
    /// Open the closest project file (the last of the list), else a new `AGENTS.md` here.
    Edit,
}

/// Classifies a submitted line.
pub fn classify(line: &str) -> Line {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Line::Empty;
    }
    if let Some(command) = trimmed.strip_prefix('!') {
        return Line::Shell(command.trim().to_string());
    }
    if trimmed.starts_with('/') && !looks_like_path(trimmed) {
        return Line::Slash(parse_slash(trimmed));
    }
    Line::Message(line.trim_end().to_string())
}

/// `/usr/bin/x is broken` is a message about a path, not a command.
fn looks_like_path(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or_default();
    first[1..].contains('/')
}

fn parse_slash(text: &str) -> Slash {
    let mut words = text.split_whitespace();
    let name = words.next().unwrap_or_default().to_lowercase();
    let args: Vec<&str> = words.collect();
    match (name.as_str(), args.as_slice()) {
        ("/help" | "/?", []) => Slash::Help,
        ("/exit" | "/quit", []) => Slash::Exit,
        ("/clear" | "/new", []) => Slash::Clear,
        ("/resume", []) => Slash::Resume(ResumeTarget::Choose { all: false }),
        ("/resume", ["--all" | "-a"]) => Slash::Resume(ResumeTarget::Choose { all: true }),
        ("/resume", ["--latest" | "-l"]) => Slash::Resume(ResumeTarget::Latest),
        ("/resume", [id]) if !id.starts_with('-') => {
            Slash::Resume(ResumeTarget::Id(id.to_string()))
        }
        ("/resume", _) => Slash::Usage("/resume [<id>|--latest|--all]"),
        ("/attach", []) => Slash::Attach(None),
        ("/attach", [id]) if !id.starts_with('-') => Slash::Attach(Some(id.to_string())),
        ("/attach", _) => Slash::Usage("/attach [<id>]"),
        ("/sessions", []) => Slash::Sessions,
        ("/model", []) => Slash::Model(None),
        ("/model", [name]) => Slash::Model(Some(name.to_string())),
        ("/model", _) => Slash::Usage("/model [<name>]"),
        ("/cost", []) => Slash::Cost,
        ("/context", []) => Slash::Context,
        ("/compact", []) => Slash::Compact,
        ("/permissions", []) => Slash::Permissions(None),
        ("/permissions", [mode])
            if matches!(
                mode.to_lowercase().as_str(),
                "auto" | "ask" | "read-only" | "readonly" | "yolo"
            ) =>
        {
            Slash::Permissions(Some(mode.to_lowercase()))
        }
        ("/permissions", _) => Slash::Usage("/permissions [auto|ask|read-only|yolo]"),
        ("/tools", []) => Slash::Tools(None),
        ("/tools", query) => Slash::Tools(Some(query.join(" "))),
        ("/skill" | "/skills", [sub, rest @ ..]) => match (sub.to_lowercase().as_str(), rest) {
            ("list", []) => Slash::SkillList,
            ("enhance", []) => Slash::SkillEnhance(None),
            ("enhance", [flag]) if flag.eq_ignore_ascii_case("--on") => {
                Slash::SkillEnhance(Some(true))
            }
            ("enhance", [flag]) if flag.eq_ignore_ascii_case("--off") => {
                Slash::SkillEnhance(Some(false))
            }
            _ => Slash::Usage(SKILL_USAGE),
        },
        ("/skill" | "/skills", []) => Slash::SkillList,
        ("/expand", []) => Slash::Expand(None),
        ("/expand", [n]) if n.parse::<usize>().is_ok_and(|n| n > 0) => {
            Slash::Expand(n.parse().ok())
        }
        ("/expand", _) => Slash::Usage("/expand [<N>]"),
        ("/memory", []) => Slash::Memory(MemoryTarget::List),
        ("/memory", ["edit"]) => Slash::Memory(MemoryTarget::Edit),
        ("/memory", [n]) if n.parse::<usize>().is_ok_and(|n| n > 0) => {
            Slash::Memory(MemoryTarget::Open(n.parse().unwrap_or(1)))
        }
        ("/memory", _) => Slash::Usage("/memory [<N>|edit]"),
        ("/init", []) => Slash::Init,
        ("/hooks", []) => Slash::Hooks,
        (
            "/help" | "/exit" | "/quit" | "/clear" | "/new" | "/sessions" | "/cost" | "/context"
            | "/compact" | "/init" | "/hooks",
            _,
        ) => Slash::Usage(usage_of(&name)),
        // The name as typed: an MCP prompt's name may have capitals.
        _ => Slash::Other {
            args: text
                .trim_start()
                .split_once(char::is_whitespace)
                .map(|(_, rest)| rest.trim().to_string())
                .unwrap_or_default(),
            name: text
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        },
    }
}

const SKILL_USAGE: &str = "/skill list | /skill enhance [--on|--off]";

fn usage_of(name: &str) -> &'static str {
    HELP.iter()
        .find(|(usage, _)| usage.split_whitespace().next() == Some(name))
        .map(|(usage, _)| *usage)
        .unwrap_or("/help")
}

/// Every command with a one-line description, in `/help` order.
pub const HELP: &[(&str, &str)] = &[
    ("/help", "show this list"),
    (
        "/exit, /quit",
        "leave (Ctrl-D works too); the session stays resumable",
    ),
    ("/clear", "start a new session"),
    (
        "/resume [<id>|--latest|--all]",
        "continue an earlier session of this folder (--all: of every folder)",
    ),
    (
        "/attach [<id>]",
        "join a running session live and answer its questions (no id: this folder's latest running one)",
    ),
    ("/sessions", "list saved sessions"),
    (
        "/model [<name>]",
        "show the model, or switch it for the following turns",
    ),
    (
        "/permissions [<mode>]",
        "show what the agent may do, or switch mode: auto, ask, read-only, yolo",
    ),
    (
        "/cost",
        "tokens used in this session and an estimated price",
    ),
    ("/context", "how full the model's context window is"),
    (
        "/compact",
        "shrink the conversation: offload large tool results, summarise older turns",
    ),
    (
        "/tools [<query>]",
        "the mcp:* and skill:* commands the agent can run",
    ),
    (
        "/expand [<N>]",
        "the whole output of tool call N (the last call without N)",
    ),
    (
        "/memory [<N>|edit]",
        "the instruction files (AGENTS.md, CLAUDE.md) given to the agent; open one",
    ),
    (
        "/init",
        "ask the agent to write an AGENTS.md for this project",
    ),
    (
        "/hooks",
        "the hooks in force here (Claude Code's format), by event and source",
    ),
    ("/skill list", "installed skills"),
    (
        "/skill enhance [--on|--off]",
        "show or switch automatic skill enhancement",
    ),
];

/// The `/help` text.
pub fn help_text() -> String {
    let width = HELP.iter().map(|(u, _)| u.len()).max().unwrap_or(0);
    let mut out = String::from("Commands:\n");
    for (usage, what) in HELP {
        out.push_str(&format!("  {usage:<width$}  {what}\n"));
    }
    out.push_str(
        "\nInput:\n  !<command>   run a shell command here; its output is not sent to the model\n  \\ at the end of a line continues the message on the next line (pasting works too)\n  Ctrl-J, Alt+Enter, Shift+Enter  insert a newline (where the terminal sends them)\n  @<path>      attach a file to the message (Tab completes paths)\n  Tab          complete commands and paths\n  Esc, Ctrl-C  cancel the running turn (Ctrl-C at the prompt clears the line)\n  Ctrl-D       exit\n  While a turn runs, what you type is kept and runs after it\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn classifies_lines() {
        assert_eq!(classify("   "), Line::Empty);
        assert_eq!(classify("!echo hi"), Line::Shell("echo hi".into()));
        assert_eq!(classify("fix the bug"), Line::Message("fix the bug".into()));
        assert_eq!(
            classify("/usr/bin/env is odd"),
            Line::Message("/usr/bin/env is odd".into())
        );
        assert_eq!(classify("/HELP"), Line::Slash(Slash::Help));
        assert_eq!(classify("/Quit"), Line::Slash(Slash::Exit));
    }

    #[test]
    fn parses_arguments() {
        let s = |t: &str| parse_slash(t);
        assert_eq!(
            s("/resume"),
            Slash::Resume(ResumeTarget::Choose { all: false })
        );
        assert_eq!(
            s("/resume --all"),
            Slash::Resume(ResumeTarget::Choose { all: true })
        );
        assert_eq!(s("/resume --latest"), Slash::Resume(ResumeTarget::Latest));
        assert_eq!(
            s("/resume abc"),
            Slash::Resume(ResumeTarget::Id("abc".into()))
        );
        assert_eq!(s("/model opus"), Slash::Model(Some("opus".into())));
        assert_eq!(s("/Skill Enhance --ON"), Slash::SkillEnhance(Some(true)));
        assert_eq!(s("/skill enhance --off"), Slash::SkillEnhance(Some(false)));
        assert_eq!(s("/skill enhance"), Slash::SkillEnhance(None));
        assert_eq!(s("/skill frob"), Slash::Usage(SKILL_USAGE));
        assert_eq!(s("/cost now"), Slash::Usage("/cost"));
        assert_eq!(
            s("/foo"),
            Slash::Other {
                name: "/foo".into(),
                args: String::new()
            }
        );
        assert_eq!(
            s("/Fix-Issue  123 and  more "),
            Slash::Other {
                name: "/Fix-Issue".into(),
                args: "123 and  more".into()
            }
        );
        assert_eq!(s("/tools pdf"), Slash::Tools(Some("pdf".into())));
        assert_eq!(s("/memory"), Slash::Memory(MemoryTarget::List));
        assert_eq!(s("/memory 2"), Slash::Memory(MemoryTarget::Open(2)));
        assert_eq!(s("/memory edit"), Slash::Memory(MemoryTarget::Edit));
        assert_eq!(s("/memory x y"), Slash::Usage("/memory [<N>|edit]"));
        assert_eq!(s("/init"), Slash::Init);
        assert_eq!(s("/init now"), Slash::Usage("/init"));
        assert_eq!(s("/hooks"), Slash::Hooks);
        assert_eq!(s("/hooks x"), Slash::Usage("/hooks"));
    }

    #[test]
    fn help_lists_every_command() {
        insta::assert_snapshot!(help_text());
    }
}
