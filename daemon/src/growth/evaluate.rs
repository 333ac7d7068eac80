//! `skill evaluate <name>`: structural checks (SKILL.md valid by the spec, every script answers
//! `-h`, every referenced bundled file exists) plus the sub-agent's review following
//! evaluating-skills → a 0-100 score and findings. Each structural problem costs
//! [`STRUCTURAL_PENALTY`] points off the review's score.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{Caller, SkillAgent};
use crate::agent::TurnEnd;

const STRUCTURAL_PENALTY: u32 = 15;
const SCRIPT_HELP_TIMEOUT: Duration = Duration::from_secs(5);
const REVIEW_MAX_ITERATIONS: u32 = 10;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Evaluation {
    pub skill: String,
    pub score: u32,
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
        let mut out = format!("Skill {}: score {}/100\n", self.skill, self.score);
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
) -> Result<Evaluation, String> {
    let skill = agent.store.show(name).map_err(|e| e.to_string())?;
    let structural = structural_checks(&skill.dir, &skill.skill_md, name).await;
    let prompt = format!(
        "Evaluate the skill \"{name}\" (folder {}) following the evaluating-skills meta skill. \
         Answer with JSON only: {{\"score\": <0-100>, \"findings\": [\"...\"]}}",
        skill.dir.display()
    );
    let outcome = agent
        .run(
            prompt,
            std::slice::from_ref(&skill),
            REVIEW_MAX_ITERATIONS,
            caller,
            cancel,
        )
        .await;
    let review = match outcome {
        Err(e) => Err(e),
        Ok(r) if !matches!(r.outcome.end, TurnEnd::Completed) => Err(r.outcome.end.message()),
        Ok(r) => {
            parse_review(&r.outcome.final_text).ok_or_else(|| "the review was not JSON".into())
        }
    };
    let penalty = STRUCTURAL_PENALTY * structural.len() as u32;
    Ok(match review {
        Ok(r) => Evaluation {
            skill: name.to_string(),
            score: r.score.min(100).saturating_sub(penalty),
            structural,
            review: r.findings,
            review_error: None,
        },
        Err(e) => Evaluation {
            skill: name.to_string(),
            score: 100u32.saturating_sub(penalty),
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

/// Spec validity, `-h` of every script, referenced files.
async fn structural_checks(dir: &Path, skill_md: &Path, name: &str) -> Vec<String> {
    let mut findings = Vec::new();
    let text = match std::fs::read_to_string(skill_md) {
        Ok(t) => t,
        Err(e) => return vec![format!("{}: {e}", skill_md.display())],
    };
    match synapse_shared::skill::parse_skill_md(skill_md, &text, Some(name)) {
        Ok(parsed) => findings.extend(parsed.warnings.iter().map(|w| w.to_string())),
        Err(e) => findings.push(e.to_string()),
    }
    for word in text.split(|c: char| c.is_whitespace() || "()[]`'\"<>,".contains(c)) {
        let word = word.trim_end_matches(['.', ':', ';']);
        if (word.starts_with("scripts/") || word.starts_with("references/"))
            && !word.contains('*')
            && !dir.join(word).exists()
        {
            findings.push(format!("SKILL.md refers to {word}, which does not exist"));
        }
    }
    let scripts = std::fs::read_dir(dir.join("scripts"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file());
    for script in scripts {
        let mut cmd = tokio::process::Command::new(&script);
        cmd.arg("-h")
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .process_group(0);
        let label = script
            .strip_prefix(dir)
            .unwrap_or(&script)
            .display()
            .to_string();
        match tokio::time::timeout(SCRIPT_HELP_TIMEOUT, cmd.output()).await {
            Ok(Ok(out)) if out.status.success() && !out.stdout.is_empty() => {}
            Ok(Ok(out)) => findings.push(format!(
                "{label} -h: exit {} with {} bytes of help",
                out.status.code().unwrap_or(-1),
                out.stdout.len()
            )),
            Ok(Err(e)) => findings.push(format!("{label} -h: cannot run ({e})")),
            Err(_) => findings.push(format!("{label} -h: no answer within 5 s")),
        }
    }
    findings
}
