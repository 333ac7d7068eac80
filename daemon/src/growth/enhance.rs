//! Enhancement: the sub-agent reads the end of a conversation and creates a skill, improves
//! one, or changes nothing, answering with one of the three reports of [`prompt`]. It runs by
//! hand (`task:skill:enhance`, `synapse skill enhance`) and as the stop hook after every turn
//! that completed normally while `skillEnhance.autoEnhance` is on ([`EnhanceHook`]). The
//! report is followed by a note for each version saved before a change.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::report_check::{self, DiskChanges};
use super::snapshot_gate::RunVersions;
use super::{Caller, GrowthError, SkillAgent, prompt, rank, search::PREFILTER_LIMIT};
use crate::agent::TurnEnd;
use crate::agent::stop_hook::{FinishedTurn, StopHook};

/// Characters of the conversation used for ranking the skills the sub-agent sees.
const RANK_QUERY_CHARS: usize = 4_000;

/// An enhancement's outcome: the sub-agent's report, the versions saved on the way and what
/// changed on disk (computed by Synapse).
#[derive(Debug, Clone, PartialEq)]
pub struct EnhanceReport {
    pub report: String,
    pub versions: RunVersions,
    pub disk: DiskChanges,
}

impl EnhanceReport {
    /// The report, a correction where the disk disagrees with it, the changed files and notes on
    /// the versions.
    pub fn render(&self) -> String {
        let (claimed, name) = self.claimed();
        let note = report_check::reconcile(claimed, &name, &self.disk)
            .2
            .map(|n| format!("\n\n{n}"))
            .unwrap_or_default();
        format!(
            "{}{note}\n{}{}",
            self.report,
            report_check::render_changes(&self.disk),
            self.versions.notes()
        )
    }

    /// ("created" | "enhanced" | "none" | "unknown", the skill's name or ""): what the report
    /// claims, corrected by what changed on disk.
    pub fn action(&self) -> (&'static str, String) {
        let (claimed, name) = self.claimed();
        let (action, name, _) = report_check::reconcile(claimed, &name, &self.disk);
        (action, name)
    }

    /// What the report itself claims.
    fn claimed(&self) -> (&'static str, String) {
        let field = |key: &str| {
            self.report
                .lines()
                .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
        };
        let action = match field("- Action:").as_deref() {
            Some(a) if a.starts_with("created") => "created",
            Some(a) if a.starts_with("enhanced") => "enhanced",
            _ if field("- Conclusion:").is_some() => "none",
            _ => "unknown",
        };
        let name = match action {
            "created" | "enhanced" => field("- Name:").unwrap_or_default(),
            _ => String::new(),
        };
        (action, name)
    }
}

/// Runs an enhancement over `conversation` (already truncated; `None` when the request alone
/// says what to learn) with `request` as the reason.
pub async fn enhance(
    agent: &SkillAgent,
    request: &str,
    conversation: Option<(&str, &Path)>,
    caller: &Caller,
    cancel: &CancellationToken,
) -> Result<EnhanceReport, GrowthError> {
    let all = agent.regular_skills(&caller.cwd).await;
    let text = conversation.map(|(text, _)| text).unwrap_or("");
    let skills = if all.len() > PREFILTER_LIMIT {
        let query: String = text.chars().take(RANK_QUERY_CHARS).collect();
        rank::rank(&all, &format!("{request} {query}"))
            .into_iter()
            .take(PREFILTER_LIMIT)
            .map(|(_, s)| s.clone())
            .collect()
    } else {
        all
    };
    // The transcript, not the raw file: no ids, timestamps or escaped JSON (and no path that
    // would name the session).
    let conversation = match conversation {
        Some((text, _)) => format!(
            "The end of the session: [user] and [assistant] say who wrote, a `$ ` line is a \
             command that ran, with its output under it.\n<conversation>\n{text}\n\
             </conversation>"
        ),
        None => "(No conversation: the request above says what to learn.)".to_string(),
    };
    let prompt = format!(
        "{request}\n\nUser skills folder: {}\n\n{}\n\n{conversation}",
        agent.skills_dir().display(),
        prompt::ENHANCE_INSTRUCTIONS,
    );
    let dir = agent.skills_dir();
    let before = tokio::task::spawn_blocking(move || report_check::snapshot(&dir))
        .await
        .unwrap_or_default();
    let run = agent.run(prompt, &skills, u32::MAX, caller, cancel).await?;
    let dir = agent.skills_dir();
    let after = tokio::task::spawn_blocking(move || report_check::snapshot(&dir))
        .await
        .unwrap_or_default();
    match run.outcome.end {
        TurnEnd::Completed => Ok(EnhanceReport {
            report: run.outcome.final_text.trim().to_string(),
            versions: run.versions,
            disk: report_check::diff(&before, &after),
        }),
        other => Err(GrowthError::Run(format!(
            "{}{}",
            other.message(),
            run.versions.notes()
        ))),
    }
}

/// The stop hook: after a normal turn with auto-enhance on, enhance from the session file,
/// with the memory of the session's skill sub-agent.
pub struct EnhanceHook {
    pub agent: Arc<SkillAgent>,
}

/// What the stop hook asks for.
const AUTO_REQUEST: &str = "Analyze this conversation and decide whether a skill should be \
created or enhanced, following the matching meta skill.";

impl StopHook for EnhanceHook {
    fn enabled(&self) -> bool {
        (self.agent.auto_enhance)()
    }

    fn after_turn<'a>(
        &'a self,
        turn: FinishedTurn,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let tail = match self.agent.conversation_tail(&turn.session_id).await {
                Ok(tail) => tail,
                Err(e) => {
                    tracing::error!("skill enhance: {e}");
                    return None;
                }
            };
            let caller = Caller {
                cwd: turn.cwd,
                env: turn.env,
                session: Some(turn.session_id),
            };
            let result = enhance(
                &self.agent,
                AUTO_REQUEST,
                Some((&tail.0, &tail.1)),
                &caller,
                &cancel,
            )
            .await;
            if cancel.is_cancelled() {
                return None;
            }
            match result {
                Ok(report) => Some(report.render()),
                Err(e) => Some(format!("Skill enhancement failed: {e}")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_report_names_its_action_and_skill() {
        let touched = |names: &[&str], created: bool| DiskChanges {
            created: if created {
                names.iter().map(|n| n.to_string()).collect()
            } else {
                Vec::new()
            },
            files: names
                .iter()
                .map(|n| {
                    (
                        n.to_string(),
                        vec!["SKILL.md changed (1 → 2 bytes)".to_string()],
                    )
                })
                .collect(),
            removed: Vec::new(),
        };
        let report = |text: &str| EnhanceReport {
            report: text.into(),
            versions: RunVersions::default(),
            disk: DiskChanges::default(),
        };
        let created = "Skill enhancement done:\n- Action: created skill\n- Name: analyzing-logs\n";
        let real = EnhanceReport {
            disk: touched(&["analyzing-logs"], true),
            ..report(created)
        };
        assert_eq!(real.action(), ("created", "analyzing-logs".into()));
        // Claimed but not on disk: the disk wins, and the user is told.
        assert_eq!(report(created).action(), ("none", String::new()));
        assert!(report(created).render().contains("Note from Synapse"));
        let enhanced = "Skill enhancement done:\n- Action: enhanced skill\n- Name: x\n";
        let real = EnhanceReport {
            disk: touched(&["x"], false),
            ..report(enhanced)
        };
        assert_eq!(real.action(), ("enhanced", "x".into()));
        assert!(
            real.render().contains("x/SKILL.md changed"),
            "{}",
            real.render()
        );
        let none = "Skill enhancement analysis done:\n- Conclusion: no change needed\n";
        assert_eq!(report(none).action(), ("none", String::new()));
        assert_eq!(report("hello").action(), ("unknown", String::new()));
    }
}
