//! `synapse-bench`: runs every benchmark of the project and prints one table — metric, goal,
//! measured median, min–max, and the ratio to the baseline where there is one.
//!
//! Each bench (`tests/benches/*.rs`) runs as `cargo bench -p synapse-tests --bench <name>`
//! with its criterion data sent to a fresh folder (`CRITERION_HOME`) and its own measurements
//! to a records file (`SYNAPSE_BENCH_RECORDS`); this program reads both. Inputs are generated
//! by the benches themselves. `--quick` runs everything small (a few samples, 500 skills
//! instead of 10,000) on the test build (`dev` profile, already built by `cargo test`): it proves
//! the harness works, the numbers mean nothing. A full run builds and measures the `release`
//! profile (fat LTO: what users run); `--profile NAME` picks another.
//!
//! Usage: `cargo run --release -p synapse-bench [-- --quick] [-- --only daemon,shell]
//! [-- --profile NAME]`
//! (run `tests/fixtures/install.sh` once first: the MCP and load benches use its servers).

mod goals;
mod measure;

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use measure::Measured;

struct Options {
    quick: bool,
    only: Option<Vec<String>>,
    /// The cargo profile the binaries and benches are built with.
    profile: Option<String>,
}

impl Options {
    /// `--profile`, else the test build for a quick run and `release` for a measurement.
    fn profile(&self) -> &str {
        match &self.profile {
            Some(p) => p,
            None if self.quick => "dev",
            None => "release",
        }
    }
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        only: None,
        profile: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => options.quick = true,
            "--only" => {
                let list = args
                    .next()
                    .ok_or("--only needs a list, e.g. daemon,shell")?;
                options.only = Some(list.split(',').map(str::to_string).collect());
            }
            "--profile" => {
                let p = args
                    .next()
                    .ok_or("--profile needs a cargo profile name, e.g. release")?;
                options.profile = Some(p);
            }
            "-h" | "--help" => {
                return Err(
                    "usage: synapse-bench [--quick] [--only NAME,…] [--profile NAME]\n\
                     --quick runs on the test build (dev profile), a full run on release\n\
                     benches: daemon, \
                            shell, mcp, mcp_serve, acp, agent, llm_real, repl, skills, growth, \
                            load, \
                            workspaces, permissions, prompt_cache"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // tests/bench → the workspace root
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let out = root.join("target/synapse-bench");
    let criterion = out.join("criterion");
    let records = out.join("records.jsonl");
    let _ = std::fs::remove_dir_all(&out);
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let profile = options.profile();
    eprintln!("building the binaries ({profile} profile)…");
    if !cargo(
        &root,
        &["build", "--profile", profile, "--bins"],
        &out.join("build.log"),
        &[],
    ) {
        eprintln!(
            "the {profile} build failed; see {}",
            out.join("build.log").display()
        );
        return ExitCode::FAILURE;
    }
    let mut failed = Vec::new();
    for (name, uses_criterion) in goals::BENCHES {
        if let Some(only) = &options.only
            && !only.iter().any(|o| o == name)
        {
            continue;
        }
        let mut args = vec![
            "bench",
            "--profile",
            profile,
            "-p",
            "synapse-tests",
            "--bench",
            name,
            "--",
        ];
        if *uses_criterion && options.quick {
            args.extend(["--warm-up-time", "0.05", "--measurement-time", "0.1"]);
        }
        let mut env: Vec<(&str, &Path)> = vec![
            ("CRITERION_HOME", criterion.as_path()),
            ("SYNAPSE_BENCH_RECORDS", records.as_path()),
        ];
        if options.quick {
            env.push(("SYNAPSE_BENCH_QUICK", Path::new("1")));
        }
        let log = out.join(format!("{name}.log"));
        let started = Instant::now();
        eprint!("running {name}… ");
        if cargo(&root, &args, &log, &env) {
            eprintln!("ok ({:.0} s)", started.elapsed().as_secs_f64());
        } else {
            eprintln!("FAILED; see {}", log.display());
            failed.push(*name);
        }
    }
    let mut measured = measure::criterion_results(&criterion);
    measured.extend(measure::records(&records));
    print_report(&measured, options.quick);
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("failed benches: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// Runs cargo in `root` with its output in `log`; true on success.
fn cargo(root: &Path, args: &[&str], log: &Path, env: &[(&str, &Path)]) -> bool {
    let Ok(file) = std::fs::File::create(log) else {
        return false;
    };
    let Ok(err) = file.try_clone() else {
        return false;
    };
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status().map(|s| s.success()).unwrap_or(false)
}

fn print_report(measured: &[Measured], quick: bool) {
    let find = |id: &str| measured.iter().find(|m| m.id == id);
    println!();
    if quick {
        println!("Quick run: the harness works; these numbers are not measurements.\n");
    }
    println!("| metric | goal | median | min–max | vs baseline |");
    println!("| --- | --- | --- | --- | --- |");
    let mut shown: Vec<&str> = Vec::new();
    for goal in goals::GOALS {
        let Some(m) = find(goal.id) else { continue };
        shown.push(goal.id);
        let ratio = goal
            .baseline
            .and_then(find)
            .filter(|b| b.unit == m.unit && m.median > 0.0)
            .map(|b| {
                format!(
                    "{:.0}× (baseline {})",
                    b.median / m.median,
                    b.format(b.median)
                )
            })
            .unwrap_or_default();
        println!(
            "| {} | {} | {} | {}–{} | {} |",
            goal.label,
            goal.goal,
            m.format(m.median),
            m.format(m.min),
            m.format(m.max),
            ratio
        );
    }
    for m in measured.iter().filter(|m| !shown.contains(&m.id.as_str())) {
        println!(
            "| {} | — | {} | {}–{} | |",
            m.id,
            m.format(m.median),
            m.format(m.min),
            m.format(m.max)
        );
    }
}
