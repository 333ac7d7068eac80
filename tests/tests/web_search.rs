//! Issue 10 end to end: `web_search` through the real `synapse exec` and a real `synapsed`,
//! against fake SearXNG, Brave and Tavily endpoints of the local web fixture.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use synapse_tests::web_fixture::WebFixture;
use synapse_tests::{Run, TestEnv, run};

fn started(settings: serde_json::Value) -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.home().join("settings.json"), settings.to_string()).unwrap();
    env.start_daemon();
    env
}

fn search(env: &TestEnv, query: &str) -> Run {
    let mut cmd = env.synapse();
    cmd.env_remove("BRAVE_API_KEY")
        .env_remove("TAVILY_API_KEY")
        .arg("exec")
        .arg(format!("web_search {query}"));
    run(&mut cmd)
}

/// Every file under the installation that could hold a leaked key: logs and sessions.
fn files_mentioning(env: &TestEnv, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![env.home().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n != "settings.json")
                && std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn searxng_results_are_listed_with_title_url_and_snippet() {
    let web = WebFixture::start().unwrap();
    let env = started(serde_json::json!({
        "web": {"search": {"provider": "searxng", "url": format!("{}/searxng/", web.url())}}
    }));
    let r = search(&env, "rust async --max 2");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        r.stdout,
        "Results for \"rust async\" (searxng):\n\n\
         1. SearXNG result for rust async\n   https://docs.example/one\n   The first snippet & more\n\n\
         2. Second\n   https://docs.example/two\n"
    );
    let hit = &web.hits()[0];
    assert_eq!(hit.path(), "/searxng/search");
    assert!(hit.target.contains("format=json"), "{}", hit.target);
}

#[test]
fn brave_sends_the_key_in_a_header_and_never_shows_it() {
    let web = WebFixture::start().unwrap();
    let env = started(serde_json::json!({
        "web": {"search": {"provider": "brave", "apiKey": "brave-key",
                           "url": format!("{}/brave/search", web.url())}}
    }));
    let r = search(&env, "\"tokio select\" --max 2");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        r.stdout,
        "Results for \"tokio select\" (brave):\n\n\
         1. Brave 1: tokio select\n   https://brave.example/1\n   About tokio select, part 1\n\n\
         2. Brave 2: tokio select\n   https://brave.example/2\n   About tokio select, part 2\n"
    );
    let hit = &web.hits()[0];
    assert_eq!(hit.header("x-subscription-token"), Some("brave-key"));
    assert!(!hit.target.contains("brave-key"), "key in the URL");
    assert!(files_mentioning(&env, "brave-key").is_empty());
}

#[test]
fn tavily_takes_its_key_from_the_environment_and_scrubs_it_from_errors() {
    let web = WebFixture::start().unwrap();
    let env = started(serde_json::json!({
        "web": {"search": {"provider": "tavily", "url": format!("{}/tavily/search", web.url())}}
    }));
    let mut cmd = env.synapse();
    cmd.env("TAVILY_API_KEY", "tvly-key").args([
        "exec",
        "--session",
        "good",
        "web_search what is rust --max 3",
    ]);
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.starts_with(
            "Results for \"what is rust\" (tavily):\n\n1. Tavily 1\n   https://tavily.example/1\n   what is rust explained, 1\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("3. Tavily 3"));

    // A wrong key: the API echoes it back, the command does not.
    let mut cmd = env.synapse();
    cmd.env("TAVILY_API_KEY", "tvly-wrong-secret").args([
        "exec",
        "--session",
        "bad",
        "web_search rust",
    ]);
    let r = run(&mut cmd);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stdout.starts_with("web_search: tavily answered 401: "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("[redacted]"), "{}", r.stdout);
    assert!(!r.stdout.contains("tvly-wrong-secret"), "{}", r.stdout);
    assert!(files_mentioning(&env, "tvly-wrong-secret").is_empty());
}

#[test]
fn without_a_provider_the_message_says_how_to_set_one() {
    let env = started(serde_json::json!({}));
    let r = search(&env, "anything");
    assert_eq!(r.code, Some(1));
    let settings = env.home().join("settings.json");
    assert!(
        r.stdout.starts_with(&format!(
            "web_search: no search provider is configured. Add one to {}, for example\n  \
             \"web\": {{\"search\": {{\"provider\": \"searxng\", \"url\": \"http://localhost:8888\"}}}}\n",
            settings.display()
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("(or set BRAVE_API_KEY)") && r.stdout.contains("TAVILY_API_KEY"));

    let brave = started(serde_json::json!({"web": {"search": {"provider": "brave"}}}));
    let r = search(&brave, "anything");
    assert_eq!(
        r.stdout,
        "web_search: brave needs an API key: set \"web\": {\"search\": {\"apiKey\": \"…\"}} in \
         settings.json or the BRAVE_API_KEY environment variable\n[exit code: 1]\n"
    );

    let typo = started(serde_json::json!({"web": {"search": {"provider": "bing"}}}));
    let r = search(&typo, "anything");
    assert!(
        r.stdout.starts_with(
            "web_search: settings.json: web.search.provider: unknown variant `bing`, expected one of"
        ),
        "{}",
        r.stdout
    );
}
