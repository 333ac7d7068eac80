//! Slash commands: each asks the daemon (sessions, settings, the session's model) or prints
//! what the REPL knows (usage). `/resume` and `/clear` swap the attachment for another session.

use std::time::Duration;

use synapse_session::{Control, Event, Mode};
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::{GetSettingsRequest, SetAutoEnhanceRequest};

use super::Repl;
use super::commands::{ResumeTarget, Slash, help_text};
use super::input::Reply;
use super::spinner::Spinner;
use super::usage::UsageStats;
use crate::render::banner::session_label;
use crate::session::{Incoming, OpenOptions, Session};

/// How long `/model` waits for the daemon's confirmation.
const MODEL_REPLY_TIMEOUT: Duration = Duration::from_secs(5);

impl Repl {
    pub(super) async fn slash(&mut self, command: Slash) -> anyhow::Result<()> {
        let result = match command {
            Slash::Help => {
                let custom = self.custom_help().await;
                self.say(&format!("{}{custom}", help_text()));
                Ok(())
            }
            Slash::Exit => Ok(()),
            Slash::Clear => {
                let options = OpenOptions {
                    cleared: true,
                    ..OpenOptions::default()
                };
                self.switch_session(options, "Started").await
            }
            Slash::Resume(target) => self.resume(target).await,
            Slash::Attach(id) => self.attach_session(id).await,
            Slash::Sessions => self.list_sessions(true).await.map(|_| ()),
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
            Slash::Memory(target) => self.memory(target),
            Slash::Init => self.turn(super::memory::INIT_PROMPT.to_string()).await,
            Slash::Hooks => self.hooks().await,
            Slash::Usage(usage) => {
                self.say(&format!("Usage: {usage}\n"));
                Ok(())
            }
            Slash::Other { name, args } => self.invoke_skill(name, args).await,
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
        let link = Session::connect(&self.paths, &options).await?;
        self.link = link;
        self.model = self.link.opened().model.clone();
        self.turns = self.link.opened().turns;
        self.usage = UsageStats::default();
        let label = session_label(self.link.opened());
        self.say(&format!("{verb} session {label}.\n"));
        for warning in &self.link.opened().warnings {
            self.say(&self.theme.yellow(&format!("warning: {warning}\n")));
        }
        Ok(())
    }

    async fn resume(&mut self, target: ResumeTarget) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let current = self.link.id().to_string();
        let id = match target {
            ResumeTarget::Id(id) => id,
            ResumeTarget::Latest => {
                let sessions = self.workspace_sessions(false).await?;
                match sessions.into_iter().find(|s| s.id != current) {
                    Some(s) => s.id,
                    None => {
                        self.say("There is no other session to resume.\n");
                        return Ok(());
                    }
                }
            }
            ResumeTarget::Choose { all } => {
                let sessions = self.list_sessions(all).await?;
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

    /// `/attach [id]`: switches to a session, and when a turn of it runs, shows it live from
    /// where it is and takes part in its questions.
    async fn attach_session(&mut self, id: Option<String>) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let current = self.link.id().to_string();
        let id = match id {
            Some(id) => id,
            None => {
                crate::cli::sessions::attach_target(
                    self.link.channel().clone(),
                    &self.link.opened().cwd,
                    Some(&current),
                )
                .await?
            }
        };
        if id == current {
            self.say(&format!("Already in session {id}.\n"));
            return Ok(());
        }
        let options = OpenOptions {
            resume_id: Some(id),
            ..OpenOptions::default()
        };
        self.switch_session(options, "Attached to").await?;
        if self.link.opened().turn_running {
            self.say(
                &self
                    .theme
                    .dim("A turn of this session is running; its output follows.\n"),
            );
            self.follow_running_turn().await?;
        }
        Ok(())
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
            .control(Control::SetModel(Some(name.clone())))
            .await?;
        let confirmed = tokio::time::timeout(MODEL_REPLY_TIMEOUT, async {
            loop {
                match self.link.next().await {
                    Incoming::Event(Event::ModelChanged(model)) => return Some(model),
                    Incoming::Event(_) => {}
                    Incoming::Closed(_) => return None,
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
        let wanted = match mode.as_deref() {
            // `/permissions readonly` is taken as `read-only`.
            Some("readonly") => Some(Mode::ReadOnly),
            Some(word) => Some(Mode::parse(word).map_err(|e| anyhow::anyhow!("{e}"))?),
            None => None,
        };
        self.link.control(Control::SetMode(wanted)).await?;
        let reply = tokio::time::timeout(MODEL_REPLY_TIMEOUT, async {
            loop {
                match self.link.next().await {
                    Incoming::Event(Event::ModeChanged { mode, summary }) => {
                        return Ok((mode, summary));
                    }
                    Incoming::Event(Event::Error(message)) => return Err(message),
                    Incoming::Event(_) => {}
                    Incoming::Closed(closed) => {
                        return Err(format!("the daemon went away ({closed})"));
                    }
                }
            }
        })
        .await
        .map_err(|_| "the daemon did not answer".to_string())
        .and_then(|r| r);
        match reply {
            Ok((now, summary)) => {
                if mode.is_some() {
                    self.permission_mode = Some(now.clone());
                }
                let mut out = String::new();
                if let Some(line) = super::view::permission_line(&self.theme, &now) {
                    out.push_str(&line);
                }
                out.push_str(&self.theme.dim(&summary));
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
        self.link.control(Control::Compact).await?;
        let mut spinner = Spinner::new(self.theme);
        spinner.start("Compacting the conversation…").await;
        let outcome = loop {
            match self.link.next().await {
                Incoming::Event(Event::Notice(text)) => break self.theme.dim(&format!("{text}\n")),
                Incoming::Event(Event::Error(message)) => {
                    break self.theme.red(&format!("error: {message}\n"));
                }
                Incoming::Event(_) => {}
                Incoming::Closed(closed) => {
                    break self
                        .theme
                        .yellow(&format!("The daemon went away ({closed}).\n"));
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
        let mut daemon = DaemonClient::new(self.link.channel().clone());
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
            self.say(&crate::cli::skill_growth::enhance_on_warning(
                &t,
                "/skill enhance --off",
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
