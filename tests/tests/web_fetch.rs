//! Issue 10 end to end: `web_fetch` through the real `synapse exec` and a real `synapsed`,
//! against the local web fixture on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use synapse_tests::web_fixture::WebFixture;
use synapse_tests::{Run, TestEnv, run};

/// A started daemon whose settings.json holds `web`.
fn started(web: Option<serde_json::Value>) -> TestEnv {
    let env = TestEnv::new();
    if let Some(web) = web {
        std::fs::create_dir_all(env.home()).unwrap();
        let settings = serde_json::json!({ "web": web });
        std::fs::write(env.home().join("settings.json"), settings.to_string()).unwrap();
    }
    env.start_daemon();
    env
}

fn open_env() -> TestEnv {
    started(Some(serde_json::json!({"allowPrivateNetworks": true})))
}

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    run(env.synapse().arg("exec").args(args))
}

fn fetch(env: &TestEnv, what: &str) -> Run {
    exec(env, &[&format!("web_fetch {what}")])
}

#[test]
fn html_json_and_text_are_shown_as_the_model_should_read_them() {
    let web = WebFixture::start().unwrap();
    let env = open_env();
    let base = web.url();

    let page = fetch(&env, &format!("{base}/page.html"));
    assert_eq!(page.code, Some(0), "{page:?}");
    let out = page.stdout;
    assert!(out.starts_with(&format!(
        "URL: {base}/page.html\nStatus: 200 OK · text/html · "
    )));
    assert!(
        out.contains("\nTitle: Fixture Page\n\n# Welcome\n"),
        "{out}"
    );
    assert!(
        out.contains("This page has **bold** words and a [link](https://example.com/doc)."),
        "{out}"
    );
    for gone in ["tracking", "script text", "color: red", "Menu entry"] {
        assert!(!out.contains(gone), "{gone:?} should be dropped: {out}");
    }

    let json = fetch(&env, &format!("{base}/data.json"));
    assert_eq!(json.code, Some(0), "{json:?}");
    assert!(
        json.stdout.contains(
            "\n\n{\n  \"name\": \"synapse\",\n  \"tags\": [\n    \"agent\",\n    \"rust\"\n  ],"
        ),
        "{}",
        json.stdout
    );

    let text = fetch(&env, &format!("{base}/notes.txt"));
    assert_eq!(
        text.stdout,
        format!(
            "URL: {base}/notes.txt\nStatus: 200 OK · text/plain · 36 bytes\n\n\
             line one\n  indented <b>not html</b>\n"
        )
    );

    let raw = fetch(&env, &format!("{base}/page.html --raw --max-chars 40"));
    assert!(
        raw.stdout
            .contains("\n\n<!doctype html>\n<html><head><title>Fixtu\n"),
        "{}",
        raw.stdout
    );
    assert!(raw.stdout.contains("[showing 40 of "), "{}", raw.stdout);

    let missing = fetch(&env, &format!("{base}/missing"));
    assert_eq!(missing.code, Some(1));
    assert!(missing.stdout.contains("Status: 404 Not Found"));
    assert!(missing.stdout.contains("no such page here"));
}

#[test]
fn redirects_are_followed_reported_and_checked() {
    let web = WebFixture::start().unwrap();
    let env = open_env();
    let base = web.url();
    let r = fetch(&env, &format!("{base}/redirect/3"));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.starts_with(&format!(
            "URL: {base}/page.html\nRedirects: 302 {base}/redirect/2 → 301 {base}/redirect/1 \
             → 307 {base}/page.html\nStatus: 200 OK"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("# Welcome"));

    let r = fetch(&env, &format!("{base}/loop"));
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.stdout,
        format!("web_fetch: more than 10 redirects, the last to {base}/loop\n[exit code: 1]\n")
    );
    assert_eq!(web.hits_for("/loop"), 11);

    // Every hop is checked: a redirect may not lead out of http(s).
    let r = fetch(&env, &format!("{base}/to-file"));
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout
            .starts_with("web_fetch: only http:// and https:// URLs can be fetched (got file://)"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_slow_response_times_out_with_the_command() {
    let web = WebFixture::start().unwrap();
    let env = open_env();
    let r = exec(
        &env,
        &["--timeout", "1", &format!("web_fetch {}/slow", web.url())],
    );
    assert_eq!(r.code, Some(124), "{r:?}");
    assert!(
        r.stdout.starts_with(&format!(
            "web_fetch: {}/slow did not finish within 1 s",
            web.url()
        )),
        "{}",
        r.stdout
    );
    // The session is usable at once afterwards.
    assert_eq!(exec(&env, &["echo still here"]).stdout, "still here\n");
}

#[test]
fn a_huge_body_is_cut_at_the_byte_limit() {
    let web = WebFixture::start().unwrap();
    let env = started(Some(serde_json::json!({
        "allowPrivateNetworks": true,
        "fetch": {"maxBytes": 100000}
    })));
    let r = fetch(&env, &format!("{}/huge --max-chars 1000", web.url()));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout
            .contains("Status: 200 OK · text/plain · more than 97.7 KB\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(&format!("\n\n{}\n", "a".repeat(1000))));
    assert!(
        r.stdout.contains(
            "[showing 1000 of 100000 characters; pass --max-chars 100000 to see more]\n\
         [the body was cut after 97.7 KB (the limit, web.fetch.maxBytes); the rest was not read]"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn binary_content_is_refused_with_its_type_and_size() {
    let web = WebFixture::start().unwrap();
    let env = open_env();
    let r = fetch(&env, &format!("{}/image.png", web.url()));
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout.contains(
            "web_fetch: refusing binary content (image/png, 2.0 KB); only HTML, JSON and text"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn loopback_is_refused_by_default_and_allowed_by_setting() {
    let web = WebFixture::start().unwrap();
    let port = web.port();
    let env = started(None);
    for url in [
        format!("http://127.0.0.1:{port}/page.html"),
        format!("http://localhost:{port}/page.html"),
        format!("http://[::ffff:127.0.0.1]:{port}/page.html"),
        format!("http://0.0.0.0:{port}/page.html"),
        format!("127.0.0.1:{port}/page.html"),
    ] {
        let r = fetch(&env, &url);
        assert_eq!(r.code, Some(1), "{url}: {r:?}");
        assert!(
            r.stdout
                .contains("fetching loopback, private and link-local addresses is off")
                && r.stdout.contains("\"allowPrivateNetworks\": true"),
            "{url}: {}",
            r.stdout
        );
    }
    let r = fetch(&env, "file:///etc/passwd");
    assert!(
        r.stdout.contains("only http:// and https:// URLs"),
        "{}",
        r.stdout
    );
    assert!(web.hits().is_empty(), "nothing reached the server");

    let open = open_env();
    let r = fetch(&open, &format!("http://localhost:{port}/page.html"));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(web.hits_for("/page.html"), 1);
}

#[test]
fn a_page_fetched_again_in_the_session_comes_from_the_cache() {
    let web = WebFixture::start().unwrap();
    let env = open_env();
    let url = format!("{}/page.html", web.url());
    let first = fetch(&env, &url);
    let second = fetch(&env, &url);
    assert_eq!(first.code, Some(0));
    assert!(
        second
            .stdout
            .contains("(from this session's cache, fetched "),
        "{}",
        second.stdout
    );
    assert!(second.stdout.contains("# Welcome"));
    assert_eq!(web.hits_for("/page.html"), 1);
    let other = exec(&env, &["--session", "other", &format!("web_fetch {url}")]);
    assert!(!other.stdout.contains("cache"), "{}", other.stdout);
    assert_eq!(web.hits_for("/page.html"), 2);
}

#[test]
fn help_and_usage_errors() {
    let env = started(None);
    let short = exec(&env, &["web_fetch -h"]);
    assert_eq!(
        short.stdout,
        "usage: web_fetch <url> [--raw] [--max-chars N]\nFetch a URL; HTML comes back as Markdown.\n"
    );
    let long = exec(&env, &["web_fetch --help"]);
    assert!(long.stdout.contains("allowPrivateNetworks") && long.stdout.contains("Examples:"));
    let bad = exec(&env, &["web_fetch"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stdout
            .starts_with("web_fetch: missing <url>\nusage: web_fetch")
    );
}
