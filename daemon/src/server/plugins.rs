//! `Plugins` service: Claude Code's plugins on its own records (→ `crate::plugins`). A change
//! is followed by a skills refresh and an MCP refresh, so an install counts without a restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use synapse_shared::claude_plugins;
use synapse_shared::proto::plugins_server::Plugins;
use synapse_shared::proto::{
    PluginAction, PluginChangeRequest, PluginChangeResponse, PluginInfo, PluginListRequest,
    PluginListResponse,
};
use tonic::{Request, Response, Status};

use crate::plugins::project::TrustedProjectPlugins;
use crate::plugins::records::Records;
use crate::plugins::{PluginError, manage, offers};
use crate::state::DaemonState;
use synapse_shared::claude_plugins::ProjectPluginSettings;

pub struct PluginsService {
    state: Arc<DaemonState>,
}

impl PluginsService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }
}

fn records() -> Records {
    Records {
        home: std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| "/".into()),
    }
}

fn status(e: PluginError) -> Status {
    match e {
        PluginError::Usage(m) => Status::invalid_argument(m),
        PluginError::NotFound(m) => Status::not_found(m),
        other => Status::failed_precondition(other.to_string()),
    }
}

#[tonic::async_trait]
impl Plugins for PluginsService {
    /// → `claude_plugins::scan` (shared/src/claude_plugins.rs) and `plugins::offers`.
    async fn list(
        &self,
        request: Request<PluginListRequest>,
    ) -> Result<Response<PluginListResponse>, Status> {
        let records = records();
        let cwd = PathBuf::from(request.into_inner().cwd);
        let synapse_home = self.state.paths.home().to_path_buf();
        let out = tokio::task::spawn_blocking(move || {
            // The project the caller is in, if its trusted settings turn plugins on or off.
            let layers = cwd.is_absolute().then(|| {
                let root = crate::workspace::project_root(&cwd, Some(&records.home));
                TrustedProjectPlugins::new(&synapse_home).layers(&root)
            });
            let scan = claude_plugins::scan_layered(&records.home, layers.flatten().as_ref());
            let marketplaces = records
                .read(&records.marketplaces())
                .map(|m| {
                    m.iter()
                        .map(|(name, v)| {
                            let at = v
                                .get("installLocation")
                                .and_then(serde_json::Value::as_str)
                                .unwrap_or("?");
                            format!("{name} ({at})")
                        })
                        .collect()
                })
                .unwrap_or_default();
            let plugins = scan
                .plugins
                .iter()
                .map(|p| {
                    let o = offers::of(p);
                    PluginInfo {
                        name: p.name.clone(),
                        marketplace: p.marketplace.clone(),
                        version: p.version.clone(),
                        enabled: p.enabled,
                        root: p.root.display().to_string(),
                        commands: o.commands,
                        agents: o.agents,
                        skills: o.skills,
                        hooks: o.hooks,
                        mcp_servers: o.mcp_servers,
                        problems: o.problems,
                    }
                })
                .collect();
            PluginListResponse {
                plugins,
                problems: scan.problems,
                marketplaces,
            }
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        Ok(Response::new(out))
    }

    /// → `plugins::manage` (daemon/src/plugins/manage.rs).
    async fn change(
        &self,
        request: Request<PluginChangeRequest>,
    ) -> Result<Response<PluginChangeResponse>, Status> {
        // A change decides what runs in every later session: never from a sandboxed command.
        crate::lifecycle::peer::refuse_confined(&request, "changing Claude Code plugins")?;
        let r = request.into_inner();
        if !Path::new(&r.cwd).is_absolute() {
            return Err(Status::invalid_argument(
                "cwd must be the caller's absolute working directory",
            ));
        }
        let action = PluginAction::try_from(r.action).unwrap_or(PluginAction::Unspecified);
        let records = records();
        let message = tokio::task::spawn_blocking(move || match action {
            PluginAction::Install => manage::install(&records, &r.target),
            PluginAction::Enable => manage::set_enabled(&records, &r.target, true),
            PluginAction::Disable => manage::set_enabled(&records, &r.target, false),
            PluginAction::Update => manage::update(&records, &r.target),
            PluginAction::MarketplaceAdd => {
                manage::add_marketplace(&records, &r.target, Path::new(&r.cwd))
            }
            PluginAction::Unspecified => Err(PluginError::Usage(
                "no plugin action given (install, enable, disable, update, marketplace add)".into(),
            )),
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(status)?;
        // What the plugins bring counts from now on: skills and MCP servers are read again
        // (commands, agents and hooks are read when they are used).
        let skills = self.state.skills.clone();
        let _ = tokio::task::spawn_blocking(move || skills.refresh()).await;
        self.state.mcp.user().refresh().await;
        Ok(Response::new(PluginChangeResponse { message }))
    }
}
