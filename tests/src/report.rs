//! Results of the benchmarks in a form the one report (`synapse-bench`) can gather. A bench
//! that measures on its own (whole processes, sizes, latencies under load) calls [`samples`] or
//! [`value`]; criterion benches need nothing, their saved samples are read directly. Records
//! go, one JSON object per line, to the file named by `SYNAPSE_BENCH_RECORDS`; without it
//! (a plain `cargo bench`) nothing is written. [`quick`] tells a bench to do a small run that
//! only proves it works (`synapse-bench --quick`, used by CI).

use std::io::Write;
use std::time::Duration;

/// The file records are appended to.
pub const RECORDS_VAR: &str = "SYNAPSE_BENCH_RECORDS";
/// Set (to anything) for a quick run.
pub const QUICK_VAR: &str = "SYNAPSE_BENCH_QUICK";

/// True in a quick run: measure little, only show the harness works.
pub fn quick() -> bool {
    std::env::var_os(QUICK_VAR).is_some()
}

/// `full`, or `small` in a quick run.
pub fn size(full: usize, small: usize) -> usize {
    if quick() { small } else { full }
}

/// Records a timed metric from its samples (median, min, max, in milliseconds).
pub fn samples(id: &str, samples: &[Duration]) {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    if ms.is_empty() {
        return;
    }
    ms.sort_by(f64::total_cmp);
    write(serde_json::json!({
        "id": id,
        "median": ms[ms.len() / 2],
        "min": ms[0],
        "max": ms[ms.len() - 1],
        "unit": "ms",
        "n": ms.len(),
    }));
}

/// Records a single measured value (a size, a count, a peak RSS) in `unit`.
pub fn value(id: &str, value: f64, unit: &str) {
    write(serde_json::json!({
        "id": id,
        "median": value,
        "min": value,
        "max": value,
        "unit": unit,
        "n": 1,
    }));
}

fn write(record: serde_json::Value) {
    let Some(path) = std::env::var_os(RECORDS_VAR) else {
        return;
    };
    let line = format!("{record}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot record a benchmark result in {path:?}: {e}");
    }
}
