//! Enhancement: the sub-agent reads the end of a conversation and creates a skill, improves
//! one, or changes nothing, answering with one of the three reports of [`prompt`]. It runs by
//! hand (`task:skill:enhance`) and as the stop hook after every turn that completed normally
//! while `skillEnhance.autoEnhance` is on ([`EnhanceHook`]).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{SkillAgent, prompt, rank, search::PREFILTER_LIMIT};
use crate::agent::TurnEnd;
use crate::agent::stop_hook::StopHook;

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

/// Runs an enhancement over `conversation` (already truncated) with `request` as the reason.
/// Returns the sub-agent's report.
pub async fn enhance(
    agent: &SkillAgent,
    request: &str,
    conversation: &str,
    source: Option<&Path>,
    cwd: &Path,
    env: HashMap<String, String>,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let all = agent.regular_skills();
    let skills = if all.len() > PREFILTER_LIMIT {
        let query: String = conversation.chars().take(RANK_QUERY_CHARS).collect();
        rank::rank(&all, &format!("{request} {query}"))
            .into_iter()
            .take(PREFILTER_LIMIT)
            .map(|(_, s)| s.clone())
            .collect()
    } else {
        all
    };
    let from = source
        .map(|p| format!(" (the end of the session file {})", p.display()))
        .unwrap_or_default();
    let prompt = format!(
        "{request}\n\nUser skills folder: {}\n\n{}\n\n<conversation{from}>\n{conversation}\n</conversation>",
        agent.skills_dir().display(),
        prompt::ENHANCE_INSTRUCTIONS,
    );
    let outcome = agent
        .run(prompt, &skills, u32::MAX, cwd, env, cancel)
        .await?;
    match outcome.end {
        TurnEnd::Completed => Ok(outcome.final_text.trim().to_string()),
        other => Err(other.message()),
    }
}

/// The stop hook: after a normal turn with auto-enhance on, enhance from the session file.
pub struct EnhanceHook {
    pub agent: Arc<SkillAgent>,
}

impl StopHook for EnhanceHook {
    fn after_turn<'a>(
        &'a self,
        session_file: PathBuf,
        max_chars: usize,
        cwd: PathBuf,
        env: HashMap<String, String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let file = session_file.clone();
            let tail = tokio::task::spawn_blocking(move || read_tail(&file, max_chars))
                .await
                .ok()?;
            let tail = match tail {
                Ok(t) => t,
                Err(e) => {
                    tracing::error!("skill enhance: cannot read {}: {e}", session_file.display());
                    return None;
                }
            };
            let request = "Analyze this conversation and decide whether a skill should be created \
                           or enhanced, following the matching meta skill.";
            let result = enhance(
                &self.agent,
                request,
                &tail,
                Some(&session_file),
                &cwd,
                env,
                &cancel,
            )
            .await;
            if cancel.is_cancelled() {
                return None;
            }
            match result {
                Ok(report) => Some(report),
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
    fn tail_keeps_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, format!("START{}ééEND", "x".repeat(100))).unwrap();
        let tail = read_tail(&file, 10).unwrap();
        assert_eq!(tail, "xxxxxééEND");
        assert!(read_tail(&file, 1000).unwrap().starts_with("START"));
    }
}
