//! The self-growth calls of the `Skills` service (versions, rollback, evaluate, enhance and
//! search through the skill sub-agent), split from [`super::skills`] for size. Calls from the
//! CLI run a one-off sub-agent; its work runs to its end even when the client goes away.

use std::future::Future;

use synapse_shared::proto::*;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

use super::skills::{SkillsService, info};
use crate::growth::{Caller, enhance, evaluate, search};
use crate::lifecycle::peer::{from_confined_client, refuse_confined};

/// Skills shown by `Search` when no limit is given.
const SKILL_SEARCH_LIMIT_DEFAULT: usize = 20;

/// A CLI call to the skill sub-agent: one-off (no chat session's memory).
fn one_off(cwd: String, env: std::collections::HashMap<String, String>) -> Caller {
    Caller {
        cwd: cwd.into(),
        env,
        session: None,
    }
}

/// Runs sub-agent work to its end even when the client goes away: dropping the call cancels
/// the work, which then winds down (closing its shell, saving versions) instead of stopping
/// mid-way.
async fn to_the_end<T, F>(work: impl FnOnce(CancellationToken) -> F) -> Result<T, Status>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let cancel = CancellationToken::new();
    let _cancel_on_drop = cancel.clone().drop_guard();
    synapse_command::tasks::spawn(work(cancel))
        .await
        .map_err(|e| Status::internal(format!("skill sub-agent task failed: {e}")))?
        .ok_or_else(|| Status::unavailable("the daemon is stopping"))
}

impl SkillsService {
    /// `Skills.Versions` → `Versions::list` (daemon/src/growth/versions.rs).
    pub(super) async fn growth_versions(
        &self,
        r: Request<SkillVersionsRequest>,
    ) -> Result<Response<SkillVersionsResponse>, Status> {
        let name = r.into_inner().name;
        self.growth.user_skill_dir(&name).map_err(Status::from)?;
        let versions = self
            .growth
            .versions
            .list(&name)
            .into_iter()
            .map(|v| SkillVersion {
                number: v.number,
                saved_at: v.saved_at,
                reason: v.reason,
            })
            .collect();
        Ok(Response::new(SkillVersionsResponse { versions }))
    }

    /// `Skills.Rollback` → `SkillAgent::rollback` (daemon/src/growth/mod.rs).
    pub(super) async fn growth_rollback(
        &self,
        r: Request<RollbackSkillRequest>,
    ) -> Result<Response<RollbackSkillResponse>, Status> {
        refuse_confined(&r, "rolling a skill back")?;
        let r = r.into_inner();
        let version = (r.version != 0).then_some(r.version);
        let (restored, dir) = self
            .growth
            .rollback(&r.name, version)
            .await
            .map_err(Status::from)?;
        Ok(Response::new(RollbackSkillResponse {
            restored,
            dir: dir.display().to_string(),
        }))
    }

    /// `Skills.Evaluate` → `evaluate::evaluate` (daemon/src/growth/evaluate.rs).
    pub(super) async fn growth_evaluate(
        &self,
        r: Request<EvaluateSkillRequest>,
    ) -> Result<Response<EvaluateSkillResponse>, Status> {
        // The review runs the skill sub-agent, whose commands are not sandboxed.
        refuse_confined(&r, "evaluating a skill")?;
        let r = r.into_inner();
        let growth = self.growth.clone();
        let caller = one_off(r.cwd, r.env);
        let report = to_the_end(move |cancel| async move {
            evaluate::evaluate(&growth, &r.name, &caller, &cancel).await
        })
        .await?
        .map_err(Status::from)?;
        Ok(Response::new(EvaluateSkillResponse {
            text: report.render_text(),
            json: serde_json::to_string(&report).unwrap_or_default(),
        }))
    }

    /// `Skills.Enhance` → `enhance::enhance` (daemon/src/growth/enhance.rs).
    pub(super) async fn growth_enhance(
        &self,
        r: Request<EnhanceSkillRequest>,
    ) -> Result<Response<EnhanceSkillResponse>, Status> {
        refuse_confined(&r, "running the skill enhancer")?;
        let r = r.into_inner();
        if r.prompt.trim().is_empty() {
            return Err(Status::invalid_argument(
                "say what to learn: synapse skill enhance \"<what to learn>\" [--from-session ID]",
            ));
        }
        let conversation = match r.from_session.trim() {
            "" => None,
            id => Some(
                self.growth
                    .conversation_tail(id)
                    .await
                    .map_err(Status::from)?,
            ),
        };
        let growth = self.growth.clone();
        let caller = one_off(r.cwd, r.env);
        let report = to_the_end(move |cancel| async move {
            let conversation = conversation
                .as_ref()
                .map(|(t, f)| (t.as_str(), f.as_path()));
            enhance::enhance(&growth, &r.prompt, conversation, &caller, &cancel).await
        })
        .await?
        .map_err(Status::from)?;
        let (action, name) = report.action();
        Ok(Response::new(EnhanceSkillResponse {
            action: action.to_string(),
            name,
            versions_saved: report
                .versions
                .saved
                .iter()
                .map(|(skill, n)| format!("{skill} {n}"))
                .collect(),
            report: report.render(),
        }))
    }

    /// `Skills.Search` → `search::search` (daemon/src/growth/search.rs).
    pub(super) async fn growth_search(
        &self,
        r: Request<SearchSkillsRequest>,
    ) -> Result<Response<SearchSkillsResponse>, Status> {
        let confined = from_confined_client(&r);
        let r = r.into_inner();
        let limit = if r.limit == 0 {
            SKILL_SEARCH_LIMIT_DEFAULT
        } else {
            r.limit as usize
        };
        if r.local {
            let skills = self
                .call(&r.cwd.clone(), move |s| {
                    Ok(s.search_skills_in(&r.query, limit, &super::skills::scope_of(&r.cwd)))
                })
                .await?;
            return Ok(Response::new(SearchSkillsResponse {
                skills: skills.into_iter().map(info).collect(),
                ranking: "keyword".into(),
                local_reason: String::new(),
            }));
        }
        let growth = self.growth.clone();
        let caller = one_off(r.cwd, r.env);
        let found = to_the_end(move |cancel| async move {
            if confined {
                let why = "the skill sub-agent does not run for a sandboxed client".to_string();
                search::local_only(&growth, &r.query, &caller, why).await
            } else {
                search::search(&growth, &r.query, &caller, &cancel).await
            }
        })
        .await?;
        Ok(Response::new(SearchSkillsResponse {
            ranking: if found.local_reason.is_some() {
                "local"
            } else {
                "model"
            }
            .into(),
            local_reason: found.local_reason.unwrap_or_default(),
            skills: found.skills.into_iter().take(limit).map(info).collect(),
        }))
    }
}
