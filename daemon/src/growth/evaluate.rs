//! `skill evaluate <name>`: static structural checks plus the sub-agent's review following
//! evaluating-skills → a 0-100 score and findings. No script of the skill is ever run: the
//! checks read files, and the review runs read-only (policy and OS sandbox) and is told to read
//! the scripts, not run them. Each structural problem costs [`STRUCTURAL_PENALTY`] points off
//! the review's score; without a review the score is marked "structural only".
//!
//! Structural checks ([`super::evaluate_checks`]): the SKILL.md is valid by the spec, every file
//! it names exists, every script can be started by its wrapper (an interpreter or a shebang; a
//! missing execute bit is fine then), every script the skill tells the model to run has a usage
//! or help (helper modules nobody is told to run need none), the description is in the third
//! person, and the body is short enough to load. Structure costs at most
//! [`STRUCTURAL_PENALTY_MAX`] points.

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::evaluate_checks::structural_checks;
use super::{Caller, GrowthError, RunMode, SkillAgent};
use crate::agent::TurnEnd;

const STRUCTURAL_PENALTY: u32 = 15;
/// At most this much is taken off for structure, so a skill the review rates well never drops
/// to a flat zero because of a list of small gaps.
const STRUCTURAL_PENALTY_MAX: u32 = 45;
const REVIEW_MAX_ITERATIONS: u32 = 10;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Evaluation {
    pub skill: String,
    pub score: u32,
    /// `"structural and review"`, or `"structural only"` when the review is missing.
    pub basis: &'static str,
    /// Problems found by code (always checked).
    pub structural: Vec<String>,
    /// The sub-agent's findings.
    pub review: Vec<String>,
    /// Why there is no review, when there is none.
    pub review_error: Option<String>,
}

#[derive(Deserialize)]
struct Review {
    score: u32,
    #[serde(default)]
    findings: Vec<String>,
}

impl Evaluation {
    pub fn render_text(&self) -> String {
        let mut out = match &self.review_error {
            Some(_) => format!(
                "Skill {}: score {}/100 (structural only: no review by the model)\n",
                self.skill, self.score
            ),
            None => format!("Skill {}: score {}/100\n", self.skill, self.score),
        };
        if self.structural.is_empty() {
            out.push_str("Structure: ok\n");
        } else {
            out.push_str("Structure:\n");
            self.structural
                .iter()
                .for_each(|f| out.push_str(&format!("  - {f}\n")));
        }
        match &self.review_error {
            Some(e) => out.push_str(&format!("Review: unavailable ({e})\n")),
            None if self.review.is_empty() => out.push_str("Review: no findings\n"),
            None => {
                out.push_str("Review:\n");
                self.review
                    .iter()
                    .for_each(|f| out.push_str(&format!("  - {f}\n")));
            }
        }
        out
    }
}

/// Evaluates the visible skill `name`.
pub async fn evaluate(
    agent: &SkillAgent,
    name: &str,
    caller: &Caller,
    cancel: &CancellationToken,
) -> Result<Evaluation, GrowthError> {
    // The skill as the caller's folder sees it: its project's copy there, never another's.
    let skill = if caller.cwd.is_absolute() {
        agent.store.show_in(name, &caller.cwd)?
    } else {
        agent.store.show(name)?
    };
    let store = agent.store.clone();
    let (n, s, cwd) = (name.to_string(), skill.clone(), caller.cwd.clone());
    let structural = tokio::task::spawn_blocking(move || {
        let scripts = if cwd.is_absolute() {
            store.scripts_of_in(&n, &cwd)
        } else {
            store.scripts_of(&n)
        }
        .unwrap_or_default();
        structural_checks(&s.dir, &s.skill_md, &s.name, &scripts)
    })
    .await
    .map_err(GrowthError::internal)?;
    let prompt = format!(
        "Evaluate the skill \"{name}\" (folder {}) following the evaluating-skills meta skill. \
         Read its files (`read`, `glob`); do not run its scripts or change anything. \
         Answer with JSON only: {{\"score\": <0-100>, \"findings\": [\"...\"]}}",
        skill.dir.display()
    );
    let outcome = agent
        .run_as(
            RunMode::ReadOnly,
            prompt,
            std::slice::from_ref(&skill),
            REVIEW_MAX_ITERATIONS,
            caller,
            cancel,
        )
        .await;
    let review = match outcome {
        Err(e) => Err(e.to_string()),
        Ok(r) if !matches!(r.outcome.end, TurnEnd::Completed) => Err(r.outcome.end.message()),
        Ok(r) => {
            parse_review(&r.outcome.final_text).ok_or_else(|| "the review was not JSON".into())
        }
    };
    let penalty = (STRUCTURAL_PENALTY * structural.len() as u32).min(STRUCTURAL_PENALTY_MAX);
    Ok(match review {
        Ok(r) => Evaluation {
            skill: name.to_string(),
            score: r.score.min(100).saturating_sub(penalty),
            basis: "structural and review",
            structural,
            review: r.findings,
            review_error: None,
        },
        Err(e) => Evaluation {
            skill: name.to_string(),
            score: 100u32.saturating_sub(penalty),
            basis: "structural only",
            structural,
            review: Vec::new(),
            review_error: Some(e),
        },
    })
}

fn parse_review(text: &str) -> Option<Review> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(text.get(start..=end)?).ok()
}
