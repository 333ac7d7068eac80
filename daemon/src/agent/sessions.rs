//! The daemon's chat sessions: opening new ones, resuming one from its file (by id or the most
//! recent), keeping live ones in memory so clients can reattach, and listing what is on disk.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::session::{ChatSession, SessionDeps, SessionEvent, is_user_prompt, resolve_config};
use super::session_log::{
    self, Record, SessionHeader, SessionLog, SessionLogError, is_valid_session_id, new_session_id,
    session_path,
};
use synapse_llm::Message;

/// How often a releasing session checks that its cancelled turn has stopped.
const RELEASE_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Characters of the first user message used as a session's title.
const TITLE_CHARS: usize = 80;

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("{0:?} is not a session id")]
    BadId(String),
    #[error("no session {0}; `synapse sessions list` shows the ones on disk")]
    NotFound(String),
    #[error("there is no earlier session to continue")]
    NoSessions,
    #[error("working directory {0} does not exist")]
    BadCwd(PathBuf),
    #[error("--session-id {0:?}: invalid session ID, it must be a valid UUID")]
    NotUuid(String),
    #[error("--session-id {0}: session ID {0} is already in use; `--resume {0}` continues it")]
    IdInUse(String),
    #[error(transparent)]
    Log(#[from] SessionLogError),
}

/// Which conversation to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    New,
    Id(String),
    Latest,
}

pub struct OpenRequest {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    pub model: Option<String>,
    pub resume: Resume,
    /// The id a new session must have (`--session-id`); `None` generates one.
    pub id: Option<String>,
    /// The session's own MCP servers (`--mcp-config`, an editor's servers).
    pub own_mcp: OwnMcpServers,
}

/// The MCP servers a client opens a session with, for that session alone: each as (name, its
/// entry's JSON text in Claude Code's `.mcp.json` shape); `strict` (`--strict-mcp-config`): the
/// session sees only them. Started again whenever the session is loaded with them (a resume).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OwnMcpServers {
    pub servers: Vec<(String, String)>,
    pub strict: bool,
}

/// What [`ChatSessions::reload_for_servers`] decided for a live session.
enum Reload {
    /// Reattached as it is, with what the client is told.
    Keep(Vec<String>),
    /// Unloaded, to load again from its file.
    Unloaded,
}

/// The result of opening: the session and what happened while restoring it.
pub struct Opened {
    pub session: Arc<ChatSession>,
    pub resumed: bool,
    pub warnings: Vec<String>,
    /// What building the session's dependencies had to say (its own MCP servers).
    pub notices: Vec<String>,
}

/// A session file summarised for lists.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub cwd: String,
    pub model: String,
    pub created: String,
    pub updated: String,
    pub messages: u32,
}

/// A loaded session as `sessions list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveView {
    pub state: super::room::RoomState,
    pub front_ends: u32,
    pub detached: bool,
}

/// Builds the dependencies of a new session (settings, prompt, shell) when it opens.
/// Builds a session's dependencies from its folder, id, the opening client's environment
/// (which also binds the session to its workspace) and the MCP servers of its own.
pub type DepsFactory =
    Arc<dyn Fn(&Path, &str, &HashMap<String, String>, &OwnMcpServers) -> SessionDeps + Send + Sync>;

pub struct ChatSessions {
    dir: PathBuf,
    deps: DepsFactory,
    live: Mutex<HashMap<String, Arc<ChatSession>>>,
    /// Where the shells of released sessions were, so resuming one continues there.
    released_cwds: Mutex<std::collections::VecDeque<(String, PathBuf)>>,
}

/// Released sessions whose shell folder is remembered (the oldest is forgotten first).
const RELEASED_CWDS: usize = 1024;

impl ChatSessions {
    pub fn new(dir: PathBuf, deps: DepsFactory) -> Self {
        Self {
            dir,
            deps,
            live: Mutex::new(HashMap::new()),
            released_cwds: Mutex::new(std::collections::VecDeque::new()),
        }
    }

    pub fn live_count(&self) -> usize {
        self.live.lock().len()
    }

    pub fn is_live(&self, id: &str) -> bool {
        self.live.lock().contains_key(id)
    }

    /// Where the live session `id` is now (`None`: not loaded).
    pub fn live_view(&self, id: &str) -> Option<LiveView> {
        let session = self.live.lock().get(id).cloned()?;
        Some(LiveView {
            state: session.state(),
            front_ends: u32::try_from(session.client_count()).unwrap_or(u32::MAX),
            detached: session.is_detached(),
        })
    }

    /// Sends `event` to the clients of the live session `id` (nothing when it is not live).
    pub fn publish(&self, id: &str, event: SessionEvent) {
        let session = self.live.lock().get(id).cloned();
        if let Some(session) = session {
            session.publish(event);
        }
    }

    /// Opens a new session or resumes one (a live one is reattached as it is).
    pub fn open(&self, req: OpenRequest) -> Result<Opened, ChatError> {
        let id = match &req.resume {
            Resume::New => None,
            Resume::Id(id) => Some(id.clone()),
            // The newest session someone wrote in (a REPL opened and left at once has nothing
            // to continue).
            Resume::Latest => Some(
                self.newest_first()?
                    .into_iter()
                    .filter_map(|(mtime, p)| summarize(&p, mtime))
                    .find(|s| !s.title.is_empty())
                    .ok_or(ChatError::NoSessions)?
                    .id,
            ),
        };
        let Some(id) = id else {
            return self.create(req);
        };
        if !is_valid_session_id(&id) {
            return Err(ChatError::BadId(id));
        }
        let live = self.live.lock().get(&id).cloned();
        if let Some(live) = live {
            match self.reload_for_servers(&live, &req.own_mcp) {
                Reload::Keep(warnings) => {
                    if req.model.is_some() {
                        live.set_model(req.model);
                    }
                    return Ok(Opened {
                        session: live,
                        resumed: true,
                        warnings,
                        notices: Vec::new(),
                    });
                }
                // Unloaded: loaded again below from its file, with the servers it is given now.
                Reload::Unloaded => {}
            }
        }
        let path = session_path(&self.dir, &id);
        if !path.is_file() {
            return Err(ChatError::NotFound(id));
        }
        let replay = session_log::replay(&path)?;
        let mut warnings = replay.warnings;
        let saved_prompt = replay
            .records
            .iter()
            .rev()
            .find(|r| r.kind == "prompt")
            .map(|r| r.data.clone());
        let history: Vec<Message> = replay
            .records
            .into_iter()
            .filter(|r| r.kind == "message")
            .filter_map(|r| match serde_json::from_value::<Message>(r.data) {
                Ok(m) => Some(m),
                Err(e) => {
                    warnings.push(format!(
                        "{}: skipped a message that does not parse: {e}",
                        path.display()
                    ));
                    None
                }
            })
            .collect();
        let unanswered = super::history::unanswered_count(&history);
        if unanswered > 0 {
            warnings.push(format!(
                "{unanswered} command(s) were interrupted before they finished; the model is told so"
            ));
        }
        // Resume where its shell was when it was released, else in the session's own folder
        // when it still exists, else where the client is.
        let cwd = self
            .take_released_cwd(&id)
            .or(Some(PathBuf::from(&replay.header.cwd)))
            .filter(|p| p.is_dir())
            .unwrap_or(req.cwd);
        let log = SessionLog::open(&path)?;
        // The model in the file is what the session last used; resuming follows the settings
        // (and key, and provider) in force now unless the client names a model.
        let model = req.model;
        let mut deps = (self.deps)(&cwd, &id, &req.env, &req.own_mcp);
        let notices = std::mem::take(&mut deps.open_notices);
        let session = Arc::new(ChatSession::new(
            id.clone(),
            cwd,
            req.env,
            model,
            history,
            log,
            deps,
        ));
        if let Some(saved) = saved_prompt {
            session.restore_prompt(saved);
        }
        {
            let mut live = self.live.lock();
            live.insert(id, session.clone());
        }
        Ok(Opened {
            session,
            resumed: true,
            warnings,
            notices,
        })
    }

    fn create(&self, req: OpenRequest) -> Result<Opened, ChatError> {
        if !req.cwd.is_dir() {
            return Err(ChatError::BadCwd(req.cwd));
        }
        let id = match req.id.clone() {
            None => new_session_id(),
            Some(id) if !synapse_shared::uuid_text::is_uuid(&id) => {
                return Err(ChatError::NotUuid(id));
            }
            Some(id) => {
                let taken =
                    self.live.lock().contains_key(&id) || session_path(&self.dir, &id).exists();
                if taken {
                    return Err(ChatError::IdInUse(id));
                }
                id
            }
        };
        let mut deps = (self.deps)(&req.cwd, &id, &req.env, &req.own_mcp);
        let notices = std::mem::take(&mut deps.open_notices);
        let model = resolve_config(&(deps.settings)(), &req.env, req.model.as_deref())
            .map(|c| c.model)
            .unwrap_or_else(|_| req.model.clone().unwrap_or_default());
        let session = Arc::new(ChatSession::new(
            id.clone(),
            req.cwd.clone(),
            req.env,
            req.model,
            Vec::new(),
            SessionLog::create(
                &self.dir,
                &SessionHeader::new(id.clone(), req.cwd.display().to_string(), model),
            )?,
            deps,
        ));
        {
            let mut live = self.live.lock();
            live.insert(id, session.clone());
        }
        Ok(Opened {
            session,
            resumed: false,
            warnings: Vec::new(),
            notices,
        })
    }

    /// Session files, most recently updated first (`limit` 0 = all).
    pub fn list(&self, limit: usize) -> Result<Vec<SessionSummary>, ChatError> {
        let mut files = self.newest_first()?;
        if limit > 0 {
            files.truncate(limit);
        }
        Ok(files
            .into_iter()
            .filter_map(|(mtime, p)| summarize(&p, mtime))
            .collect())
    }

    /// The session files, most recently changed first.
    fn newest_first(&self) -> Result<Vec<(std::time::SystemTime, PathBuf)>, ChatError> {
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&self.dir)
            .map_err(|source| SessionLogError::Read {
                path: self.dir.clone(),
                source,
            })?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        Ok(files)
    }

    /// One session's summary and messages.
    pub fn get(&self, id: &str) -> Result<(SessionSummary, Vec<Message>), ChatError> {
        if !is_valid_session_id(id) {
            return Err(ChatError::BadId(id.to_string()));
        }
        let path = session_path(&self.dir, id);
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|_| ChatError::NotFound(id.to_string()))?;
        let summary = summarize(&path, mtime).ok_or_else(|| ChatError::NotFound(id.to_string()))?;
        let messages = restore_history(&path, session_log::replay(&path)?.records, &mut Vec::new());
        Ok((summary, messages))
    }

    /// Whether resuming the live session `live` with `own` (`--mcp-config` of this resume)
    /// keeps it as it is or unloads it to load it again with those servers — as a new
    /// `claude --resume … --mcp-config` process would have them. A session some front end still
    /// uses or whose turn runs keeps its servers, and the resuming client is told why.
    fn reload_for_servers(&self, live: &Arc<ChatSession>, own: &OwnMcpServers) -> Reload {
        let brings_servers = !own.servers.is_empty() || own.strict;
        if !brings_servers || live.own_mcp() == own {
            return Reload::Keep(Vec::new());
        }
        if !live.is_idle_for(std::time::Duration::ZERO) {
            return Reload::Keep(vec![format!(
                "session {} is in use by another front end, so it keeps the MCP servers it has;                  --mcp-config applies when it is loaded again (after that front end leaves)",
                live.id
            )]);
        }
        let mut map = self.live.lock();
        if map.get(&live.id).is_some_and(|s| Arc::ptr_eq(s, live)) {
            map.remove(&live.id);
        }
        Reload::Unloaded
    }

    /// Unloads sessions nobody uses (no turn, no client, idle for `idle`); their files stay and
    /// they can be resumed. Returns their ids.
    pub fn unload_idle(&self, idle: std::time::Duration) -> Vec<String> {
        let mut live = self.live.lock();
        let ids: Vec<String> = live
            .iter()
            .filter(|(_, s)| s.is_idle_for(idle))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            live.remove(id);
        }
        ids
    }

    /// Unloads a non-interactive session whose client has gone (`synapse run` finished): its
    /// turn is cancelled if still running, and once it stops the session leaves memory, so its
    /// log file closes; the file stays resumable. False when the turn did not stop within
    /// `grace` (the idle reaper unloads it later).
    pub async fn release_finished(
        &self,
        session: &Arc<ChatSession>,
        grace: std::time::Duration,
    ) -> bool {
        session.cancel();
        let deadline = tokio::time::Instant::now() + grace;
        while session.is_running() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(RELEASE_POLL).await;
        }
        let mut live = self.live.lock();
        if live
            .get(&session.id)
            .is_some_and(|s| Arc::ptr_eq(s, session))
        {
            live.remove(&session.id);
        }
        true
    }

    /// Remembers where a released session's shell was (`cd` persists across `--continue`).
    pub fn remember_cwd(&self, id: &str, cwd: PathBuf) {
        {
            let mut cwds = self.released_cwds.lock();
            cwds.retain(|(i, _)| i != id);
            if cwds.len() >= RELEASED_CWDS {
                cwds.pop_front();
            }
            cwds.push_back((id.to_string(), cwd));
        }
    }

    fn take_released_cwd(&self, id: &str) -> Option<PathBuf> {
        let mut cwds = self.released_cwds.lock();
        let at = cwds.iter().position(|(i, _)| i == id)?;
        cwds.remove(at).map(|(_, cwd)| cwd)
    }

    /// Cancels every running turn (daemon shutdown).
    pub fn cancel_all(&self) {
        {
            let live = self.live.lock();
            for s in live.values() {
                s.cancel();
            }
        }
    }
}

/// The conversation a session file describes: messages in order, where a compaction record
/// replaces everything before it.
fn restore_history(path: &Path, records: Vec<Record>, warnings: &mut Vec<String>) -> Vec<Message> {
    let mut history = Vec::new();
    for record in records {
        match record.kind.as_str() {
            "message" => match serde_json::from_value::<Message>(record.data) {
                Ok(m) => history.push(m),
                Err(e) => warnings.push(format!(
                    "{}: skipped a message that does not parse: {e}",
                    path.display()
                )),
            },
            "compaction" => {
                match serde_json::from_value::<Vec<Message>>(record.data["messages"].clone()) {
                    Ok(messages) => history = messages,
                    Err(e) => warnings.push(format!(
                        "{}: skipped a compaction record that does not parse: {e}",
                        path.display()
                    )),
                }
            }
            _ => {}
        }
    }
    history
}

fn summarize(path: &Path, mtime: std::time::SystemTime) -> Option<SessionSummary> {
    let replay = session_log::replay(path).ok()?;
    let messages = restore_history(path, replay.records.clone(), &mut Vec::new());
    let title = messages
        .iter()
        .find(|m| is_user_prompt(m))
        .map(crate::agent::turn_prompt::typed_text)
        .unwrap_or_default();
    let title: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = if title.chars().count() > TITLE_CHARS {
        format!(
            "{}…",
            title.chars().take(TITLE_CHARS - 1).collect::<String>()
        )
    } else {
        title
    };
    let updated: chrono::DateTime<chrono::Utc> = mtime.into();
    Some(SessionSummary {
        id: replay.header.id,
        title,
        cwd: replay.header.cwd,
        model: replay.header.model,
        created: replay.header.created,
        updated: updated.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        messages: messages.len() as u32,
    })
}
