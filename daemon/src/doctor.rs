//! The daemon's half of `synapse doctor` (`Daemon.Doctor`): what only the daemon can see, each as
//! a [`Check`] — ok, a warning or broken — with the fix in words. The user's `settings.json`
//! (parses? others could change it? which settings are in force?), the permission rules of the
//! caller's folder (the project file: trusted? changed since? broken, and what holds instead),
//! the model (its configuration, then one request that costs no tokens, under a short deadline),
//! the sandbox (Landlock ABI, launcher, mode) and the instruction files a session opened in the
//! caller's folder would be given. Nothing here changes a file, and nothing reaches the model as
//! a prompt. The client adds what it sees itself (its own version, the socket, MCP servers).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use synapse_llm::ConfigError;
use synapse_llm::reach::{Reach, probe};
use synapse_permissions::Mode;
use synapse_sandbox::Support;

use crate::agent::gate::rules_source::{LoadedRules, RuleFiles, RulesSource};
use crate::state::DaemonState;
use crate::workspace::instructions;
use crate::workspace::trust_pins::{self, PinState};

/// How long the model server gets to answer the reachability request.
pub const MODEL_DEADLINE: Duration = Duration::from_secs(5);

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// Works, but something is worth knowing or changing.
    Warn,
    /// Broken: something the user relies on does not work.
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked: "settings", "rules", "model", "sandbox", "instructions".
    pub topic: &'static str,
    pub verdict: Verdict,
    pub summary: String,
    /// What to do about it; empty when nothing needs doing.
    pub fix: String,
}

impl Check {
    fn new(topic: &'static str, verdict: Verdict, summary: impl Into<String>) -> Self {
        Self {
            topic,
            verdict,
            summary: summary.into(),
            fix: String::new(),
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }
}

/// What the caller asks about.
#[derive(Debug, Clone, Default)]
pub struct DoctorRequest {
    /// The caller's folder (absolute): its project's rules and instruction files.
    pub cwd: PathBuf,
    /// The caller's environment: model variables in it count, as they do for a session.
    pub env: HashMap<String, String>,
    /// Leave out the request to the model server.
    pub skip_model: bool,
}

/// Every check of the daemon's side, in the order they are shown.
pub async fn run(state: &DaemonState, request: &DoctorRequest) -> Vec<Check> {
    let mut checks = settings_checks(state);
    if request.cwd.is_absolute() {
        checks.extend(rules_checks(state, &request.cwd));
    }
    checks.extend(model_checks(state, request).await);
    checks.push(sandbox_check(state, &request.cwd));
    if request.cwd.is_absolute() {
        checks.extend(instruction_checks(state, &request.cwd));
        checks.extend(custom_checks(state, &request.cwd));
    }
    checks.extend(plugin_checks());
    checks
}

/// Claude Code plugins whose records or files could not be read, each by name.
fn plugin_checks() -> Vec<Check> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let scan = synapse_shared::claude_plugins::scan(&home, None);
    let mut problems = scan.problems.clone();
    for plugin in scan.enabled() {
        problems.extend(
            crate::plugins::offers::of(plugin)
                .problems
                .into_iter()
                .map(|p| format!("plugin {}: {p}", plugin.key())),
        );
    }
    problems
        .into_iter()
        .map(|p| {
            Check::new("plugins", Verdict::Warn, p).fix(
                "fix the file or reinstall the plugin (`synapse plugin install <plugin>@<marketplace>`); \
                 the other plugins are used meanwhile",
            )
        })
        .collect()
}

/// Custom command and agent files that could not be used (unreadable, a FIFO, bad front matter).
fn custom_checks(state: &DaemonState, cwd: &Path) -> Vec<Check> {
    state
        .custom
        .load(cwd)
        .problems
        .into_iter()
        .map(|p| {
            Check::new("commands", Verdict::Warn, p)
                .fix("fix or remove the file; the other commands and agents are used meanwhile")
        })
        .collect()
}

/// The user's settings.json: missing (fine), private, parsing, and what is in force.
fn settings_checks(state: &DaemonState) -> Vec<Check> {
    let file = state.paths.settings_file();
    let shown = file.display().to_string();
    let mut out = Vec::new();
    for (what, path) in [
        ("Synapse home", state.paths.home().to_path_buf()),
        ("settings", file.clone()),
        ("trusted folders list", state.paths.trust_file()),
    ] {
        if let Some(why) = synapse_shared::paths::loose_permissions(&path) {
            out.push(
                Check::new(
                    "settings",
                    Verdict::Fail,
                    format!("{what} {} may be changed by others", path.display()),
                )
                .fix(why),
            );
        }
    }
    let snapshot = state.settings_handle.snapshot();
    match (&snapshot.error, file.exists()) {
        (None, false) => out.push(Check::new(
            "settings",
            Verdict::Ok,
            format!("{shown} does not exist yet: defaults in force"),
        )),
        (None, true) => out.push(Check::new(
            "settings",
            Verdict::Ok,
            format!("{shown} parses and is in force"),
        )),
        (Some(error), _) => {
            let instead = match (error.contains("in force"), snapshot.from_file) {
                (true, _) => String::new(),
                (false, true) => "; its last good version stays in force".to_string(),
                (false, false) => {
                    "; no version of it ever parsed, so defaults are in force".to_string()
                }
            };
            out.push(
                Check::new("settings", Verdict::Fail, format!("{error}{instead}")).fix(format!(
                    "correct {shown} (synapsed never rewrites a broken file; it counts at the \
                     next command once it parses)"
                )),
            );
        }
    }
    out
}

/// The permission rules a session opened in `cwd` would get: the project file's trust and pin,
/// broken files and what holds instead, problems in single entries.
fn rules_checks(state: &DaemonState, cwd: &Path) -> Vec<Check> {
    let pins = trust_pins::pin_file(state.paths.home());
    let rules = rules_for(state, cwd);
    let mut out = Vec::new();
    if let Some(project) = &rules.project {
        let file = project.file.display();
        let dir = project.dir.display();
        let check = match trust_pins::state(&pins, &project.file) {
            _ if project.trusted => Check::new(
                "rules",
                Verdict::Ok,
                format!("{file}: trusted, its rules apply"),
            ),
            PinState::Changed => Check::new(
                "rules",
                Verdict::Warn,
                format!(
                    "{file} changed since you trusted it: the rules you trusted stay in force, \
                     the changes wait"
                ),
            )
            .fix(format!("review it, then: synapse trust {dir}")),
            PinState::Unreadable(why) => {
                Check::new("rules", Verdict::Fail, format!("{file} is not used: {why}"))
                    .fix(format!("synapse trust {dir}"))
            }
            PinState::Matches | PinState::Unpinned => Check::new(
                "rules",
                Verdict::Warn,
                format!("{file} is not used: {dir} is not a trusted folder"),
            )
            .fix(format!("review it, then: synapse trust {dir}")),
        };
        out.push(check);
    }
    // The user's settings.json is reported by the settings check already.
    let user_file = state.paths.settings_file().display().to_string();
    let about_user_file = |line: &String| line.starts_with(&user_file);
    for broken in rules.broken.iter().filter(|l| !about_user_file(l)) {
        let check = Check::new("rules", Verdict::Fail, broken.clone());
        out.push(if rules.fail_closed {
            check.fix("correct the file; until then every command that is not a plain read asks")
        } else {
            check.fix("correct the file; its last good rules hold until then")
        });
    }
    for problem in rules.problems.iter().filter(|l| !about_user_file(l)) {
        out.push(
            Check::new("rules", Verdict::Warn, problem.clone())
                .fix("correct or remove that entry; the others apply"),
        );
    }
    let user_broken = rules.broken.iter().any(about_user_file);
    if out.is_empty() && !user_broken {
        out.push(Check::new(
            "rules",
            Verdict::Ok,
            "permission rules parse (no project settings for this folder)",
        ));
    }
    out
}

/// The rules as a session's gate in `cwd` loads them (sharing the daemon's last good rules).
fn rules_for(state: &DaemonState, cwd: &Path) -> std::sync::Arc<LoadedRules> {
    let env = state.gate_env(None);
    RulesSource::new(RuleFiles {
        user: env.user_settings.clone(),
        trust_file: env.trust_file.clone(),
        cwd: cwd.to_path_buf(),
        home: env.home.clone(),
        last_good: env.last_good_rules.clone(),
    })
    .get()
    .0
}

/// The model's configuration, then whether its server answers.
async fn model_checks(state: &DaemonState, request: &DoctorRequest) -> Vec<Check> {
    let settings_file = state.paths.settings_file();
    let settings = state.settings();
    let config = match crate::agent::session::resolve_config(&settings, &request.env, None) {
        Ok(config) => config,
        Err(e) => return vec![config_failure(&e, &settings_file)],
    };
    let name = format!(
        "{} via {} at {}",
        config.model,
        config.kind.display_name(),
        config.base_url
    );
    if request.skip_model {
        return vec![Check::new(
            "model",
            Verdict::Ok,
            format!("{name} (not asked: --offline)"),
        )];
    }
    let url_fix = format!(
        "start the server, or correct {} (the environment, or \"env\" in {})",
        config.kind.base_url_variable(),
        settings_file.display()
    );
    let key_fix = format!(
        "set a valid {} (the environment, or \"env\" in {})",
        config.kind.key_variable(),
        settings_file.display()
    );
    let check = match probe(&config, MODEL_DEADLINE).await {
        Reach::Answered {
            url,
            status,
            missing_model: None,
        } => Check::new(
            "model",
            Verdict::Ok,
            format!("{name}: answers (GET {url} → {status})"),
        ),
        Reach::Answered {
            url,
            missing_model: Some(listed),
            ..
        } => Check::new(
            "model",
            Verdict::Warn,
            format!(
                "{name}: the server answers, but {url} does not list {} (it lists {})",
                config.model,
                listed.join(", ")
            ),
        )
        .fix(format!(
            "set \"model\" in {} (or SYNAPSE_MODEL) to one of the server's models",
            settings_file.display()
        )),
        Reach::NoModelsList { url, status } => Check::new(
            "model",
            Verdict::Warn,
            format!(
                "{name}: the server answers, but not GET {url} (HTTP {status}); chat requests were not tried"
            ),
        ),
        Reach::KeyRefused {
            url,
            status,
            message,
        } => Check::new(
            "model",
            Verdict::Fail,
            format!("{name}: the key is refused (GET {url} → {status}: {message})"),
        )
        .fix(key_fix),
        Reach::Failed {
            url,
            status,
            message,
        } => Check::new(
            "model",
            Verdict::Fail,
            format!("{name}: the server answers with an error (GET {url} → {status}: {message})"),
        )
        .fix(url_fix),
        Reach::Unreachable { url, error } => Check::new(
            "model",
            Verdict::Fail,
            format!("{name}: no answer from {url} ({error})"),
        )
        .fix(url_fix),
    };
    vec![check]
}

/// A configuration that cannot make a request at all.
fn config_failure(e: &ConfigError, settings_file: &Path) -> Check {
    let summary = e.to_string();
    let fix = match e {
        ConfigError::MissingApiKey { variable, .. } => format!(
            "set {variable} in the environment, or run `synapse` on a terminal for the guided \
             setup"
        ),
        ConfigError::MissingModel { .. } => format!(
            "set \"model\" in {} (or SYNAPSE_MODEL)",
            settings_file.display()
        ),
        ConfigError::UnknownProvider { .. } => format!(
            "set \"provider\" to \"anthropic\" or \"openai\" in {}",
            settings_file.display()
        ),
        ConfigError::InvalidBaseUrl { variable, .. } => {
            format!("set {variable} to an http:// or https:// URL")
        }
        ConfigError::Settings(_) => {
            format!("correct the \"llm\" object in {}", settings_file.display())
        }
    };
    Check::new("model", Verdict::Fail, summary).fix(fix)
}

/// Whether the session shells run in the sandbox here.
fn sandbox_check(state: &DaemonState, cwd: &Path) -> Check {
    let mode = cwd
        .is_absolute()
        .then(|| rules_for(state, cwd).default_mode)
        .flatten();
    match synapse_sandbox::support() {
        Support::Unavailable { reason } => Check::new(
            "sandbox",
            Verdict::Warn,
            format!(
                "Landlock unavailable ({reason}): commands are checked by permission rules only"
            ),
        )
        .fix("use Linux 5.13 or newer with Landlock enabled (lsm=…,landlock)"),
        Support::Landlock { abi } => {
            if synapse_sandbox::launcher().is_none() {
                return Check::new(
                    "sandbox",
                    Verdict::Fail,
                    format!("Landlock ABI {abi}, but the sandbox launcher beside synapsed is missing: commands run unsandboxed"),
                )
                .fix("reinstall synapse so synapsed's launcher sits beside it");
            }
            if mode == Some(Mode::Yolo) {
                return Check::new(
                    "sandbox",
                    Verdict::Warn,
                    format!("Landlock ABI {abi}, but permissions.defaultMode is yolo: session shells run unsandboxed"),
                )
                .fix("set permissions.defaultMode to auto (or ask) to have commands sandboxed");
            }
            if abi < 6 {
                return Check::new(
                    "sandbox",
                    Verdict::Warn,
                    format!(
                        "Landlock ABI {abi}: session shells are sandboxed, partly (signals and \
                         abstract sockets need ABI 6)"
                    ),
                )
                .fix("a kernel with Landlock ABI 6 (Linux 6.12) confines signals too");
            }
            Check::new(
                "sandbox",
                Verdict::Ok,
                format!("Landlock ABI {abi}: session shells are sandboxed"),
            )
        }
    }
}

/// The instruction files a session opened in `cwd` would be given.
fn instruction_checks(state: &DaemonState, cwd: &Path) -> Vec<Check> {
    let env = state.gate_env(None);
    let home = Some(env.home.clone()).filter(|h| h != Path::new("/"));
    let places = instructions::Places {
        root: crate::workspace::project_root(cwd, home.as_deref()),
        home,
        synapse_home: Some(env.synapse_home.clone()),
    };
    let loaded = instructions::load(&places, cwd);
    let skipped = loaded.skipped.iter().map(|s| {
        Check::new("instructions", Verdict::Warn, s.to_string()).fix(
            "nothing of it is given to the model; remove the import or the file if it is not meant",
        )
    });
    let skipped: Vec<Check> = skipped.collect();
    let files = loaded.files;
    if files.is_empty() && skipped.is_empty() {
        return vec![Check::new(
            "instructions",
            Verdict::Ok,
            format!(
                "none for {} (AGENTS.md, CLAUDE.md or CLAUDE.local.md from {} down)",
                cwd.display(),
                places.root.display()
            ),
        )];
    }
    files
        .iter()
        .map(|f| {
            let size = human_bytes(f.bytes);
            if f.cut {
                Check::new(
                    "instructions",
                    Verdict::Warn,
                    format!(
                        "{} ({size}): cut, the model is given only part of it",
                        f.path.display()
                    ),
                )
                .fix(format!(
                    "shorten it (the most given is {} per file, {} in all)",
                    human_bytes(instructions::FILE_MAX_BYTES as u64),
                    human_bytes(instructions::TOTAL_MAX_BYTES as u64)
                ))
            } else {
                Check::new(
                    "instructions",
                    Verdict::Ok,
                    format!("{} ({size})", f.path.display()),
                )
            }
        })
        .chain(skipped)
        .collect()
}

fn human_bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        _ => format!("{:.1} KiB", n as f64 / 1024.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_names_a_real_path_and_the_setup() {
        let e = ConfigError::MissingApiKey {
            provider: "Anthropic",
            variable: "ANTHROPIC_API_KEY",
            hint: "",
        };
        let check = config_failure(&e, Path::new("/h/.synapse/settings.json"));
        assert_eq!(check.verdict, Verdict::Fail);
        assert!(!check.summary.contains("$SYNAPSE_HOME"), "{check:?}");
        assert!(check.fix.contains("ANTHROPIC_API_KEY"), "{check:?}");
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
    }
}
