//! Issue 20, what a Claude Code skill author expects, through the real daemon and REPL: a skill
//! whose SKILL.md does not parse is listed and shown with its error (never silently missing), a
//! shadowed copy shows where it lives, and a user-invocable skill runs as `/<name> args` in the
//! REPL (arguments replace `$ARGUMENTS`), with its `argument-hint` offered by Tab.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::repl_support;

use repl_support::{Screen, after_last};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

#[test]
fn broken_skills_are_listed_and_shown_and_shadowed_copies_say_where_they_are() {
    let env = TestEnv::new();
    let bad = env.home().join("skills/bad-yaml");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n",
    )
    .unwrap();
    env.write_skill("notes", "Keeps notes.", "Write notes.");
    let claude_copy = env.user_home().join(".claude/skills/notes");
    std::fs::create_dir_all(&claude_copy).unwrap();
    std::fs::write(
        claude_copy.join("SKILL.md"),
        "---\nname: notes\ndescription: The Claude copy.\n---\nbody\n",
    )
    .unwrap();

    let list = env.cli(&["skill", "list"]);
    assert!(list.success(), "{}", list.stderr);
    let line = list
        .stdout
        .lines()
        .find(|l| l.starts_with("user:bad-yaml"))
        .unwrap_or_else(|| panic!("broken skill missing from the list:\n{}", list.stdout));
    assert!(line.contains("BROKEN"), "{line}");
    assert!(line.contains("SKILL.md:3"), "{line}");
    assert!(list.stdout.contains("user:notes"), "{}", list.stdout);

    let show = env.cli(&["skill", "show", "bad-yaml"]);
    assert!(show.success(), "{}{}", show.stdout, show.stderr);
    assert!(show.stdout.contains("does not load"), "{}", show.stdout);
    assert!(show.stdout.contains("unclosed"), "{}", show.stdout);

    let show = env.cli(&["skill", "show", "notes"]);
    assert!(show.success(), "{}", show.stderr);
    assert!(
        show.stdout.contains(&claude_copy.display().to_string()),
        "the shadowed copy must show its folder:\n{}",
        show.stdout
    );

    let json = env.cli(&["skill", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let broken = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "user:bad-yaml")
        .unwrap();
    assert!(broken["error"].as_str().unwrap().contains("unclosed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_invocable_skill_runs_as_a_slash_command_with_its_arguments() {
    let env = TestEnv::new();
    let dir = env.home().join("skills/fix-issue");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: fix-issue\ndescription: Fix a tracker issue by number.\n\
         argument-hint: \"[issue-number]\"\n---\n\nRead issue $ARGUMENTS, then fix it.\n",
    )
    .unwrap();
    let quiet = env.home().join("skills/quiet-helper");
    std::fs::create_dir_all(&quiet).unwrap();
    std::fs::write(
        quiet.join("SKILL.md"),
        "---\nname: quiet-helper\ndescription: Only the agent loads it.\n\
         user-invocable: false\n---\n\nbody\n",
    )
    .unwrap();
    let fake = FakeLlm::start(Script::new().text("working on issue 123"))
        .await
        .unwrap();
    let screen = Screen::start(&env, Some(&fake), &["chat"]);
    screen.wait_for("You (1)>");

    screen.type_text("/fix-");
    screen.keys(&["Tab"]);
    screen.wait_until("/fix- completed to /fix-issue", |s| {
        after_last(s, "You (1)>").starts_with("You (1)> /fix-issue")
    });
    screen.type_text(" 123");
    screen.keys(&["Enter"]);
    screen.wait_for("working on issue 123");
    let sent = fake.requests()[0].last_user_text().unwrap();
    assert!(sent.starts_with("/fix-issue 123"), "{sent}");
    assert!(sent.contains("Read issue 123, then fix it."), "{sent}");

    screen.wait_for("You (2)>");
    screen.line("/quiet-helper now");
    screen.wait_for("not user-invocable");
    screen.line("/no-such-thing");
    screen.wait_for("Unknown command: /no-such-thing");
    assert_eq!(fake.requests().len(), 1, "neither line may reach the model");
}

#[test]
fn claude_plugins_load_only_when_enabled_and_their_skills_are_namespaced() {
    let env = TestEnv::new();
    let cache = env.user_home().join(".claude/plugins/cache/market");
    for (plugin, skill) in [("docs", "pdf"), ("off", "secret")] {
        let dir = cache.join(plugin).join("1.0.0/skills").join(skill);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {skill}\ndescription: From the {plugin} plugin.\n---\nbody\n"),
        )
        .unwrap();
        std::fs::write(
            dir.join("scripts/hello.sh"),
            format!("# Says hello.\necho hello from {plugin}\n"),
        )
        .unwrap();
    }
    // The user's own `pdf` stays theirs: the plugin's is `docs:pdf`.
    env.write_skill("pdf", "The user's own PDF skill.", "Mine.");
    std::fs::write(
        env.user_home().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"docs@market": true, "off@market": false}}"#,
    )
    .unwrap();

    let list = env.cli(&["skill", "list"]);
    assert!(list.success(), "{}", list.stderr);
    assert!(list.stdout.contains("plugin:docs:pdf"), "{}", list.stdout);
    assert!(list.stdout.contains("user:pdf"), "{}", list.stdout);
    assert!(
        !list.stdout.contains("secret"),
        "a disabled plugin loaded:\n{}",
        list.stdout
    );

    let show = env.cli(&["skill", "show", "pdf"]);
    assert!(
        show.stdout.contains("The user's own PDF skill."),
        "{}",
        show.stdout
    );
    let load = env.cli(&["skill", "load", "docs:pdf"]);
    assert!(load.success(), "{}", load.stderr);
    assert!(load.stdout.contains("docs:pdf"), "{}", load.stdout);

    let hello = env.cli(&["exec", "skill:docs:pdf:hello"]);
    assert!(hello.success(), "{}{}", hello.stdout, hello.stderr);
    assert!(hello.stdout.contains("hello from docs"), "{}", hello.stdout);

    // Switched off in Claude Code: gone after a refresh, wrapper included.
    std::fs::write(
        env.user_home().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"docs@market": false}}"#,
    )
    .unwrap();
    assert!(env.cli(&["tools", "refresh", "skills"]).success());
    let list = env.cli(&["skill", "list"]);
    assert!(!list.stdout.contains("docs:pdf"), "{}", list.stdout);
    assert!(!env.home().join("bin/skill:docs:pdf:hello").exists());
}

#[test]
fn a_user_only_skill_is_refused_to_the_agent_and_missing_from_its_search() {
    let env = TestEnv::new();
    let dir = env.home().join("skills/deploy-prod");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: deploy-prod\ndescription: Deploys production.\n\
         disable-model-invocation: true\n---\n\nRun the deploy.\n",
    )
    .unwrap();
    env.write_skill("deploy-docs", "Deploys the docs site.", "Build docs.");

    let load = env.cli(&["exec", "skill load deploy-prod"]);
    assert!(
        !load.success(),
        "the agent loaded a user-only skill: {}",
        load.stdout
    );
    assert!(
        load.stdout.contains("/deploy-prod") && load.stdout.contains("disable-model-invocation"),
        "{load:?}"
    );
    let search = env.cli(&["exec", "skill search deploy"]);
    assert!(search.stdout.contains("deploy-docs"), "{search:?}");
    assert!(!search.stdout.contains("deploy-prod"), "{}", search.stdout);
    // The user still loads it from their own terminal.
    let mine = env.cli(&["skill", "load", "deploy-prod"]);
    assert!(mine.success(), "{}", mine.stderr);
    assert!(mine.stdout.contains("Run the deploy."), "{}", mine.stdout);
}

async fn run_ask_mode(env: &TestEnv, fake: &FakeLlm) -> synapse_tests::Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.args(["run", "--permission-mode", "ask", "do the task"]);
    synapse_tests::run_async(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_skills_allowed_tools_are_pre_approved_for_the_session() {
    let env = TestEnv::new();
    let dir = env.home().join("skills/stamper");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: stamper\ndescription: Stamps files.\n\
         allowed-tools: Bash(touch:*), Bash, Teleport\n---\n\nTouch the stamp.\n",
    )
    .unwrap();
    // The user approves the list as the skill is now (a list nobody approved counts for nothing:
    // see security::skill_grants).
    let approved = env.cli(&["skill", "approve", "stamper"]);
    assert!(approved.success(), "{approved:?}");
    assert!(
        approved.stdout.contains("touch:*") && approved.stdout.contains("inside the sandbox only"),
        "{}",
        approved.stdout
    );
    // Without the skill: `touch` asks, and a non-interactive run refuses.
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("touch before-load")
            .tool_call("skill load stamper")
            .tool_call("touch after-load")
            .tool_call("rm -f after-load")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_ask_mode(&env, &fake).await;
    assert!(out.success(), "{out:?}");
    assert!(!env.workdir().join("before-load").exists());
    let loaded = fake.requests()[2].last_tool_result().unwrap();
    assert!(
        loaded.contains(
            "Pre-approved for this session by the skill's allowed-tools, inside the sandbox only: touch:*"
        ),
        "{loaded}"
    );
    assert!(
        loaded.contains("Bash: would allow every command"),
        "{loaded}"
    );
    assert!(env.workdir().join("after-load").exists(), "{out:?}");
    // Only what the skill named: `rm` still asks (and is refused here).
    let rm = fake.requests()[4].last_tool_result().unwrap();
    assert!(rm.contains("Permission denied"), "{rm}");
    assert!(env.workdir().join("after-load").exists());
}
