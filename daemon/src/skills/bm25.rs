//! BM25 over short skill documents (name, description, tags): the tokenizer every skill ranking
//! shares (`skill search`'s prefilter and local answer, the prompt's skills listing), and an
//! inverted index that scores a query by walking only the postings of its words, so ranking
//! 10,000 skills at a turn's start costs microseconds, not a scan of every document.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lower-case words of two or more characters, crudely stemmed so "logs"/"log" and
/// "analyzing"/"analyze" meet.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(|w| {
            let w = w.to_lowercase();
            let w = w.strip_suffix("ing").filter(|s| s.len() > 2).unwrap_or(&w);
            let w = w.strip_suffix('s').filter(|s| s.len() > 2).unwrap_or(w);
            w.trim_end_matches('e').to_string()
        })
        .collect()
}

/// An inverted index over documents numbered from 0 in the order they were given.
#[derive(Debug, Default)]
pub struct Bm25Index {
    /// word → (document, term frequency).
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    avg_len: f64,
}

impl Bm25Index {
    /// Indexes `docs` (each a list of tokens from [`tokens`]).
    pub fn build(docs: impl IntoIterator<Item = Vec<String>>) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::new();
        for (i, doc) in docs.into_iter().enumerate() {
            doc_len.push(doc.len() as u32);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for t in doc {
                *counts.entry(t).or_default() += 1;
            }
            for (t, tf) in counts {
                postings.entry(t).or_default().push((i as u32, tf));
            }
        }
        let total: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
        let avg_len = total as f64 / doc_len.len().max(1) as f64;
        Self {
            postings,
            doc_len,
            avg_len,
        }
    }

    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The documents matching any query word, with their scores (each word's BM25 times its
    /// weight; a word given twice counts once, with its highest weight), best first, ties by
    /// document number.
    pub fn score(&self, query: &[(String, f64)]) -> Vec<(u32, f64)> {
        self.top(query, usize::MAX, |_| true)
    }

    /// The best `limit` documents `keep` accepts, as [`score`](Self::score) orders them.
    /// Scores add up in one dense array (no hashing per posting) and only the best are sorted,
    /// so a query whose words are in every document stays cheap.
    pub fn top(
        &self,
        query: &[(String, f64)],
        limit: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Vec<(u32, f64)> {
        let mut weights: Vec<(&str, f64)> = Vec::new();
        for (t, w) in query {
            match weights.iter_mut().find(|(seen, _)| *seen == t.as_str()) {
                Some(e) => e.1 = e.1.max(*w),
                None => weights.push((t.as_str(), *w)),
            }
        }
        let n = self.doc_len.len().max(1) as f64;
        let avg = self.avg_len.max(1.0);
        let mut scores = vec![0.0f64; self.doc_len.len()];
        for (t, w) in weights {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let len = f64::from(self.doc_len[doc as usize]);
                scores[doc as usize] +=
                    w * idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg));
            }
        }
        let mut out: Vec<(u32, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(i, s)| *s > 0.0 && keep(*i as u32))
            .map(|(i, s)| (i as u32, s))
            .collect();
        let order = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if out.len() > limit {
            out.select_nth_unstable_by(limit, order);
            out.truncate(limit);
        }
        out.sort_by(order);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_words_and_weights_decide() {
        let docs = [
            "invoice parser reads invoices",
            "log analyzer finds errors in logs",
            "pdf tools for invoices",
        ];
        let index = Bm25Index::build(docs.iter().map(|d| tokens(d)));
        assert_eq!(index.len(), 3);
        let q: Vec<(String, f64)> = tokens("analyze my logs")
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        assert_eq!(index.score(&q)[0].0, 1);
        let q = vec![("invoic".to_string(), 1.0), ("pdf".to_string(), 0.1)];
        let ranked = index.score(&q);
        assert_eq!(ranked[0].0, 0, "{ranked:?}");
        assert!(index.score(&[("zzz".into(), 1.0)]).is_empty());
        let best = index.top(&[("invoic".to_string(), 1.0)], 1, |d| d != 0);
        assert_eq!(best.len(), 1);
        assert_eq!(best[0].0, 2);
    }
}
