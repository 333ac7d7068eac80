//! Enhancement: the sub-agent reads the end of a conversation and creates a skill, improves
//! one, or changes nothing, answering with one of the three reports of [`prompt`]. It runs by
//! hand (`task:skill:enhance`, `synapse skill enhance`) and as the stop hook after every turn
//! that completed normally while `skillEnhance.autoEnhance` is on ([`EnhanceHook`]). The
//! report is followed by a note for each version saved before a change.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::snapshot_gate::RunVersions;
use super::{Caller, SkillAgent, prompt, rank, search::PREFILTER_LIMIT};
use crate::agent::TurnEnd;
use crate::agent::stop_hook::{FinishedTurn, StopHook};

/// Characters of the conversation used for ranking the skills the sub-agent sees.
const RANK_QUERY_CHARS: usize = 4_000;

/// The last `max_chars` characters of `path` (at a character boundary).
pub fn read_tail(path: &Path, max_chars: usize) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    // A character is at most 4 bytes: read enough bytes, then cut by characters.
    let want = (max_chars as u64).saturating_mul(4).min(len);
    file.seek(SeekFrom::Start(len - want))?;
    let mut bytes = Vec::with_capacity(want as usize);
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_start_matches('\u{FFFD}');
    let skip = text.chars().count().saturating_sub(max_chars);
    Ok(text.chars().skip(skip).collect())
}

/// An enhancement's outcome: the sub-agent's report and the versions saved on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct EnhanceReport {
    pub report: String,
    pub versions: RunVersions,
}

impl EnhanceReport {
    /// The report followed by notes on the versions.
    pub fn render(&self) -> String {
        format!("{}{}", self.report, self.versions.notes())
    }

    /// ("created" | "enhanced" | "none" | "unknown", the skill's name or "") from the report.
    pub fn action(&self) -> (&'static str, String) {
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
) -> Result<EnhanceReport, String> {
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
    let conversation = match conversation {
        Some((text, file)) => format!(
            "<conversation (the end of the session file {})>\n{text}\n</conversation>",
            file.display()
        ),
        None => "(No conversation: the request above says what to learn.)".to_string(),
    };
    let prompt = format!(
        "{request}\n\nUser skills folder: {}\n\n{}\n\n{conversation}",
        agent.skills_dir().display(),
        prompt::ENHANCE_INSTRUCTIONS,
    );
    let run = agent.run(prompt, &skills, u32::MAX, caller, cancel).await?;
    match run.outcome.end {
        TurnEnd::Completed => Ok(EnhanceReport {
            report: run.outcome.final_text.trim().to_string(),
            versions: run.versions,
        }),
        other => Err(format!("{}{}", other.message(), run.versions.notes())),
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
        let report = |text: &str| EnhanceReport {
            report: text.into(),
            versions: RunVersions::default(),
        };
        let created = "Skill enhancement done:\n- Action: created skill\n- Name: analyzing-logs\n";
        assert_eq!(
            report(created).action(),
            ("created", "analyzing-logs".into())
        );
        let enhanced = "Skill enhancement done:\n- Action: enhanced skill\n- Name: x\n";
        assert_eq!(report(enhanced).action(), ("enhanced", "x".into()));
        let none = "Skill enhancement analysis done:\n- Conclusion: no change needed\n";
        assert_eq!(report(none).action(), ("none", String::new()));
        assert_eq!(report("hello").action(), ("unknown", String::new()));
    }

    #[test]
    fn tail_keeps_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, format!("START{}ééEND", "x".repeat(100))).unwrap();
        let tail = read_tail(&file, 10).unwrap();
        assert_eq!(tail, "xxxxxééEND");
        assert!(read_tail(&file, 1000).unwrap().starts_with("START"));
    }
}
