//! Slash commands: each asks the daemon (sessions, settings, the session's model) or prints
//! what the REPL knows (usage). `/resume` and `/clear` swap the attachment for another session.

use std::time::Duration;

use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::sessions_client::SessionsClient;
use synapse_shared::proto::{
    CompactContext, GetSessionRequest, GetSettingsRequest, ListSessionsRequest, SessionInfo,
    SetAutoEnhanceRequest, SetModel, SetPermissionMode,
};

use super::Repl;
use super::commands::{ResumeTarget, Slash, help_text};
use super::input::Reply;
use super::link::{Incoming, Link};
use super::spinner::Spinner;
use super::usage::UsageStats;
use crate::attach::OpenOptions;
use crate::render::banner::session_label;

/// Sessions offered by `/resume` without an argument.
const RESUME_CHOICES: u32 = 20;
/// How long `/model` waits for the daemon's confirmation.
const MODEL_REPLY_TIMEOUT: Duration = Duration::from_secs(5);
/// Characters of a message shown in the recap after `/resume`.
const RECAP_CHARS: usize = 300;

impl Repl {
    pub(super) async fn slash(&mut self, command: Slash) -> anyhow::Result<()> {
        let result = match command {
            Slash::Help => {
                self.say(&help_text());
                Ok(())
            }
            Slash::Exit => Ok(()),
            Slash::Clear => self.switch_session(OpenOptions::default(), "Started").await,
            Slash::Resume(target) => self.resume(target).await,
            Slash::Sessions => self.list_sessions().await.map(|_| ()),
            Slash::Model(name) => self.model_command(name).await,
            Slash::Cost => {
                self.say(&self.usage.cost_report(&self.theme, &self.model));
                Ok(())
            }
            Slash::Context => {
                self.say(&self.usage.context_report(&self.theme));
                Ok(())
            }
            Slash::Compact => self.compact().await,
            Slash::Permissions(mode) => self.permissions(mode).await,
            Slash::Tools(query) => self.tools(query).await,
            Slash::SkillList => self.skill_list().await,
            Slash::SkillEnhance(on) => self.skill_enhance(on).await,
            Slash::Expand(n) => {
                self.expand(n);
                Ok(())
            }
            Slash::Usage(usage) => {
                self.say(&format!("Usage: {usage}\n"));
                Ok(())
            }
            Slash::Unknown(name) => {
                self.say(&format!(
                    "Unknown command: {name}. Type /help to see the commands.\n"
                ));
                Ok(())
            }
        };
        if let Err(e) = result {
            self.say(&self.theme.red(&format!("error: {e:#}\n")));
        }
        Ok(())
    }

    /// Replaces the attachment with another session (`verb` says how it was opened).
    async fn switch_session(&mut self, mut options: OpenOptions, verb: &str) -> anyhow::Result<()> {
        if options.model.is_none() {
            options.model = self.model_override.clone();
        }
        if options.permission_mode.is_none() {
            options.permission_mode = self.permission_mode.clone();
        }
        let link = Link::open(&self.paths, &options).await?;
        self.link = link;
        self.model = self.link.opened.model.clone();
        self.turns = self.link.opened.turns;
        self.usage = UsageStats::default();
        let label = session_label(&self.link.opened);
        self.say(&format!("{verb} session {label}.\n"));
        for warning in &self.link.opened.warnings {
            self.say(&self.theme.yellow(&format!("warning: {warning}\n")));
        }
        Ok(())
    }

    async fn resume(&mut self, target: ResumeTarget) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let current = self.link.session_id().to_string();
        let id = match target {
            ResumeTarget::Id(id) => id,
            ResumeTarget::Latest => {
                let sessions = self.sessions(RESUME_CHOICES).await?;
                match sessions.into_iter().find(|s| s.id != current) {
                    Some(s) => s.id,
                    None => {
                        self.say("There is no other session to resume.\n");
                        return Ok(());
                    }
                }
            }
            ResumeTarget::Choose => {
                let sessions = self.list_sessions().await?;
                if sessions.is_empty() {
                    return Ok(());
                }
                let question = format!(
                    "Resume which session? [1-{}, Enter cancels] ",
                    sessions.len()
                );
                let answer = match self.read_line(&question, false, String::new()).await {
                    Reply::Line(line) => line.trim().to_string(),
                    _ => String::new(),
                };
                if answer.is_empty() {
                    return Ok(());
                }
                match answer.parse::<usize>() {
                    Ok(n) if (1..=sessions.len()).contains(&n) => sessions[n - 1].id.clone(),
                    Ok(_) => anyhow::bail!("no session number {answer}"),
                    Err(_) => answer,
                }
            }
        };
        if id == current {
            self.say(&format!("Already in session {id}.\n"));
            return Ok(());
        }
        let options = OpenOptions {
            resume_id: Some(id.clone()),
            ..OpenOptions::default()
        };
        self.switch_session(options, "Resumed").await?;
        self.recap(&id).await;
        Ok(())
    }

    /// The last exchange of a resumed session, so the user sees where it left off.
    async fn recap(&mut self, id: &str) {
        let reply = SessionsClient::new(self.link.channel.clone())
            .get(GetSessionRequest { id: id.to_string() })
            .await;
        let Ok(reply) = reply else { return };
        let Ok(messages) =
            serde_json::from_str::<Vec<serde_json::Value>>(&reply.into_inner().messages_json)
        else {
            return;
        };
        let text_of = |role: &str| {
            messages.iter().rev().find_map(|m| {
                if m["role"] != role {
                    return None;
                }
                let text: Vec<&str> = m["content"]
                    .as_array()?
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                (!text.is_empty()).then(|| shorten(&text.join("\n")))
            })
        };
        let mut out = String::new();
        if let Some(user) = text_of("user") {
            out.push_str(&self.theme.dim(&format!("  you: {user}\n")));
        }
        if let Some(answer) = text_of("assistant") {
            out.push_str(&self.theme.dim(&format!("  synapse: {answer}\n")));
        }
        self.say(&out);
    }

    async fn sessions(&self, limit: u32) -> anyhow::Result<Vec<SessionInfo>> {
        Ok(SessionsClient::new(self.link.channel.clone())
            .list(ListSessionsRequest { limit })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner()
            .sessions)
    }

    /// Prints a numbered list of sessions and returns them.
    async fn list_sessions(&mut self) -> anyhow::Result<Vec<SessionInfo>> {
        self.ensure_link().await?;
        let sessions = self.sessions(RESUME_CHOICES).await?;
        if sessions.is_empty() {
            self.say("No saved sessions yet.\n");
            return Ok(sessions);
        }
        let current = self.link.session_id().to_string();
        let mut out = String::new();
        for (i, s) in sessions.iter().enumerate() {
            let title = if s.title.is_empty() {
                "(no messages yet)"
            } else {
                &s.title
            };
            let mark = if s.id == current {
                "  ← this session"
            } else {
                ""
            };
            out.push_str(&format!(
                "{:>3}. {}  {}  {:>3} msgs  {}{}\n",
                i + 1,
                s.id,
                self.theme.dim(&s.updated),
                s.messages,
                title,
                self.theme.dim(mark)
            ));
        }
        self.say(&out);
        Ok(sessions)
    }

    async fn model_command(&mut self, name: Option<String>) -> anyhow::Result<()> {
        let Some(name) = name else {
            let model = if self.model.is_empty() {
                "(not configured)"
            } else {
                &self.model
            };
            self.say(&format!("Model: {model}\n"));
            return Ok(());
        };
        self.ensure_link().await?;
        self.link
            .send(Out::SetModel(SetModel {
                model: name.clone(),
            }))
            .await?;
        let confirmed = tokio::time::timeout(MODEL_REPLY_TIMEOUT, async {
            loop {
                match self.link.next().await {
                    Incoming::Event(Ev::ModelChanged(m)) => return Some(m.model),
                    Incoming::Event(_) => {}
                    Incoming::Lost(_) => return None,
                }
            }
        })
        .await
        .ok()
        .flatten();
        let Some(model) = confirmed else {
            anyhow::bail!("the daemon did not confirm the model change");
        };
        self.model_override = Some(name);
        self.model = model;
        self.say(&format!(
            "Model set to {} for the following turns.\n",
            self.model
        ));
        Ok(())
    }

    /// `/permissions [mode]`: shows the mode and rules, or switches the mode.
    async fn permissions(&mut self, mode: Option<String>) -> anyhow::Result<()> {
        self.ensure_link().await?;
        self.link
            .send(Out::SetPermissionMode(SetPermissionMode {
                mode: mode.clone().unwrap_or_default(),
            }))
            .await?;
        let reply = tokio::time::timeout(MODEL_REPLY_TIMEOUT, async {
            loop {
                match self.link.next().await {
                    Incoming::Event(Ev::PermissionMode(m)) => return Ok(m),
                    Incoming::Event(Ev::Error(e)) => return Err(e.message),
                    Incoming::Event(_) => {}
                    Incoming::Lost(reason) => {
                        return Err(format!("the daemon went away ({reason})"));
                    }
                }
            }
        })
        .await
        .map_err(|_| "the daemon did not answer".to_string())
        .and_then(|r| r);
        match reply {
            Ok(m) => {
                if mode.is_some() {
                    self.permission_mode = Some(m.mode.clone());
                }
                let mut out = String::new();
                if let Some(line) = super::view::permission_line(&self.theme, &m.mode) {
                    out.push_str(&line);
                }
                out.push_str(&self.theme.dim(&m.summary));
                if mode.is_none() {
                    out.push_str(
                        &self
                            .theme
                            .dim("Change it with /permissions auto|ask|read-only|yolo.\n"),
                    );
                }
                self.say(&out);
                Ok(())
            }
            Err(e) => anyhow::bail!(e),
        }
    }

    async fn compact(&mut self) -> anyhow::Result<()> {
        self.ensure_link().await?;
        self.link.send(Out::Compact(CompactContext {})).await?;
        let mut spinner = Spinner::new(self.theme);
        spinner.start("Compacting the conversation…").await;
        let outcome = loop {
            match self.link.next().await {
                Incoming::Event(Ev::Notice(n)) => break self.theme.dim(&format!("{}\n", n.text)),
                Incoming::Event(Ev::Error(e)) => {
                    break self.theme.red(&format!("error: {}\n", e.message));
                }
                Incoming::Event(_) => {}
                Incoming::Lost(reason) => {
                    break self
                        .theme
                        .yellow(&format!("The daemon went away ({reason}).\n"));
                }
            }
        };
        spinner.stop().await;
        self.usage.context_tokens = 0;
        self.say(&outcome);
        Ok(())
    }

    async fn skill_enhance(&mut self, on: Option<bool>) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let mut daemon = DaemonClient::new(self.link.channel.clone());
        let t = self.theme;
        let Some(enabled) = on else {
            let s = daemon
                .get_settings(GetSettingsRequest {})
                .await
                .map_err(|s| anyhow::anyhow!("{}", s.message()))?
                .into_inner();
            let text = if s.auto_enhance {
                "Automatic skill enhancement is on: after each turn the skill sub-agent may create or improve a skill (extra tokens per turn). /skill enhance --off turns it off.\n"
            } else {
                "Automatic skill enhancement is off. /skill enhance --on turns it on.\n"
            };
            self.say(text);
            return Ok(());
        };
        if enabled {
            self.say(&format!(
                "{} {}\n  After every turn, a skill sub-agent reviews what was done and may create\n  a new skill or improve an existing one.\n  {}\n\n  Turn it off any time with /skill enhance --off\n\n",
                t.yellow("⚠"),
                t.bold("Turning on automatic skill enhancement"),
                t.yellow("This costs extra tokens on every turn.")
            ));
        }
        let s = daemon
            .set_auto_enhance(SetAutoEnhanceRequest { enabled })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        let state = if s.auto_enhance { "on" } else { "off" };
        self.say(&format!(
            "{} Automatic skill enhancement is {state} {}\n",
            t.green("✓"),
            t.dim(&format!("(saved in {})", s.settings_path))
        ));
        Ok(())
    }
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
