//! API keys never reach a file under `SYNAPSE_HOME` other than the settings.json the user put
//! them in: turns with tool calls, a wrong key (401) whose error message echoes the key, as
//! careless servers do, a server error (500), for both providers, with the keys in the
//! environment and in settings.json. Every other file (logs, sessions, indexes) is searched.

use std::fs;

use serde_json::json;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{ErrorReply, FakeLlm, Reply, Script, Step};

use super::support::{snapshot, synapse_with_llm};

const ANTHROPIC_KEY: &str = "sk-ant-api03-KEYMARKER-env-a1";
const OPENAI_KEY: &str = "sk-proj-KEYMARKER-env-o2";
const SETTINGS_ANTHROPIC_KEY: &str = "sk-ant-api03-KEYMARKER-settings-a3";
const SETTINGS_OPENAI_KEY: &str = "sk-proj-KEYMARKER-settings-o4";

/// Variables set on one client run.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// A 401 whose message repeats the key it was given.
fn echoing_401(key: &str) -> ErrorReply {
    ErrorReply::new(
        401,
        "authentication_error",
        format!("invalid x-api-key: {key}"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_never_reach_logs_or_session_files() {
    let env = TestEnv::new();
    fs::create_dir_all(env.home()).unwrap();
    let settings = json!({"env": {
        "ANTHROPIC_API_KEY": SETTINGS_ANTHROPIC_KEY,
        "OPENAI_API_KEY": SETTINGS_OPENAI_KEY,
    }});
    fs::write(env.paths().settings_file(), settings.to_string()).unwrap();
    // Started without keys, so each run's key comes from its own client or settings.json.
    env.start_daemon();
    let fake = FakeLlm::start(Script::new()).await.unwrap();
    let anthropic = [("ANTHROPIC_API_KEY", ANTHROPIC_KEY)];
    let openai = [
        ("SYNAPSE_PROVIDER", "openai"),
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("SYNAPSE_MODEL", "m"),
    ];
    let from_settings: [(&str, &str); 0] = [];
    let from_settings_openai = [("SYNAPSE_PROVIDER", "openai"), ("SYNAPSE_MODEL", "m")];
    let server_error = || ErrorReply::server_error().header("x-should-retry", "false");

    let turn = |command: &str| -> Vec<Step> {
        vec![
            Reply::new().tool_call(command).into(),
            Reply::new().text("done").into(),
        ]
    };
    // (client environment, the model's answers, whether the run succeeds, the key it must send)
    let runs: Vec<(Vars, Vec<Step>, bool, &str)> = vec![
        (&anthropic, turn("echo hello"), true, ANTHROPIC_KEY),
        (
            &anthropic,
            vec![echoing_401(ANTHROPIC_KEY).into()],
            false,
            ANTHROPIC_KEY,
        ),
        (
            &anthropic,
            vec![server_error().into()],
            false,
            ANTHROPIC_KEY,
        ),
        (&openai, turn("echo hi"), true, OPENAI_KEY),
        (
            &openai,
            vec![echoing_401(OPENAI_KEY).into()],
            false,
            OPENAI_KEY,
        ),
        (&openai, vec![server_error().into()], false, OPENAI_KEY),
        (
            &from_settings,
            vec![echoing_401(SETTINGS_ANTHROPIC_KEY).into()],
            false,
            SETTINGS_ANTHROPIC_KEY,
        ),
        (
            &from_settings_openai,
            vec![echoing_401(SETTINGS_OPENAI_KEY).into()],
            false,
            SETTINGS_OPENAI_KEY,
        ),
    ];
    for (vars, steps, ok, key) in runs {
        for step in steps {
            fake.push(step);
        }
        let args = ["run", "say hello"];
        let before = fake.requests().len();
        let out = synapse_with_llm(&env, &fake, &args, vars).await;
        assert_eq!(out.success(), ok, "{vars:?}: {out:?}");
        let sent = &fake.requests()[before..];
        assert!(!sent.is_empty(), "{vars:?}: no request: {out:?}");
        let auth = sent[0]
            .header("x-api-key")
            .or_else(|| sent[0].header("authorization"))
            .unwrap_or_default();
        assert!(auth.ends_with(key), "{vars:?} sent {auth:?}");
    }
    env.stop_daemon();

    let mut searched = 0;
    for path in snapshot(env.home()).into_keys() {
        let file = env.home().join(&path);
        if !file.is_file() || file == env.paths().settings_file() {
            continue;
        }
        searched += 1;
        let text = String::from_utf8_lossy(&fs::read(&file).unwrap()).into_owned();
        for key in [
            ANTHROPIC_KEY,
            OPENAI_KEY,
            SETTINGS_ANTHROPIC_KEY,
            SETTINGS_OPENAI_KEY,
        ] {
            assert!(
                !text.contains(key),
                "{} holds the key {key}",
                path.display()
            );
        }
        assert!(
            !text.contains("KEYMARKER"),
            "{} holds part of a key",
            path.display()
        );
    }
    let sessions = env.home().join("sessions");
    assert!(
        fs::read_dir(&sessions).unwrap().count() >= 1,
        "no session file was searched"
    );
    assert!(
        fs::read_dir(env.home().join("logs")).unwrap().count() >= 1,
        "no log was searched"
    );
    assert!(searched >= 3, "only {searched} files searched");
}

/// The web-search keys are the daemon's credentials like the model's: a command the model runs
/// (`env`, `printenv`) never sees them, while the user's own tokens stay in its environment.
#[test]
fn search_and_model_keys_never_reach_the_agents_shell() {
    let env = TestEnv::new();
    let out = synapse_tests::run(
        env.synapse()
            .env("BRAVE_API_KEY", "BSA-KEYMARKER-brave")
            .env("TAVILY_API_KEY", "tvly-KEYMARKER-tavily")
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("MY_TOOL_TOKEN", "kept-for-my-tool")
            .args(["exec", "env; echo end"]),
    );
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("MY_TOOL_TOKEN=kept-for-my-tool"),
        "{out:?}"
    );
    assert!(out.stdout.contains("end"), "{out:?}");
    assert!(!out.stdout.contains("KEYMARKER"), "{}", out.stdout);
}
