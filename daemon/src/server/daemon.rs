//! `Daemon` service: status, shutdown, and the few settings a client may show or change
//! (written to settings.json atomically, then swapped into the live state).

use std::sync::Arc;

use crate::lifecycle::peer::refuse_confined;
use synapse_shared::proto::daemon_server::Daemon;
use synapse_shared::proto::{
    DoctorRequest, DoctorResponse, GetSettingsRequest, HookInfo, ListHooksRequest,
    ListHooksResponse, SetAutoEnhanceRequest, SetModelSettingsRequest, SettingsResponse,
    ShutdownRequest, ShutdownResponse, StatusRequest, StatusResponse, TrustRequest, TrustResponse,
    TrustReview, TrustReviewItem, WorkspaceStatus,
};
use synapse_shared::settings::{self, Settings};
use tonic::{Request, Response, Status};

use crate::state::DaemonState;

pub struct DaemonService {
    state: Arc<DaemonState>,
}

impl DaemonService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }

    fn settings_response(&self, s: &Settings) -> SettingsResponse {
        SettingsResponse {
            auto_enhance: s.skill_enhance.auto_enhance,
            max_enhance_context_chars: s.skill_enhance.max_enhance_context_chars as u64,
            settings_path: self.state.paths.settings_file().display().to_string(),
        }
    }
}

#[tonic::async_trait]
impl Daemon for DaemonService {
    /// → `Hooks::for_folder` (daemon/src/hooks/mod.rs).
    async fn list_hooks(
        &self,
        request: Request<ListHooksRequest>,
    ) -> Result<Response<ListHooksResponse>, Status> {
        let cwd = std::path::PathBuf::from(request.into_inner().cwd);
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let set = self.state.hooks.for_folder(&cwd, home.as_deref());
        let mut hooks: Vec<HookInfo> = set
            .entries
            .iter()
            .map(|h| HookInfo {
                event: h.event.name().to_string(),
                matcher: h.matcher.as_str().to_string(),
                command: h.command.clone(),
                source: h.origin.file.display().to_string(),
                timeout_sec: h.timeout.as_secs() as u32,
            })
            .collect();
        let order = |e: &str| crate::hooks::HookEvent::from_name(e);
        hooks.sort_by_key(|h| order(&h.event));
        let mut problems = set.problems.clone();
        problems.extend(self.state.hooks.held_in(&cwd, home.as_deref()));
        Ok(Response::new(ListHooksResponse { hooks, problems }))
    }

    /// → `doctor::run` (daemon/src/doctor.rs).
    async fn doctor(
        &self,
        request: Request<DoctorRequest>,
    ) -> Result<Response<DoctorResponse>, Status> {
        use crate::doctor::{self, Verdict};
        use synapse_shared::proto::{DoctorCheck, DoctorVerdict};
        let r = request.into_inner();
        let asked = doctor::DoctorRequest {
            cwd: std::path::PathBuf::from(&r.cwd),
            env: r.env,
            skip_model: r.skip_model,
        };
        let checks = doctor::run(&self.state, &asked)
            .await
            .into_iter()
            .map(|c| DoctorCheck {
                topic: c.topic.to_string(),
                verdict: match c.verdict {
                    Verdict::Ok => DoctorVerdict::Ok,
                    Verdict::Warn => DoctorVerdict::Warn,
                    Verdict::Fail => DoctorVerdict::Fail,
                } as i32,
                summary: c.summary,
                fix: c.fix,
            })
            .collect();
        Ok(Response::new(DoctorResponse { checks }))
    }

    /// → `trust_list::change` (daemon/src/agent/gate/trust_list.rs).
    async fn trust(
        &self,
        request: Request<TrustRequest>,
    ) -> Result<Response<TrustResponse>, Status> {
        use crate::agent::gate::trust_list::{self, TrustChange, TrustContext};
        if !request.get_ref().list {
            // A review too: it is the first half of trusting, and names what an accept takes.
            refuse_confined(&request, "changing the trusted folders")?;
        }
        let r = request.into_inner();
        let folder = std::path::PathBuf::from(&r.folder);
        let change = match (r.list, r.remove, r.review) {
            (true, _, _) => TrustChange::List,
            _ if !folder.is_absolute() => {
                return Err(Status::invalid_argument(format!(
                    "{} is not an absolute path",
                    folder.display()
                )));
            }
            (false, true, _) => TrustChange::Remove(folder.clone()),
            (false, false, true) => TrustChange::Review(folder.clone()),
            (false, false, false) => TrustChange::Add {
                folder: folder.clone(),
                digest: (!r.accept_digest.is_empty()).then_some(r.accept_digest),
            },
        };
        let file = self.state.paths.trust_file();
        let hooks = self.state.hooks.clone();
        let home = hooks.home().to_path_buf();
        // Reads every file the trust pins: off the runtime.
        let outcome = tokio::task::spawn_blocking(move || {
            let review_hooks = |root: &std::path::Path| hooks.review_entries(root);
            let ctx = TrustContext {
                file: &file,
                home: Some(&home),
                hooks: &review_hooks,
            };
            trust_list::change(&ctx, change).map(|o| {
                let trusted = trust_list::is_trusted(&file, &folder);
                (o, trusted)
            })
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        let (outcome, trusted) = outcome.map_err(|e| Status::failed_precondition(e.to_string()))?;
        Ok(Response::new(TrustResponse {
            changed: outcome.changed,
            folders: outcome
                .folders
                .iter()
                .map(|f| f.display().to_string())
                .collect(),
            review: outcome.review.map(|rv| TrustReview {
                digest: rv.digest.clone(),
                trusted,
                items: rv
                    .items
                    .iter()
                    .map(|i| TrustReviewItem {
                        kind: i.kind.as_str().to_string(),
                        path: i.path.display().to_string(),
                        new: i.new,
                        about: i.about.clone(),
                        detail: i.detail.clone(),
                    })
                    .collect(),
                warnings: rv.warnings.clone(),
            }),
        }))
    }

    /// → the counters of `DaemonState` (daemon/src/state.rs), e.g. `SkillStore::counts`.
    async fn status(
        &self,
        request: Request<StatusRequest>,
    ) -> Result<Response<StatusResponse>, Status> {
        let s = &self.state;
        let (skills, _) = s.skills.counts();
        // A command in a sandboxed agent shell sees its own session's project and no other
        // (none when that can't be established).
        let own_only = crate::lifecycle::peer::from_confined_client(&request).then(|| {
            crate::lifecycle::peer::workspace_for(&request, None, false)
                .ok()
                .flatten()
        });
        Ok(Response::new(StatusResponse {
            version: synapse_shared::VERSION.to_string(),
            pid: std::process::id(),
            uptime_ms: u64::try_from(s.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            socket_path: s.paths.socket().display().to_string(),
            home: s.paths.home().display().to_string(),
            log_dir: s.paths.logs_dir().display().to_string(),
            sessions: s.chats.live_count() as u32,
            settings_error: s.settings_error().unwrap_or_default(),
            skills: u32::try_from(skills).unwrap_or(u32::MAX),
            skills_env_dir: super::skills::env_dir_text(&s.skills),
            tools: u32::try_from(s.tools.count()).unwrap_or(u32::MAX),
            background_jobs: u32::try_from(s.shell.running_jobs()).unwrap_or(u32::MAX),
            workspaces: s
                .workspaces
                .list()
                .into_iter()
                .filter(|w| {
                    own_only
                        .as_ref()
                        .is_none_or(|own| own.as_ref() == Some(&w.root))
                })
                .map(|w| {
                    let (servers, ready) = s.mcp.project_server_counts(&w.root);
                    WorkspaceStatus {
                        root: w.root.display().to_string(),
                        sessions: u32::try_from(w.sessions).unwrap_or(u32::MAX),
                        servers: u32::try_from(servers).unwrap_or(u32::MAX),
                        servers_ready: u32::try_from(ready).unwrap_or(u32::MAX),
                        stops_in_secs: w.stops_in.map_or(0, |d| d.as_secs()),
                    }
                })
                .collect(),
        }))
    }

    /// → cancels `DaemonState::shutdown` (daemon/src/state.rs); `serve` then stops.
    async fn shutdown(
        &self,
        request: Request<ShutdownRequest>,
    ) -> Result<Response<ShutdownResponse>, Status> {
        refuse_confined(&request, "stopping the daemon")?;
        tracing::info!("Shutdown requested by a client");
        self.state.shutdown.cancel();
        Ok(Response::new(ShutdownResponse {}))
    }

    /// → `SettingsHandle::current` (daemon/src/workspace/settings.rs).
    async fn get_settings(
        &self,
        _: Request<GetSettingsRequest>,
    ) -> Result<Response<SettingsResponse>, Status> {
        Ok(Response::new(
            self.settings_response(&self.state.settings()),
        ))
    }

    /// → `SettingsHandle::update` (daemon/src/workspace/settings.rs).
    async fn set_auto_enhance(
        &self,
        request: Request<SetAutoEnhanceRequest>,
    ) -> Result<Response<SettingsResponse>, Status> {
        refuse_confined(&request, "changing settings")?;
        let enabled = request.into_inner().enabled;
        let handle = self.state.settings_handle.clone();
        let written = tokio::task::spawn_blocking(move || {
            handle.update(|tree| {
                settings::set_key(
                    tree,
                    &["skillEnhance", "autoEnhance"],
                    serde_json::Value::Bool(enabled),
                );
            })
        })
        .await
        .map_err(|e| Status::internal(format!("settings writer failed: {e}")))?
        // A corrupt settings.json is reported and left alone, never reset.
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
        tracing::info!(enabled, "skillEnhance.autoEnhance changed");
        Ok(Response::new(self.settings_response(&written)))
    }

    /// → `SettingsHandle::update` (daemon/src/workspace/settings.rs).
    async fn set_model_settings(
        &self,
        request: Request<SetModelSettingsRequest>,
    ) -> Result<Response<SettingsResponse>, Status> {
        refuse_confined(&request, "changing settings")?;
        let r = request.into_inner();
        let Some(kind) = synapse_llm::config::ProviderKind::ALL
            .into_iter()
            .find(|k| k.as_str() == r.provider)
        else {
            return Err(Status::invalid_argument(format!(
                "unknown provider {:?}: use \"anthropic\" or \"openai\"",
                r.provider
            )));
        };
        let (key_var, url_var) = (kind.key_variable(), kind.base_url_variable());
        if r.model.trim().is_empty() {
            return Err(Status::invalid_argument("the model name is empty"));
        }
        let handle = self.state.settings_handle.clone();
        let written = tokio::task::spawn_blocking(move || {
            handle.update(|tree| {
                let text = |v: &str| serde_json::Value::String(v.trim().to_string());
                settings::set_key(tree, &["provider"], text(&r.provider));
                settings::set_key(tree, &["model"], text(&r.model));
                if !r.api_key.trim().is_empty() {
                    settings::set_key(tree, &["env", key_var], text(&r.api_key));
                }
                if !r.base_url.trim().is_empty() {
                    settings::set_key(tree, &["env", url_var], text(&r.base_url));
                }
            })
        })
        .await
        .map_err(|e| Status::internal(format!("settings writer failed: {e}")))?
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
        tracing::info!("model settings changed by the first-run setup");
        Ok(Response::new(self.settings_response(&written)))
    }
}
