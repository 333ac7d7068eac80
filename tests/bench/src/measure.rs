//! Reading what the benches measured: criterion's saved samples (`<CRITERION_HOME>/**/new/`
//! `benchmark.json` + `sample.json`, per-iteration times) and the records the self-timed benches
//! append (`synapse_tests::report`).

use std::path::Path;

use serde_json::Value;

/// One metric: median, min and max in `unit`.
#[derive(Debug, Clone)]
pub struct Measured {
    pub id: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// "ms" for times; anything else ("KB", "MB", "errors") is printed as is.
    pub unit: String,
}

impl Measured {
    /// A value in this metric's unit, for people: times scaled to µs, ms or s.
    pub fn format(&self, v: f64) -> String {
        if self.unit != "ms" {
            return if v.fract() == 0.0 {
                format!("{v:.0} {}", self.unit)
            } else {
                format!("{v:.1} {}", self.unit)
            };
        }
        if v < 0.0 {
            // A difference of two measurements can come out below zero (noise).
            format!("{v:.2} ms")
        } else if v < 0.001 {
            format!("{:.0} ns", v * 1e6)
        } else if v < 1.0 {
            format!("{:.1} µs", v * 1000.0)
        } else if v < 1000.0 {
            format!("{v:.2} ms")
        } else {
            format!("{:.2} s", v / 1000.0)
        }
    }
}

/// Every criterion benchmark under `dir`, times per iteration in ms.
pub fn criterion_results(dir: &Path) -> Vec<Measured> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "benchmark.json")
                && p.parent().is_some_and(|n| n.ends_with("new"))
                && let Some(m) = one_criterion(&p)
            {
                out.push(m);
            }
        }
    }
    out
}

fn one_criterion(benchmark: &Path) -> Option<Measured> {
    let read = |p: &Path| -> Option<Value> {
        serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
    };
    let meta = read(benchmark)?;
    let sample = read(&benchmark.with_file_name("sample.json"))?;
    let iters = sample["iters"].as_array()?;
    let times = sample["times"].as_array()?;
    let mut per_iter: Vec<f64> = iters
        .iter()
        .zip(times)
        .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64()? / 1e6))
        .collect();
    if per_iter.is_empty() {
        return None;
    }
    per_iter.sort_by(f64::total_cmp);
    Some(Measured {
        id: meta["full_id"].as_str()?.to_string(),
        median: per_iter[per_iter.len() / 2],
        min: per_iter[0],
        max: per_iter[per_iter.len() - 1],
        unit: "ms".into(),
    })
}

/// The records file of the self-timed benches (a missing file is no records).
pub fn records(file: &Path) -> Vec<Measured> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some(Measured {
                id: v["id"].as_str()?.to_string(),
                median: v["median"].as_f64()?,
                min: v["min"].as_f64()?,
                max: v["max"].as_f64()?,
                unit: v["unit"].as_str()?.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn criterion_samples_become_per_iteration_times() {
        let dir = tempfile_dir();
        let new = dir.join("group/bench/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(new.join("benchmark.json"), r#"{"full_id": "group/bench"}"#).unwrap();
        std::fs::write(
            new.join("sample.json"),
            r#"{"iters": [1.0, 2.0, 4.0], "times": [3000000.0, 4000000.0, 4000000.0]}"#,
        )
        .unwrap();
        let m = criterion_results(&dir);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].id, "group/bench");
        assert_eq!((m[0].min, m[0].median, m[0].max), (1.0, 2.0, 3.0));
        assert_eq!(m[0].format(0.0071), "7.1 µs");
        assert_eq!(m[0].format(0.000027), "27 ns");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("synapse-bench-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }
}
