//! `Skills` service: decodes each request, runs the skill store call on the blocking pool (it
//! does file I/O), and maps [`SkillError`] to a status. No logic lives here.

use std::path::Path;
use std::sync::Arc;

use crate::lifecycle::peer::refuse_confined;
use synapse_shared::proto::skills_server::Skills;
use synapse_shared::proto::*;
use tonic::{Request, Response, Status};

use crate::growth::SkillAgent;
use crate::skills::broken::BrokenSkill;
use crate::skills::catalog::{SEARCH_LIMIT_DEFAULT, SearchMode, render_outcome};
use crate::skills::{LoadDecision, SkillError, SkillStore, SkillSummary, ToolCatalog, files};

pub struct SkillsService {
    store: Arc<SkillStore>,
    tools: ToolCatalog,
    pub(super) growth: Arc<SkillAgent>,
}

impl SkillsService {
    pub fn new(store: Arc<SkillStore>, tools: ToolCatalog, growth: Arc<SkillAgent>) -> Self {
        Self {
            store,
            tools,
            growth,
        }
    }

    /// Runs `f` with the store on the blocking pool, after adding the caller's project roots.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        cwd: &str,
        f: impl FnOnce(&SkillStore) -> Result<T, SkillError> + Send + 'static,
    ) -> Result<T, Status> {
        let store = self.store.clone();
        let cwd = cwd.to_string();
        tokio::task::spawn_blocking(move || {
            if !cwd.is_empty() && Path::new(&cwd).is_absolute() {
                store.add_project_cwd(Path::new(&cwd));
            }
            f(&store)
        })
        .await
        .map_err(|e| Status::internal(format!("skill task failed: {e}")))?
        .map_err(Status::from)
    }
}

/// The folder whose workspace answers a skill call: the client's cwd, or (from a client that
/// sent none) no project at all.
pub(super) fn scope_of(cwd: &str) -> std::path::PathBuf {
    let cwd = Path::new(cwd);
    if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        std::path::PathBuf::from("/")
    }
}

/// The `SYNAPSE_SKILLS_DIR` folder in force, as the wire carries it ("" when unset).
pub(super) fn env_dir_text(store: &SkillStore) -> String {
    store
        .env_skills_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default()
}

pub(super) fn info(s: SkillSummary) -> SkillInfo {
    SkillInfo {
        id: s.id,
        name: s.name,
        description: s.description,
        source: s.source.as_str().to_string(),
        dir: s.dir.display().to_string(),
        skill_md: s.skill_md.display().to_string(),
        enabled: s.enabled,
        permission: s.permission.as_str().to_string(),
        commands: s.commands,
        scripts: s
            .scripts
            .into_iter()
            .map(|x| synapse_shared::proto::SkillScriptInfo {
                command: x.command,
                summary: x.summary.unwrap_or_default(),
                usage: x.usage_args.unwrap_or_default(),
                help: x.help,
            })
            .collect(),
        shadows: s.shadows,
        warnings: s.warnings,
        meta: s.kind == synapse_shared::skill::SkillKind::Meta,
        allowed_tools: s.allowed_tools,
        error: String::new(),
        shadowed_dirs: s
            .shadowed_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect(),
        user_invocable: s.user_invocable,
        argument_hint: s.argument_hint.unwrap_or_default(),
        disable_model_invocation: s.disable_model_invocation,
        // Hashing the folder is for `show` and `approve` only, not every listing.
        allowed_tools_approval: String::new(),
    }
}

/// A skill that did not load, as listed: its error and where it is; nothing to run.
fn broken_info(b: BrokenSkill) -> SkillInfo {
    SkillInfo {
        id: b.id,
        name: b.folder,
        source: b.source.as_str().to_string(),
        dir: b.dir.display().to_string(),
        skill_md: b.skill_md.display().to_string(),
        error: b.error,
        ..Default::default()
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[tonic::async_trait]
impl Skills for SkillsService {
    /// → `Versions::list` (daemon/src/growth/versions.rs), via `growth_versions`.
    async fn versions(
        &self,
        r: Request<SkillVersionsRequest>,
    ) -> Result<Response<SkillVersionsResponse>, Status> {
        self.growth_versions(r).await
    }

    /// → `SkillAgent::rollback` (daemon/src/growth/mod.rs), via `growth_rollback`.
    async fn rollback(
        &self,
        r: Request<RollbackSkillRequest>,
    ) -> Result<Response<RollbackSkillResponse>, Status> {
        self.growth_rollback(r).await
    }

    /// → `evaluate::evaluate` (daemon/src/growth/evaluate.rs), via `growth_evaluate`.
    async fn evaluate(
        &self,
        r: Request<EvaluateSkillRequest>,
    ) -> Result<Response<EvaluateSkillResponse>, Status> {
        self.growth_evaluate(r).await
    }

    /// → `enhance::enhance` (daemon/src/growth/enhance.rs), via `growth_enhance`.
    async fn enhance(
        &self,
        r: Request<EnhanceSkillRequest>,
    ) -> Result<Response<EnhanceSkillResponse>, Status> {
        self.growth_enhance(r).await
    }

    /// → `search::search` (daemon/src/growth/search.rs), via `growth_search`.
    async fn search(
        &self,
        r: Request<SearchSkillsRequest>,
    ) -> Result<Response<SearchSkillsResponse>, Status> {
        self.growth_search(r).await
    }

    /// → `SkillStore::list_in` (daemon/src/skills/scope.rs).
    async fn list(
        &self,
        r: Request<ListSkillsRequest>,
    ) -> Result<Response<ListSkillsResponse>, Status> {
        let scope = scope_of(&r.get_ref().cwd);
        let (skills, broken) = self
            .call(&r.get_ref().cwd, move |s| {
                Ok((s.list_in(&scope), s.broken_in(&scope)))
            })
            .await?;
        let mut skills: Vec<SkillInfo> = skills.into_iter().map(info).collect();
        skills.extend(broken.into_iter().map(broken_info));
        skills.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        Ok(Response::new(ListSkillsResponse {
            skills,
            skills_env_dir: env_dir_text(&self.store),
        }))
    }

    /// → `SkillStore::show_in` (daemon/src/skills/scope.rs).
    async fn show(
        &self,
        r: Request<ShowSkillRequest>,
    ) -> Result<Response<ShowSkillResponse>, Status> {
        let r = r.into_inner();
        let scope = scope_of(&r.cwd);
        let (skill, files) = self
            .call(&r.cwd, move |s| {
                let skill = match s.show_in(&r.name, &scope) {
                    Ok(skill) => {
                        let approval = (!skill.allowed_tools.is_empty())
                            .then(|| s.approvals().state(&skill.dir).label().to_string());
                        SkillInfo {
                            allowed_tools_approval: approval.unwrap_or_default(),
                            ..info(skill)
                        }
                    }
                    // A folder whose SKILL.md does not load is still found, with its error.
                    Err(e @ SkillError::NotFound { .. }) => match s.broken_named(&r.name, &scope) {
                        Some(b) => broken_info(b),
                        None => return Err(e),
                    },
                    Err(e) => return Err(e),
                };
                let (files, _) = files::bundled_files(Path::new(&skill.dir));
                Ok((skill, files))
            })
            .await?;
        Ok(Response::new(ShowSkillResponse {
            skill: Some(skill),
            files,
        }))
    }

    /// → `SkillStore::load_in` (daemon/src/skills/scope.rs).
    async fn load(
        &self,
        r: Request<LoadSkillRequest>,
    ) -> Result<Response<LoadSkillResponse>, Status> {
        let r = r.into_inner();
        let approve = r.approve;
        let scope = scope_of(&r.cwd);
        let out = self
            .call(&r.cwd, move |s| match s.load_in(&r.name, &scope)? {
                LoadDecision::Ready(text) => Ok(LoadSkillResponse {
                    text,
                    needs_approval: false,
                    id: String::new(),
                }),
                LoadDecision::NeedsApproval { id, name } if approve => Ok(LoadSkillResponse {
                    text: s.load_approved_in(&name, &scope)?,
                    needs_approval: false,
                    id,
                }),
                LoadDecision::NeedsApproval { id, .. } => Ok(LoadSkillResponse {
                    text: String::new(),
                    needs_approval: true,
                    id,
                }),
            })
            .await?;
        Ok(Response::new(out))
    }

    /// → `SkillStore::refresh_in` (daemon/src/skills/store.rs).
    async fn refresh(
        &self,
        r: Request<RefreshSkillsRequest>,
    ) -> Result<Response<RefreshSkillsResponse>, Status> {
        let scope = scope_of(&r.get_ref().cwd);
        let rep = self
            .call(&r.get_ref().cwd, move |s| Ok(s.refresh_in(&scope)))
            .await?;
        Ok(Response::new(RefreshSkillsResponse {
            skills: count(rep.skills),
            tools: count(rep.tools),
            wrappers_written: count(rep.wrappers_written),
            wrappers_removed: count(rep.wrappers_removed),
            warnings: rep.warnings,
            errors: rep.errors,
        }))
    }

    /// → `SkillStore::read_file` (daemon/src/skills/query.rs): the user-level skills only, as
    /// the request names no folder.
    async fn read_file(
        &self,
        r: Request<ReadSkillFileRequest>,
    ) -> Result<Response<ReadSkillFileResponse>, Status> {
        let r = r.into_inner();
        let (path, content) = self
            .call("", move |s| s.read_file(&r.skill, &r.path))
            .await?;
        Ok(Response::new(ReadSkillFileResponse {
            path: path.display().to_string(),
            content,
        }))
    }

    /// → `grants::approve_skill` (daemon/src/skills/grants.rs).
    async fn approve(
        &self,
        r: Request<ApproveSkillRequest>,
    ) -> Result<Response<ApproveSkillResponse>, Status> {
        refuse_confined(&r, "approving a skill's allowed-tools")?;
        let r = r.into_inner();
        let scope = scope_of(&r.cwd);
        let out = self
            .call(&r.cwd, move |s| {
                crate::skills::grants::approve_skill(s, &r.name, &scope, r.revoke).map(|o| {
                    let label = s.approvals().state(&o.skill.dir).label().to_string();
                    (o, label)
                })
            })
            .await?;
        let (o, label) = out;
        Ok(Response::new(ApproveSkillResponse {
            skill: Some(SkillInfo {
                allowed_tools_approval: label,
                ..info(o.skill)
            }),
            patterns: o.patterns,
            skipped: o.skipped,
            sha256: o.sha256,
            revoked: o.revoked,
        }))
    }

    /// → `SkillStore::create` (daemon/src/skills/manage.rs).
    async fn create(
        &self,
        r: Request<CreateSkillRequest>,
    ) -> Result<Response<CreateSkillResponse>, Status> {
        refuse_confined(&r, "creating a skill through the daemon")?;
        let r = r.into_inner();
        let skill = self
            .call("", move |s| s.create(&r.name, &r.description, &r.body))
            .await?;
        Ok(Response::new(CreateSkillResponse {
            skill: Some(info(skill)),
        }))
    }

    /// → `SkillStore::delete` (daemon/src/skills/manage.rs).
    async fn delete(
        &self,
        r: Request<DeleteSkillRequest>,
    ) -> Result<Response<DeleteSkillResponse>, Status> {
        refuse_confined(&r, "deleting a skill")?;
        let r = r.into_inner();
        let scope = (!r.cwd.is_empty()).then(|| scope_of(&r.cwd));
        let dir = self
            .call(&r.cwd.clone(), move |s| s.delete(&r.name, scope.as_deref()))
            .await?;
        Ok(Response::new(DeleteSkillResponse {
            dir: dir.display().to_string(),
        }))
    }

    /// → `SkillStore::set_enabled` (daemon/src/skills/manage.rs).
    async fn set_enabled(
        &self,
        r: Request<SetSkillEnabledRequest>,
    ) -> Result<Response<SetSkillEnabledResponse>, Status> {
        refuse_confined(&r, "enabling or disabling a skill")?;
        let r = r.into_inner();
        let skill = self
            .call(&r.cwd.clone(), move |s| {
                let scope = (!r.cwd.is_empty()).then(|| scope_of(&r.cwd));
                s.set_enabled(&r.name, r.enabled, scope.as_deref())
            })
            .await?;
        Ok(Response::new(SetSkillEnabledResponse {
            skill: Some(info(skill)),
        }))
    }

    /// → `ToolCatalog::search` (daemon/src/skills/catalog.rs).
    async fn search_tools(
        &self,
        r: Request<SearchToolsRequest>,
    ) -> Result<Response<SearchToolsResponse>, Status> {
        // From a project folder, that project's commands count too (for a sandboxed command:
        // its own shell's project, wherever it `cd`-ed to).
        let claimed = (!r.get_ref().cwd.is_empty()).then(|| {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            crate::workspace::project_root(std::path::Path::new(&r.get_ref().cwd), home.as_deref())
        });
        let workspace = crate::lifecycle::peer::workspace_for(&r, claimed, false)?;
        let session = crate::lifecycle::peer::session_for(&r, &r.get_ref().session)?;
        let r = r.into_inner();
        if r.query.trim().is_empty() {
            return Err(Status::invalid_argument(
                "tools search needs a query: keywords or a regex such as \"skill:.*\"",
            ));
        }
        let limit = if r.limit == 0 {
            SEARCH_LIMIT_DEFAULT
        } else {
            r.limit as usize
        };
        let tools = self.tools.clone();
        let (o, text) = tokio::task::spawn_blocking(move || {
            let scope = crate::skills::ToolScope {
                workspace: workspace.as_deref(),
                session: session.as_deref(),
            };
            let o = tools.search_in(scope, &r.query, limit);
            let text = render_outcome(&r.query, &o);
            (o, text)
        })
        .await
        .map_err(|e| Status::internal(format!("search task failed: {e}")))?;
        Ok(Response::new(SearchToolsResponse {
            total: count(o.total),
            mode: match o.mode {
                SearchMode::Keyword => "keyword",
                SearchMode::Regex => "regex",
            }
            .to_string(),
            hits: o
                .hits
                .into_iter()
                .map(|h| ToolHit {
                    command: h.command,
                    description: h.description,
                })
                .collect(),
            text,
        }))
    }
}
