//! Sessions as `/resume` and `/sessions` show them: this workspace's sessions (same folder or
//! below it) with title, age and size; `--all` adds every other folder, marked with its path.
//! Sessions nobody wrote in yet (no user message) are not offered, except the one the REPL is in
//! (marked `← this session`). After resuming, the last
//! exchanges are printed so the user sees where the talk left off. `synapse --resume` without an
//! id shows the same list before the REPL opens a session ([`pick_session`]).

use synapse_shared::proto::sessions_client::SessionsClient;
use synapse_shared::proto::{GetSessionRequest, ListSessionsRequest, SessionInfo};
use tonic::transport::Channel;

use super::Repl;
use super::input::{LineReader, Reply};
use super::status::tilde;
use crate::render::theme::Theme;

/// Sessions offered by `/resume` without an argument.
const RESUME_CHOICES: usize = 20;
/// Characters of a message shown in the recap after `/resume`.
const RECAP_CHARS: usize = 300;
/// Exchanges (a user message and the answer) printed after resuming.
const RECAP_EXCHANGES: usize = 2;

/// What the user chose in the picker of `synapse --resume`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    Session(String),
    /// Enter, or nothing to resume: a new session.
    New,
    /// Ctrl-C or Ctrl-D: leave.
    Quit,
}

/// `synapse --resume` without an id: the sessions of this folder, numbered, and the user's
/// choice (a number or an id).
pub async fn pick_session(
    channel: &Channel,
    cwd: &str,
    theme: &Theme,
    input: &mut LineReader,
) -> anyhow::Result<Picked> {
    let sessions = sessions_of(channel, cwd, false, "").await?;
    let print = |text: &str| {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    };
    if sessions.is_empty() {
        print(&theme.dim(
            "No saved sessions in this folder yet (synapse sessions list shows every folder's); starting a new one.\n",
        ));
        return Ok(Picked::New);
    }
    print(&session_lines(theme, &sessions, "", cwd, false));
    let question = format!(
        "Resume which session? [1-{}, Enter starts a new one] ",
        sessions.len()
    );
    loop {
        input.request(&question, false, String::new())?;
        let answer = match input.reply().await {
            Reply::Line(line) => line.trim().to_string(),
            Reply::Interrupted | Reply::Eof => return Ok(Picked::Quit),
            Reply::Failed(e) => anyhow::bail!("cannot read input: {e}"),
        };
        if answer.is_empty() {
            return Ok(Picked::New);
        }
        match answer.parse::<usize>() {
            Ok(n) if (1..=sessions.len()).contains(&n) => {
                return Ok(Picked::Session(sessions[n - 1].id.clone()));
            }
            Ok(_) => print(&format!("There is no session number {answer}.\n")),
            Err(_) => return Ok(Picked::Session(answer)),
        }
    }
}

/// Sessions most recent first: this workspace's only, or every folder's with `all`.
async fn sessions_of(
    channel: &Channel,
    cwd: &str,
    all: bool,
    current: &str,
) -> anyhow::Result<Vec<SessionInfo>> {
    let sessions = SessionsClient::new(channel.clone())
        .list(ListSessionsRequest { limit: 0 })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner()
        .sessions;
    Ok(for_workspace(sessions, cwd, all, current))
}

/// The numbered list: title, age, size, id; the folder when it is not this one.
fn session_lines(
    theme: &Theme,
    sessions: &[SessionInfo],
    current: &str,
    here: &str,
    all: bool,
) -> String {
    let now = std::time::SystemTime::now();
    let mut out = String::new();
    for (i, s) in sessions.iter().enumerate() {
        let mark = if s.id == current {
            "  ← this session"
        } else {
            ""
        };
        let folder = if in_workspace(&s.cwd, here) {
            String::new()
        } else {
            format!(" · {}", tilde(&s.cwd))
        };
        let noun = if s.messages == 1 { "msg" } else { "msgs" };
        let details = format!(
            "  {} · {} {noun} · {}{folder}",
            age(&s.updated, now),
            s.messages,
            s.id
        );
        out.push_str(&format!(
            "{:>3}. {}{}{}\n",
            i + 1,
            if s.title.is_empty() {
                "(no messages yet)"
            } else {
                &s.title
            },
            theme.dim(&details),
            theme.dim(mark)
        ));
    }
    if !all {
        out.push_str(&theme.dim("     (sessions of this folder; --all lists every folder)\n"));
    }
    out
}

impl Repl {
    /// Sessions most recent first: this workspace's only, or every folder's with `all`.
    pub(super) async fn workspace_sessions(&self, all: bool) -> anyhow::Result<Vec<SessionInfo>> {
        sessions_of(
            self.link.channel(),
            &self.link.opened().cwd,
            all,
            self.link.id(),
        )
        .await
    }

    /// Prints a numbered list of sessions and returns them.
    pub(super) async fn list_sessions(&mut self, all: bool) -> anyhow::Result<Vec<SessionInfo>> {
        self.ensure_link().await?;
        let sessions = self.workspace_sessions(all).await?;
        if sessions.is_empty() {
            self.say("No saved sessions in this folder yet; /resume --all lists every folder's.\n");
            return Ok(sessions);
        }
        let current = self.link.id().to_string();
        let text = session_lines(
            &self.theme,
            &sessions,
            &current,
            &self.link.opened().cwd,
            all,
        );
        self.say(&text);
        Ok(sessions)
    }

    /// The last exchanges of a resumed session, so the user sees where it left off.
    pub(super) async fn recap(&mut self, id: &str) {
        let reply = SessionsClient::new(self.link.channel().clone())
            .get(GetSessionRequest { id: id.to_string() })
            .await;
        let Ok(reply) = reply else { return };
        let Ok(messages) =
            serde_json::from_str::<Vec<serde_json::Value>>(&reply.into_inner().messages_json)
        else {
            return;
        };
        let mut out = String::new();
        for (role, text) in last_exchanges(&messages, RECAP_EXCHANGES) {
            let who = if role == "user" { "you" } else { "synapse" };
            out.push_str(&self.theme.dim(&format!("  {who}: {}\n", shorten(&text))));
        }
        self.say(&out);
    }
}

/// This workspace's sessions first (most recent first), then, with `all`, the others; never one
/// without a user message (nothing to go back to) but the `current` one.
fn for_workspace(
    sessions: Vec<SessionInfo>,
    cwd: &str,
    all: bool,
    current: &str,
) -> Vec<SessionInfo> {
    let (mut here, others): (Vec<_>, Vec<_>) = sessions
        .into_iter()
        .filter(|s| !s.title.trim().is_empty() || s.id == current)
        .partition(|s| in_workspace(&s.cwd, cwd));
    if all {
        here.extend(others);
    } else {
        here.truncate(RESUME_CHOICES);
    }
    here
}

/// A session belongs here when it ran in this folder or below it.
fn in_workspace(session_cwd: &str, cwd: &str) -> bool {
    let cwd = cwd.trim_end_matches('/');
    session_cwd == cwd
        || session_cwd
            .strip_prefix(cwd)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The text of the last `n` user messages and the answers after them, in order. Tool results
/// (user messages without text) are skipped.
fn last_exchanges(messages: &[serde_json::Value], n: usize) -> Vec<(String, String)> {
    let texts: Vec<(String, String)> = messages
        .iter()
        .filter_map(|m| {
            let role = m["role"].as_str()?.to_string();
            let text = match &m["content"] {
                serde_json::Value::String(s) => s.clone(),
                // A turn's note from the environment (`<system-reminder>`) is not the user's.
                serde_json::Value::Array(blocks) => blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .filter(|t| !t.starts_with("<system-reminder>"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (!text.trim().is_empty()).then_some((role, text))
        })
        .collect();
    let users: Vec<usize> = texts
        .iter()
        .enumerate()
        .filter(|(_, (r, _))| r == "user")
        .map(|(i, _)| i)
        .collect();
    let from = users
        .len()
        .checked_sub(n)
        .and_then(|i| users.get(i))
        .or(users.first())
        .copied()
        .unwrap_or(0);
    texts[from..].to_vec()
}

fn shorten(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= RECAP_CHARS {
        return one_line;
    }
    let mut s: String = one_line.chars().take(RECAP_CHARS).collect();
    s.push('…');
    s
}

/// `2026-11-23T20:30:00Z` → `5m ago` (relative to `now`); the raw text when it doesn't parse.
pub fn age(updated: &str, now: std::time::SystemTime) -> String {
    let Some(then) = parse_utc(updated) else {
        return updated.to_string();
    };
    let now = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let secs = (now - then).max(0);
    match secs {
        0..60 => "just now".to_string(),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// Seconds since the epoch of an RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.fff]Z` or with an offset).
fn parse_utc(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(id: &str, cwd: &str) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            cwd: cwd.into(),
            title: format!("talk {id}"),
            ..SessionInfo::default()
        }
    }

    #[test]
    fn a_session_without_a_user_message_is_not_offered() {
        let empty = SessionInfo {
            title: String::new(),
            ..info("e", "/p")
        };
        let listed = for_workspace(vec![info("a", "/p"), empty.clone()], "/p", true, "x");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, "a");
        // The one the REPL is in stays, however new.
        assert_eq!(for_workspace(vec![empty], "/p", true, "e").len(), 1);
    }

    #[test]
    fn this_workspace_first_others_only_with_all() {
        let all = vec![
            info("a", "/x"),
            info("b", "/p/sub"),
            info("c", "/p"),
            info("d", "/pp"),
        ];
        let ids = |v: Vec<SessionInfo>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(ids(for_workspace(all.clone(), "/p", false, "")), ["b", "c"]);
        assert_eq!(
            ids(for_workspace(all, "/p", true, "")),
            ["b", "c", "a", "d"]
        );
    }

    #[test]
    fn ages_read_like_a_person_says_them() {
        let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_763_929_800);
        assert_eq!(parse_utc("2025-11-23T20:30:00Z"), Some(1_763_929_800));
        assert_eq!(age("2025-11-23T20:25:00Z", now), "5m ago");
        assert_eq!(age("2025-11-21T20:30:00.123Z", now), "2d ago");
        assert_eq!(age("garbage", now), "garbage");
    }

    #[test]
    fn recap_takes_the_last_exchanges() {
        let messages = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "one"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "1"}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "two"}]}),
            json!({"role": "assistant", "content": [{"type": "tool_use"}]}),
            json!({"role": "user", "content": [{"type": "tool_result"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "2"}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "three"},
                {"type": "text", "text": "<system-reminder>\nnote\n</system-reminder>"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "3"}]}),
        ];
        let got: Vec<String> = last_exchanges(&messages, 2)
            .into_iter()
            .map(|(r, t)| format!("{r}:{t}"))
            .collect();
        assert_eq!(
            got,
            ["user:two", "assistant:2", "user:three", "assistant:3"]
        );
    }
}
