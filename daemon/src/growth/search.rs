//! Skill search through the sub-agent: the candidates (every skill, or the BM25 top
//! [`PREFILTER_LIMIT`] when there are more) go into its prompt; it answers
//! `{"matched_skills":[{"name","description"}]}`; names it invents are dropped. With no model
//! (config error, call failure, unreadable answer) the local ranking answers, marked as such.

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Caller, SkillAgent, prompt, rank};
use crate::agent::TurnEnd;
use crate::skills::SkillSummary;
use crate::skills::commands::render_available;

/// With more skills than this, only the BM25 top this many reach the model.
pub const PREFILTER_LIMIT: usize = 50;
/// Skills a local-ranking answer lists.
const LOCAL_LIMIT: usize = 10;
/// Model calls a search may make (it should answer at once).
const SEARCH_MAX_ITERATIONS: u32 = 3;

#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    matched_skills: Vec<Matched>,
}

#[derive(Debug, Deserialize)]
struct Matched {
    name: String,
}

/// The outcome of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub skills: Vec<SkillSummary>,
    /// Why the local ranking answered instead of the model, if it did.
    pub local_reason: Option<String>,
}

impl SearchResult {
    /// `<available-skills>…</available-skills>`, with a note when the ranking was local.
    pub fn render(&self) -> String {
        let mut out = render_available(&self.skills);
        if let Some(reason) = &self.local_reason {
            out.push_str(&format!("(local keyword ranking: {reason})\n"));
        }
        out
    }
}

/// Searches `query` over the visible regular skills through the sub-agent.
pub async fn search(
    agent: &SkillAgent,
    query: &str,
    caller: &Caller,
    cancel: &CancellationToken,
) -> SearchResult {
    let all = searchable(agent.regular_skills(&caller.cwd).await);
    if all.is_empty() {
        return SearchResult {
            skills: Vec::new(),
            local_reason: None,
        };
    }
    // Best first: when the prompt's budget cuts descriptions, the likeliest keep the most.
    let candidates: Vec<SkillSummary> = rank::rank(&all, query)
        .into_iter()
        .take(PREFILTER_LIMIT)
        .map(|(_, s)| s.clone())
        .collect();
    let run = agent
        .run_as(
            super::RunMode::Search,
            prompt::search_prompt(query),
            &candidates,
            SEARCH_MAX_ITERATIONS,
            caller,
            cancel,
        )
        .await;
    let text = match run {
        Err(e) => return local(&all, query, format!("no model reachable: {e}")),
        Ok(r) if !matches!(r.outcome.end, TurnEnd::Completed) => {
            return local(
                &all,
                query,
                format!("no model reachable: {}", r.outcome.end.message()),
            );
        }
        Ok(r) => r.outcome.final_text,
    };
    match parse_answer(&text) {
        Some(names) => SearchResult {
            skills: names
                .iter()
                .filter_map(|n| candidates.iter().find(|s| &s.name == n).cloned())
                .collect(),
            local_reason: None,
        },
        None => local(
            &all,
            query,
            "the skill sub-agent's answer was not the expected JSON".into(),
        ),
    }
}

/// The local ranking alone, saying why the sub-agent was not asked.
pub async fn local_only(
    agent: &SkillAgent,
    query: &str,
    caller: &Caller,
    reason: String,
) -> SearchResult {
    local(
        &searchable(agent.regular_skills(&caller.cwd).await),
        query,
        reason,
    )
}

fn local(all: &[SkillSummary], query: &str, reason: String) -> SearchResult {
    SearchResult {
        skills: rank::top(all, query, LOCAL_LIMIT),
        local_reason: Some(reason),
    }
}

/// The names in `{"matched_skills":[…]}`, found anywhere in `text` (code fences allowed).
fn parse_answer(text: &str) -> Option<Vec<String>> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let answer: Answer = serde_json::from_str(text.get(start..=end)?).ok()?;
    Some(answer.matched_skills.into_iter().map(|m| m.name).collect())
}

/// Search results never include a skill only the user may run (`disable-model-invocation`).
fn searchable(mut skills: Vec<SkillSummary>) -> Vec<SkillSummary> {
    skills.retain(|s| !s.disable_model_invocation);
    skills
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn answers_parse_inside_fences() {
        let names = parse_answer(
            "```json\n{\"matched_skills\":[{\"name\":\"a\",\"description\":\"x\"}]}\n```",
        )
        .unwrap();
        assert_eq!(names, vec!["a"]);
        assert!(parse_answer("no idea").is_none());
    }
}
