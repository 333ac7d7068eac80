//! Issue 38, Claude Code plugins unchanged in Synapse: a local marketplace of our own small
//! plugin (a command with a `!` line and `$ARGUMENTS`, an agent, a skill, a Python PreToolUse
//! guard importing its own package from `${CLAUDE_PLUGIN_ROOT}`, a Stop hook, an MCP server),
//! installed by the REAL Claude Code (`claude plugin marketplace add` + `claude plugin install`)
//! and used through the real daemon and the scripted model; and the same installed by
//! `synapse plugin …`, which `claude plugin list` then shows, with a disable/enable/update round
//! trip and a broken plugin named without hiding the good one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::mcp_support::{fixtures_dir, venv_python};
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run, wait_until};

const MARKET: &str = "kit-market";
pub(crate) const KEY: &str = "kit@kit-market";

pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Our marketplace at `<root>/market` with the plugin `kit` at `version`; returns the plugin's
/// folder.
pub(crate) fn marketplace(env: &TestEnv, version: &str) -> PathBuf {
    marketplace_in(env.root(), version)
}

/// Our marketplace at `<dir>/market` with the plugin `kit` at `version`; returns the plugin's
/// folder.
pub(crate) fn marketplace_in(dir: &Path, version: &str) -> PathBuf {
    let market = dir.join("market");
    write(
        &market.join(".claude-plugin/marketplace.json"),
        &format!(
            r#"{{"name":"{MARKET}","owner":{{"name":"Synapse tests"}},"plugins":[{{"name":"kit","source":"./plugins/kit","description":"test kit"}}]}}"#
        ),
    );
    let kit = market.join("plugins/kit");
    write(
        &kit.join(".claude-plugin/plugin.json"),
        &format!(r#"{{"name":"kit","version":"{version}","description":"test kit"}}"#),
    );
    write(
        &kit.join("commands/greet.md"),
        "---\ndescription: Greets someone\nallowed-tools: Bash(printf:*)\n---\n\
         Greet $ARGUMENTS warmly. Shell says: !`printf kit-bang-ran`\n",
    );
    write(
        &kit.join("agents/helper.md"),
        "---\nname: helper\ndescription: Helps with kit chores (kit-agent-marker).\n---\n\
         You are the kit helper agent.\n",
    );
    write(
        &kit.join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Takes kit notes. Use when the user asks for kit-skill-marker.\n---\nWrite notes.\n",
    );
    // Named by a title, as several published plugins' skills are: Claude Code names it by its
    // folder (`kit:titled`).
    write(
        &kit.join("skills/titled/SKILL.md"),
        "---\nname: Kit Titled Notes\ndescription: Files titled notes. Use when the user asks for kit-title-marker.\n---\nFile them.\n",
    );
    write(&kit.join("kitguard/__init__.py"), "");
    write(
        &kit.join("kitguard/rules.py"),
        "def blocked(command):\n    return 'rm -rf' in command\n",
    );
    write(
        &kit.join("hooks/guard.py"),
        "import json, os, sys\n\
         sys.path.insert(0, os.environ['CLAUDE_PLUGIN_ROOT'])\n\
         from kitguard.rules import blocked\n\
         event = json.load(sys.stdin)\n\
         if blocked(event.get('tool_input', {}).get('command', '')):\n\
         \x20   print('kitguard: rm -rf is blocked', file=sys.stderr)\n\
         \x20   sys.exit(2)\n",
    );
    write(
        &kit.join("hooks/stop.py"),
        "import json, os, sys\n\
         event = json.load(sys.stdin)\n\
         data = os.environ['CLAUDE_PLUGIN_DATA']\n\
         last = None\n\
         for line in open(event['transcript_path']):\n\
         \x20   entry = json.loads(line)\n\
         \x20   if entry.get('type') == 'assistant':\n\
         \x20       texts = [c['text'] for c in entry['message']['content'] if c.get('type') == 'text']\n\
         \x20       last = texts[-1] if texts else last\n\
         seen = {'event': event.get('hook_event_name'), 'root': os.environ['CLAUDE_PLUGIN_ROOT'],\n\
         \x20       'project': os.environ.get('CLAUDE_PROJECT_DIR'), 'last': last}\n\
         open(os.path.join(data, 'stop.json'), 'w').write(json.dumps(seen))\n",
    );
    write(
        &kit.join("hooks/hooks.json"),
        r#"{"hooks":{
            "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\""}]}],
            "Stop":[{"hooks":[{"type":"command","command":"python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/stop.py\""}]}]
        }}"#,
    );
    write(
        &kit.join("server.py"),
        "from mcp.server.mcpserver import MCPServer\n\
         server = MCPServer('kit-tools')\n\
         @server.tool()\n\
         def shout(text: str) -> str:\n\
         \x20   \"\"\"Upper-case the text.\"\"\"\n\
         \x20   return text.upper()\n\
         server.run('stdio')\n",
    );
    write(
        &kit.join(".mcp.json"),
        &serde_json::json!({"mcpServers": {"tools": {
            "command": venv_python().display().to_string(),
            "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"],
        }}})
        .to_string(),
    );
    kit
}

/// The real Claude Code with this installation's HOME, offline.
fn claude(env: &TestEnv, args: &[&str]) -> Run {
    let bin = fixtures_dir().join("node_modules/.bin/claude");
    assert!(
        bin.exists(),
        "{} is missing: run tests/fixtures/install.sh",
        bin.display()
    );
    let mut cmd = Command::new(bin);
    env.apply_env(&mut cmd);
    cmd.env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args(args);
    run(&mut cmd)
}

fn run_prompt(env: &TestEnv, fake: &FakeLlm, prompt: &str) -> Run {
    run(env.synapse_with_model(fake).args(["run", prompt]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_installed_by_claude_code_works_in_synapse() {
    let env = TestEnv::new();
    let kit = marketplace(&env, "1.0.0");
    let market = env.root().join("market");
    let added = claude(
        &env,
        &["plugin", "marketplace", "add", market.to_str().unwrap()],
    );
    assert!(added.success(), "{added:?}");
    let installed = claude(&env, &["plugin", "install", KEY]);
    assert!(installed.success(), "{installed:?}");
    let victim = env.workdir().join("victim");
    std::fs::create_dir_all(&victim).unwrap();

    let fake = FakeLlm::start(
        Script::new()
            // 1: the command's expansion reaches the model.
            .text("greeted")
            // 2: the agent runs.
            .tool_call("task:kit:helper --prompt 'tidy up' --description chores")
            .text("tidied")
            .text("the helper is done")
            // 3: the guard blocks.
            .tool_call(format!("rm -rf {}", victim.display()))
            .text("blocked, fine")
            // 4: after approval the MCP tool is offered and runs.
            .tool_call("mcp:plugin_kit_tools:shout --text hey")
            .text("shouted"),
    )
    .await
    .unwrap();

    let out = run_prompt(&env, &fake, "/kit:greet Ann");
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    // The user's words come first; the turn's environment note (issue 39) may follow them.
    let sent = requests[0].last_user_text().unwrap();
    let words = sent.split("<system-reminder>").next().unwrap_or_default();
    assert_eq!(
        words,
        "/kit:greet Ann\n\nGreet Ann warmly. Shell says: kit-bang-ran"
    );
    let system = requests[0].system_text().unwrap();
    assert!(
        system.contains("task:kit:helper"),
        "the agent is listed: {system}"
    );
    assert!(
        system.contains("kit:notes"),
        "the skill is listed: {system}"
    );
    assert!(
        system.contains("kit:titled"),
        "the title-named skill is listed by its folder: {system}"
    );

    // An unknown command of the plugin is a notice, not text for the model.
    let out = run_prompt(&env, &fake, "/kit:nope now");
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr
            .contains("the plugin `kit` has no command `nope` (its commands are /kit:greet)"),
        "{}",
        out.stderr
    );
    assert_eq!(fake.requests().len(), 1);

    let out = run_prompt(&env, &fake, "get the chores done");
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let sub = requests[2].system_text().unwrap();
    assert!(sub.starts_with("You are the kit helper agent."), "{sub}");
    assert!(
        requests[3].last_tool_result().unwrap().contains("tidied"),
        "{:?}",
        requests[3].last_tool_result()
    );

    // The Stop hook ran with the folders Claude Code gives it, and read the model's last words
    // from the transcript the way Claude Code documents it (`.message.content`).
    let stop = env
        .user_home()
        .join(".claude/plugins/data/kit-kit-market/stop.json");
    let read_stop = || -> serde_json::Value {
        std::fs::read_to_string(&stop)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    };
    wait_until(Duration::from_secs(20), "the Stop hook's file", || {
        read_stop()["last"] == "the helper is done"
    });
    let seen = read_stop();
    assert_eq!(seen["event"], "Stop");
    assert_eq!(
        seen["root"],
        kit.canonicalize().unwrap().display().to_string(),
        "CLAUDE_PLUGIN_ROOT is where Claude Code reads a local marketplace's plugin from"
    );

    let out = run_prompt(&env, &fake, "clean up");
    assert!(out.success(), "{out:?}");
    assert!(victim.is_dir(), "the guard did not block `rm -rf`");
    let result = fake.requests()[5].last_tool_result().unwrap();
    assert!(result.contains("kitguard: rm -rf is blocked"), "{result}");
    assert!(!result.contains("import error"), "{result}");

    // The plugin's MCP server waits for approval like any other, then is offered.
    let list = env.cli(&["mcp", "list"]);
    assert!(
        list.stdout.contains("plugin_kit_tools") && list.stdout.contains("needs approval"),
        "{list:?}"
    );
    let approved = env.cli(&["mcp", "approve", "plugin_kit_tools"]);
    assert!(approved.success(), "{approved:?}");
    assert!(
        approved.stdout.contains("Approved: plugin_kit_tools"),
        "{approved:?}"
    );
    let out = run_prompt(&env, &fake, "shout hey");
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let system = requests[6].system_text().unwrap();
    assert!(system.contains("- plugin_kit_tools (1 tool)"), "{system}");
    assert!(
        requests[7].last_tool_result().unwrap().contains("HEY"),
        "{:?}",
        requests[7].last_tool_result()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synapse_installs_what_claude_code_then_lists_and_round_trips_it() {
    let env = TestEnv::new();
    marketplace(&env, "1.0.0");
    let added = env.cli(&["plugin", "marketplace", "add", "../market"]);
    assert!(added.success(), "{added:?}");
    assert!(
        added.stdout.contains("Added marketplace kit-market"),
        "{added:?}"
    );
    let installed = env.cli(&["plugin", "install", KEY]);
    assert!(installed.success(), "{installed:?}");
    assert!(
        installed.stdout.contains("Installed kit@kit-market 1.0.0"),
        "{installed:?}"
    );

    let theirs = claude(&env, &["plugin", "list"]);
    assert!(theirs.success(), "{theirs:?}");
    assert!(theirs.stdout.contains(KEY), "{theirs:?}");
    assert!(theirs.stdout.contains("Version: 1.0.0"), "{theirs:?}");
    assert!(theirs.stdout.contains("enabled"), "{theirs:?}");

    let ours = env.cli(&["plugin", "list"]);
    assert!(ours.success(), "{ours:?}");
    assert!(
        ours.stdout.contains("kit@kit-market 1.0.0 (enabled)"),
        "{ours:?}"
    );
    assert!(ours.stdout.contains("commands: /kit:greet"), "{ours:?}");
    assert!(ours.stdout.contains("agents: task:kit:helper"), "{ours:?}");
    assert!(
        ours.stdout.contains("skills: kit:notes, kit:titled"),
        "{ours:?}"
    );
    assert!(ours.stdout.contains("hooks: PreToolUse, Stop"), "{ours:?}");
    assert!(ours.stdout.contains("mcp servers: tools"), "{ours:?}");

    // Disabled: Claude Code sees it too, and its commands are a notice.
    assert!(env.cli(&["plugin", "disable", KEY]).success());
    let theirs = claude(&env, &["plugin", "list"]);
    assert!(theirs.stdout.contains("disabled"), "{theirs:?}");
    let fake = FakeLlm::start(Script::new().text("greeted")).await.unwrap();
    let out = run_prompt(&env, &fake, "/kit:greet Bo");
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr.contains(
            "the plugin `kit` is disabled; enable it with `synapse plugin enable kit@kit-market`"
        ),
        "{}",
        out.stderr
    );
    assert!(env.cli(&["plugin", "enable", KEY]).success());
    let out = run_prompt(&env, &fake, "/kit:greet Bo");
    assert!(out.success(), "{out:?}");

    // Update to the marketplace's new version; both programs see it.
    marketplace(&env, "1.1.0");
    let updated = env.cli(&["plugin", "update", KEY]);
    assert!(updated.success(), "{updated:?}");
    assert_eq!(
        updated.stdout.trim(),
        "Updated kit@kit-market from 1.0.0 to 1.1.0"
    );
    assert!(
        env.user_home()
            .join(".claude/plugins/cache/kit-market/kit/1.1.0/commands/greet.md")
            .is_file()
    );
    let theirs = claude(&env, &["plugin", "list"]);
    assert!(theirs.stdout.contains("Version: 1.1.0"), "{theirs:?}");

    // A broken install is named; the good plugin still lists and works.
    let records = env
        .user_home()
        .join(".claude/plugins/installed_plugins.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&records).unwrap()).unwrap();
    doc["plugins"]["gone@kit-market"] =
        serde_json::json!([{"scope": "user", "installPath": "/nonexistent/gone", "version": "1"}]);
    std::fs::write(&records, doc.to_string()).unwrap();
    let ours = env.cli(&["plugin", "list"]);
    assert!(!ours.success(), "{ours:?}");
    assert!(
        ours.stdout
            .contains("BROKEN: gone@kit-market: its files are missing"),
        "{ours:?}"
    );
    assert!(
        ours.stdout.contains("kit@kit-market 1.1.0 (enabled)"),
        "{ours:?}"
    );

    let bad = env.cli(&["plugin", "install", "nothing@kit-market"]);
    assert!(!bad.success());
    assert!(
        bad.stderr.contains("has no plugin `nothing` (it has: kit)"),
        "{bad:?}"
    );
}
