//! Issue 39, a prompt the provider's cache keeps, asserted on what the scripted model received
//! from the real daemon: the system prompt and the tool byte-identical on every request of a
//! six-turn session while the skills fitting each new message and a git change reach the model
//! in that turn's own message; the Anthropic cache breakpoints on the newest messages; an MCP
//! server's tool names in the first request; `context_window.used` the largest request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Reply, Script};

use crate::mcp_support::fixtures_dir;

const INVOICES: &str = "Extracts totals and line items from PDF invoices. Use when the user \
                        asks about an invoice or its totals.";
const PHOTOS: &str = "Resizes and crops photographs in bulk. Use when the user wants a smaller \
                      photo or a thumbnail.";
const NOTE_HEAD: &str = "<system-reminder>\nSynapse's note for this turn";

fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

fn age(file: &Path, days: u64) {
    let f = std::fs::File::options().write(true).open(file).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(days * 86_400))
        .unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The text blocks of a request's newest user message.
fn newest_user_blocks(request: &RecordedRequest) -> Vec<String> {
    let message = request
        .messages()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

/// The turn's note in the newest user message ("" when it has none).
fn note(request: &RecordedRequest) -> String {
    newest_user_blocks(request)
        .into_iter()
        .find(|t| t.starts_with(NOTE_HEAD))
        .unwrap_or_default()
}

#[test]
fn six_turns_send_one_system_prompt_and_tool_while_each_turn_message_carries_what_changed() {
    let env = TestEnv::new();
    let work = env.workdir();
    git(&work, &["init", "-q"]);
    std::fs::write(work.join("parser.py"), "print(1)\n").unwrap();
    git(&work, &["add", "parser.py"]);
    git(&work, &["commit", "-q", "-m", "Add the parser"]);
    // 38 newer fillers fill the listing; the two oldest skills fit the messages below.
    age(&env.write_skill("parsing-invoices", INVOICES, "# I\n"), 30);
    age(&env.write_skill("resizing-photos", PHOTOS, "# P\n"), 29);
    for i in 0..38 {
        env.write_skill(
            &format!("filler-{i:02}"),
            &format!(
                "Keeps widget number {i} calibrated on assembly lines through careful \
                 lubrication, torque checking, vibration logging, spare parts ordering."
            ),
            "# F\n",
        );
    }
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("echo looked")
            .text("Looked.")
            .text("Resized.")
            .text("Seen.")
            .text("Fine.")
            .text("Done.")
            .text("Bye."),
    );
    let messages = [
        "What do the totals of the ACME invoice add up to?",
        "Now make that photo smaller, a thumbnail.",
        "I edited the parser, have a look.",
        "Thanks.",
        "Anything else?",
        "Goodbye.",
    ];
    for (i, message) in messages.iter().enumerate() {
        if i == 2 {
            std::fs::write(work.join("parser.py"), "print(2)\n").unwrap();
        }
        let mut args = vec!["run"];
        if i > 0 {
            args.push("--continue");
        }
        args.push(message);
        let out = env.cli_with_model(&fake, &args);
        assert!(out.success(), "turn {i}: {out:?}");
    }
    let requests = fake.requests();
    assert_eq!(requests.len(), 7, "one turn made two requests");
    let (system, tools) = (&requests[0].body["system"], &requests[0].body["tools"]);
    assert!(system.is_array() && tools.is_array());
    for r in &requests {
        assert_eq!(
            &r.body["system"], system,
            "request {} changed the system",
            r.index
        );
        assert_eq!(
            &r.body["tools"], tools,
            "request {} changed the tool",
            r.index
        );
    }
    let system_text = requests[0].system_text().unwrap();
    assert!(!system_text.contains("- parsing-invoices"), "{system_text}");
    assert!(
        system_text.contains("more skills not listed"),
        "{system_text}"
    );
    assert!(
        system_text.contains("- Git repository: yes (branch main, no uncommitted changes)\n"),
        "{system_text}"
    );

    // Turn 1: the user's words first, the fitting skill in the note after them.
    let blocks = newest_user_blocks(&requests[0]);
    assert_eq!(blocks[0], messages[0]);
    let first = note(&requests[0]);
    assert!(first.contains("not the user's words"), "{first}");
    assert!(
        first.contains(&format!("- parsing-invoices: {INVOICES}\n")),
        "{first}"
    );
    assert!(!first.contains("Git now"), "{first}");
    // Turn 2 (request 2): the other skill.
    let second = note(&requests[2]);
    assert!(
        second.contains(&format!("- resizing-photos: {PHOTOS}\n")),
        "{second}"
    );
    assert!(!second.contains("parsing-invoices"), "{second}");
    // Turn 3: the edit made between the turns.
    let third = note(&requests[3]);
    assert!(
        third.contains("Git now (it changed since the session began): branch main, 1 changed file.\nChanged files:\n M parser.py\n"),
        "{third}"
    );
    // Turn 4: nothing fits "Thanks." and git is as the model was last told: no note.
    assert_eq!(note(&requests[4]), "");
    assert_eq!(
        newest_user_blocks(&requests[4]),
        vec!["Thanks.".to_string()]
    );
    // The history is sent as it was: the first turn's note again, byte for byte (the cache
    // marks aside, which move with the newest messages).
    let unmarked = |m: &Value| {
        m.to_string()
            .replace(r#","cache_control":{"type":"ephemeral"}"#, "")
    };
    assert_eq!(
        unmarked(&requests[6].messages()[0]),
        unmarked(&requests[0].messages()[0])
    );
}

#[test]
fn the_newest_messages_carry_the_cache_breakpoints() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(Script::new().tool_call("echo hi").text("Said hi."));
    let out = env.cli_with_model(&fake, &["run", "say hi"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    // The bare first request stays small: it is cached now, but it is sent whole once.
    eprintln!("bare first request: {} bytes", requests[0].body_len);
    assert!(
        requests[0].body_len <= 12 * 1024,
        "{} bytes",
        requests[0].body_len
    );
    let marked = |v: &Value| v["cache_control"] == serde_json::json!({"type": "ephemeral"});
    for r in &requests {
        assert!(marked(&r.body["system"][0]), "{}", r.body);
        assert!(marked(&r.body["tools"][0]), "{}", r.body);
        assert!(r.body.to_string().matches("cache_control").count() <= 4);
    }
    let first = requests[0].messages();
    assert!(marked(
        first[0]["content"].as_array().unwrap().last().unwrap()
    ));
    // The second request: where the first ended (read from the cache), and its newest message.
    let second = requests[1].messages();
    assert_eq!(second.len(), 3);
    assert!(marked(
        second[0]["content"].as_array().unwrap().last().unwrap()
    ));
    assert!(!second[1]["content"].as_array().unwrap().iter().any(&marked));
    assert!(marked(
        second[2]["content"].as_array().unwrap().last().unwrap()
    ));
}

#[test]
fn the_memory_servers_tool_names_are_in_the_first_request() {
    let env = TestEnv::new();
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let add = env.cli(&[
        "mcp",
        "add",
        "memory",
        "--",
        "node",
        &server.display().to_string(),
    ]);
    assert!(add.success(), "{}{}", add.stdout, add.stderr);
    let (_rt, fake) = fake(Script::new().text("ok"));
    let out = env.cli_with_model(&fake, &["run", "What did we decide last time?"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    let servers = &system[system.find("# Connected MCP servers").unwrap()..];
    for tool in [
        "create_entities",
        "create_relations",
        "add_observations",
        "delete_entities",
        "read_graph",
        "search_nodes",
        "open_nodes",
    ] {
        assert!(
            servers.contains(&format!("`mcp:memory:{tool}`")),
            "{tool}: {servers}"
        );
    }
    assert!(
        servers.contains("run `<command> -h` before the first call"),
        "{servers}"
    );
}

#[test]
fn context_window_used_is_the_largest_request_not_the_sum() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(
        Script::new()
            .reply(
                Reply::new()
                    .tool_call("echo one")
                    .usage(1_000, 10)
                    .cache(5_000, 0),
            )
            .reply(
                Reply::new()
                    .tool_call("echo two")
                    .usage(300, 10)
                    .cache(6_000, 100),
            )
            .reply(Reply::new().text("Done.").usage(200, 10).cache(3_000, 0)),
    );
    let out = env.cli_with_model(&fake, &["run", "--output-format", "json", "count"]);
    assert!(out.success(), "{out:?}");
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["context_window"]["used"], 6_400, "{json}");
}
