//! Local BM25 ranking of skills over name, description and tags. It prefilters what the skill
//! sub-agent sees when there are many skills, and answers `skill search` on its own when no
//! model can be reached.

use std::collections::HashMap;

use crate::skills::SkillSummary;
use crate::skills::bm25::tokens;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Name words count this many times (a name is the strongest signal).
const NAME_WEIGHT: usize = 3;

fn document(s: &SkillSummary) -> Vec<String> {
    let mut doc = Vec::new();
    for _ in 0..NAME_WEIGHT {
        doc.extend(tokens(&s.name));
    }
    doc.extend(tokens(&s.description));
    for t in &s.tags {
        doc.extend(tokens(t));
    }
    doc
}

/// `skills` ordered by BM25 score for `query`, best first, with their scores; ties by name.
pub fn rank<'a>(skills: &'a [SkillSummary], query: &str) -> Vec<(f64, &'a SkillSummary)> {
    let docs: Vec<Vec<String>> = skills.iter().map(document).collect();
    let n = docs.len().max(1) as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        let mut seen: Vec<&str> = d.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *df.entry(t).or_default() += 1;
        }
    }
    let mut q = tokens(query);
    q.sort();
    q.dedup();
    let mut scored: Vec<(f64, &SkillSummary)> = skills
        .iter()
        .zip(&docs)
        .map(|(s, d)| {
            let len = d.len() as f64;
            let score = q
                .iter()
                .map(|t| {
                    let tf = d.iter().filter(|w| *w == t).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let df = *df.get(t.as_str()).unwrap_or(&0) as f64;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg.max(1.0)))
                })
                .sum();
            (score, s)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored
}

/// The best `limit` skills with a positive score.
pub fn top(skills: &[SkillSummary], query: &str, limit: usize) -> Vec<SkillSummary> {
    rank(skills, query)
        .into_iter()
        .filter(|(score, _)| *score > 0.0)
        .take(limit)
        .map(|(_, s)| s.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn skill(name: &str, description: &str) -> SkillSummary {
        SkillSummary::for_test(name, description)
    }

    #[test]
    fn name_and_description_words_rank_first() {
        let skills = vec![
            skill("pdf-editor", "Edits PDF files."),
            skill("analyzing-logs", "Finds errors in log files."),
            skill("git-helper", "Explains git history and log output."),
        ];
        let names: Vec<String> = top(&skills, "analyze the logs", 5)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names[0], "analyzing-logs");
        assert!(!names.contains(&"pdf-editor".to_string()));
    }
}
