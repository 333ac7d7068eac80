//! Issue 19, what an MCP server may ask of the user while a session's tool call runs, against a
//! real server (npm `server-everything`, over stdio and Streamable HTTP): a form
//! (`elicitation/create`) filled in through the REPL in a real terminal and declined by
//! `synapse run`, a URL-mode request (the page shown in the REPL until the user answers, declined by
//! `synapse run`), and a sampling request (`sampling/createMessage`) that reaches the session's
//! model only once the user allowed it — in the REPL, or in `synapse run` with `--yes`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, run_async, wait_until};

use crate::mcp_support::fixtures_dir;
use crate::repl_support::Screen;

const ELICIT: &str = "mcp:every:trigger-elicitation-request";
const SAMPLE: &str = "mcp:every:trigger-sampling-request --prompt 'name a colour' --maxTokens 50";
/// What server-everything sends the model for SAMPLE.
const SAMPLED_TEXT: &str = "Resource trigger-sampling-request context: name a colour";

fn everything_js() -> std::path::PathBuf {
    fixtures_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// server-everything as the user's server `every`, with this config entry.
fn user_server(env: &TestEnv, entry: Value) {
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"every": entry}}).to_string(),
    )
    .unwrap();
}

fn over_stdio(env: &TestEnv) {
    user_server(
        env,
        json!({"command": "node", "args": [everything_js(), "stdio"]}),
    );
}

/// server-everything serving Streamable HTTP on a free port; killed on drop.
struct HttpEverything {
    child: Child,
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn over_http(env: &TestEnv) -> HttpEverything {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpEverything { child };
    wait_until(DEADLINE, "server-everything listening", || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    user_server(
        env,
        json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}),
    );
    server
}

async fn run_with(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(args);
    run_async(cmd).await
}

fn tool_result(request: &RecordedRequest) -> String {
    request.last_tool_result().unwrap_or_default()
}

/// The sampling request as the model received it: system prompt, messages, token limit, tools.
fn assert_is_the_servers_sampling_request(request: &RecordedRequest) {
    assert_eq!(
        request.system_text().as_deref(),
        Some("You are a helpful test server."),
        "{:?}",
        request.body
    );
    assert_eq!(
        request.last_user_text().as_deref(),
        Some(SAMPLED_TEXT),
        "{:?}",
        request.body
    );
    assert_eq!(request.body["max_tokens"], 50, "{:?}", request.body);
    assert!(request.tools().is_empty(), "{:?}", request.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_filled_in_through_the_repl_and_the_server_gets_the_values() {
    let env = TestEnv::new();
    over_stdio(&env);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(ELICIT)
            .text("Thanks, Ada.")
            .text("Still here."),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("ask me who I am");
    let shown = screen.wait_for("Fill it in?");
    assert!(
        shown.contains("MCP server `every` asks you to fill in a form")
            && shown.contains("Please provide inputs for the following fields:")
            && shown.contains("name*, check, firstLine"),
        "{shown}"
    );
    screen.line("a");
    screen.wait_for("Your full, legal name");
    screen.wait_for("  name>");
    screen.line("Ada Lovelace");
    screen.wait_for("  check>");
    screen.line("y");
    // A default is already typed: Enter keeps it.
    screen.wait_for("  firstLine> It was a dark and stormy night.");
    screen.keys(&["Enter"]);
    // Input that does not fit is asked again, still typed.
    screen.wait_for("  email>");
    screen.line("not-an-email");
    screen.wait_for("expected an email address");
    screen.wait_for_count("  email> not-an-email", 2);
    screen.keys(&["C-u"]);
    screen.line("ada@example.com");
    screen.wait_for("  homepage>");
    screen.keys(&["Enter"]);
    screen.wait_for("  birthdate>");
    screen.line("1815-12-10");
    screen.wait_for("  integer> 42");
    screen.keys(&["C-u"]);
    screen.line("500");
    screen.wait_for("must be at most 100");
    screen.wait_for_count("  integer> 500", 2);
    screen.keys(&["C-u"]);
    screen.line("7");
    // The rest keep their defaults; the choices are listed by number.
    for (field, shown) in [
        ("number", "3.14"),
        ("untitledSingleSelectEnum", "Monica"),
        ("untitledMultipleSelectEnum", "Guitar"),
        ("titledSingleSelectEnum", "Superman"),
        ("titledMultipleSelectEnum", "Tuna"),
        ("legacyTitledEnum", "Cats"),
    ] {
        screen.wait_for(&format!("  {field}> {shown}"));
        screen.keys(&["Enter"]);
    }
    let summary = screen.wait_for("Send?");
    assert!(summary.contains("1) Monica  2) Rachel"), "{summary}");
    assert!(summary.contains("homepage: (empty)"), "{summary}");
    screen.line("y");
    screen.wait_for("sent to every");
    screen.wait_for("Thanks, Ada.");
    let result = tool_result(&fake.requests()[1]);
    for line in [
        "User provided the requested information",
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Email: ada@example.com",
        "- Birthdate: 1815-12-10",
        "- Favorite Integer: 7",
        "- Favorite Number: 3.14",
    ] {
        assert!(result.contains(line), "{line:?} missing from:\n{result}");
    }
    // The REPL goes on as before.
    screen.wait_for("You (2)>");
    screen.line("are you there?");
    screen.wait_for("Still here.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_declined_or_cancelled_in_the_repl_leaves_the_turn_going() {
    let env = TestEnv::new();
    over_stdio(&env);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(ELICIT)
            .tool_call(ELICIT)
            .text("Fine, no details."),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("ask me twice");
    screen.wait_for("Fill it in?");
    screen.line("d");
    screen.wait_for("✗ declined");
    // Ctrl-C in the middle of a form cancels the form, not the turn.
    screen.wait_for_count("Fill it in?", 2);
    screen.line("a");
    screen.wait_for("  name>");
    screen.keys(&["C-c"]);
    screen.wait_for("✗ cancelled");
    screen.wait_for("Fine, no details.");
    let requests = fake.requests();
    let declined = tool_result(&requests[1]);
    assert!(declined.contains("User declined"), "{declined}");
    let cancelled = tool_result(&requests[2]);
    assert!(cancelled.contains("User cancelled"), "{cancelled}");
    screen.wait_for("You (2)>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_declines_a_form_and_says_so() {
    let env = TestEnv::new();
    let _server = over_http(&env);
    let fake = FakeLlm::start(Script::new().tool_call(ELICIT).text("no input then"))
        .await
        .unwrap();
    let out = run_with(
        &env,
        &fake,
        &["run", "ask me", "--output-format", "stream-json"],
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr.contains(
            "declined a form of MCP server every (\"Please provide inputs for the following \
             fields:\"): `synapse run` cannot ask for input"
        ),
        "{out:?}"
    );
    let events: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = events
        .iter()
        .find(|e| e["subtype"] == "elicitation_request")
        .unwrap_or_else(|| panic!("no elicitation_request in {}", out.stdout));
    assert_eq!(asked["server"], "every");
    assert_eq!(asked["schema"]["required"], json!(["name"]));
    assert!(
        events
            .iter()
            .any(|e| e["subtype"] == "elicitation_declined"
                && e["request_id"] == asked["request_id"]),
        "{}",
        out.stdout
    );
    let result = tool_result(&fake.requests()[1]);
    assert!(result.contains("User declined"), "{result}");

    // Outside a session (a plain `synapse mcp call`) nobody can answer either.
    let direct = env.cli(&["mcp", "call", "every", "trigger-elicitation-request"]);
    assert!(direct.stdout.contains("User declined"), "{direct:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_allowed_in_the_repl_reaches_the_sessions_model() {
    let env = TestEnv::new();
    over_stdio(&env);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(SAMPLE)
            .text("Ultramarine.")
            .text("The server heard back."),
    )
    .await
    .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("let the server ask");
    let shown = screen.wait_for("Allow?");
    assert!(
        shown.contains("Let MCP server `every` use the model (sampling)?")
            && shown.contains("max tokens: 50")
            && shown.contains("system prompt: You are a helpful test server.")
            && shown.contains(&format!("user: {SAMPLED_TEXT}")),
        "{shown}"
    );
    // Nothing reaches the model before the user says yes.
    assert_eq!(fake.requests().len(), 1);
    screen.type_text("y");
    screen.wait_for("The server heard back.");
    let requests = fake.requests();
    assert_is_the_servers_sampling_request(&requests[1]);
    let result = tool_result(&requests[2]);
    assert!(
        result.contains("LLM sampling result") && result.contains("Ultramarine."),
        "{result}"
    );
    screen.wait_for("You (2)>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_refuses_sampling_unless_yes() {
    let env = TestEnv::new();
    let _server = over_http(&env);
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(SAMPLE)
            .text("it was refused")
            .tool_call(SAMPLE)
            .text("Vermilion.")
            .text("it went through"),
    )
    .await
    .unwrap();

    let refused = run_with(&env, &fake, &["run", "sample"]).await;
    assert!(refused.success(), "{refused:?}");
    assert!(
        refused.stderr.contains(
            "denied (non-interactive run; --yes allows it): Let MCP server `every` use the model"
        ),
        "{refused:?}"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "the model saw no sampling request");
    let result = tool_result(&requests[1]);
    assert!(
        result.contains("User rejected sampling request") && result.contains("--yes"),
        "{result}"
    );

    let allowed = run_with(&env, &fake, &["run", "sample", "--yes"]).await;
    assert!(allowed.success(), "{allowed:?}");
    assert_eq!(allowed.stdout.trim(), "it went through");
    let requests = fake.requests();
    assert_is_the_servers_sampling_request(&requests[3]);
    let result = tool_result(&requests[4]);
    assert!(result.contains("Vermilion."), "{result}");
}

/// server-everything's URL-mode request (it offers the tool only to a client that declares URL
/// mode).
const OPEN_URL: &str =
    "mcp:every:trigger-url-elicitation --url https://example.com/sign-in --message 'Sign in first'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_request_shows_the_page_in_the_repl_and_waits_for_the_user() {
    let env = TestEnv::new();
    over_stdio(&env);
    let fake = FakeLlm::start(Script::new().tool_call(OPEN_URL).text("Signed in."))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");
    screen.line("sign me in");
    let shown = screen.wait_for("done? [a]ccept");
    assert!(
        shown.contains("MCP server `every` asks you to open a page")
            && shown.contains("Sign in first")
            && shown.contains("https://example.com/sign-in"),
        "{shown}"
    );
    // Nothing is answered for the user: the tool call waits.
    assert!(
        fake.requests().len() == 1,
        "the call went on without the user"
    );
    screen.line("a");
    screen.wait_for("Signed in.");
    let result = tool_result(&fake.requests()[1]);
    assert!(
        result.contains("User completed the URL elicitation flow")
            && result.contains("https://example.com/sign-in"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_declines_a_url_request() {
    let env = TestEnv::new();
    over_stdio(&env);
    let fake = FakeLlm::start(Script::new().tool_call(OPEN_URL).text("not signed in"))
        .await
        .unwrap();
    let out = run_with(&env, &fake, &["run", "sign me in"]).await;
    assert!(out.success(), "{out:?}");
    assert!(out.stderr.contains("declined"), "{out:?}");
    let result = tool_result(&fake.requests()[1]);
    assert!(result.contains("User declined to open the URL"), "{result}");
}
