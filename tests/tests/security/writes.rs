//! No agent command writes outside `SYNAPSE_HOME` and the session's folder: one turn of the
//! scripted model uses every writing agent command (write, edit, todo, web_fetch, task:explore,
//! and the skill sub-agent creating a skill after the turn), legitimately and through every way
//! out it could try (`~`, `..`, an absolute path, a symlink inside the project), with nobody to
//! approve. The user's HOME and a sibling folder are byte-for-byte the same afterwards.

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::json;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::web_fixture::WebFixture;

use super::support::{assert_unchanged, snapshot, synapse_with_llm};

const SKILL_MD: &str = "---
name: tidy-notes
description: Tidies note files. Use when asked to clean up notes.
---

# Tidy notes
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_commands_write_nothing_outside_the_home_and_the_session_folder() {
    let env = TestEnv::new();
    // The fixture runs its own runtime on its own thread: start it off this one.
    let web = tokio::task::spawn_blocking(WebFixture::start)
        .await
        .unwrap()
        .unwrap();
    let (work, user) = (env.workdir(), env.user_home());
    let sibling = env.root().join("sibling");
    fs::create_dir_all(&sibling).unwrap();
    fs::write(sibling.join("keep.txt"), "keep\n").unwrap();
    fs::write(user.join(".bashrc"), "orig\n").unwrap();
    fs::create_dir_all(work.join("notes")).unwrap();
    symlink(&sibling, work.join("out-link")).unwrap();
    fs::create_dir_all(env.home()).unwrap();
    let settings =
        json!({"skillEnhance": {"autoEnhance": true}, "web": {"allowPrivateNetworks": true}});
    fs::write(env.paths().settings_file(), settings.to_string()).unwrap();
    let skills = env.home().join("skills");
    let (user_before, sibling_before) = (snapshot(&user), snapshot(&sibling));

    let ways_out = [
        "write ~/.bashrc pwned".to_string(),
        "write ~/new.txt x".into(),
        "edit ~/.bashrc orig pwned".into(),
        "write ../sibling/evil.txt x".into(),
        "write notes/../../sibling/evil.txt x".into(),
        format!("write {} x", sibling.join("evil.txt").display()),
        "write out-link/evil.txt x".into(),
        "edit out-link/keep.txt keep gone".into(),
    ];
    let mut script = Script::new()
        .tool_call("write notes/a.txt hello")
        .tool_call("edit notes/a.txt hello bye");
    // Each way out is followed by a harmless command: the agent stops after eight failures
    // in a row.
    for command in &ways_out {
        script = script.tool_call(command.clone()).tool_call("todo list");
    }
    let script = script
        .tool_call("todo add \"check the notes\"")
        .tool_call("todo start 1")
        .tool_call("todo done 1")
        .tool_call(format!("web_fetch {}/page.html", web.url()))
        .tool_call("read notes/a.txt")
        .tool_call("glob '**/*.txt'")
        .tool_call("search bye")
        .tool_call("tools search todo")
        .tool_call("task:explore --prompt \"find the notes\" --description notes")
        .text("notes/a.txt is the only note.")
        .text("Done.")
        // After the turn, the skill sub-agent: one skill, and its own tries to get out.
        .tool_call(format!(
            "write {}/tidy-notes/SKILL.md <<'EOF'\n{SKILL_MD}EOF",
            skills.display()
        ))
        .tool_call(format!("cd {}", skills.join("tidy-notes").display()))
        .tool_call("write ~/evil-skill.txt x")
        .tool_call("write -- ../../../sibling/evil-skill.txt x")
        .tool_call("write -../../../../sibling/evil-skill.txt x")
        .tool_call(format!("ln -s {} escape", sibling.display()))
        .tool_call("write escape/evil-skill.txt x")
        .tool_call(format!(
            "write {} x",
            work.join("notes/by-skill-agent.txt").display()
        ))
        .text("Skill enhancement done:\n- Action: created skill\n- Name: tidy-notes");
    let steps = script.len();
    let fake = FakeLlm::start(script).await.unwrap();

    // The temp folder is writable in auto mode; here it must not be the /tmp that holds
    // everything else, so the daemon this run starts gets its own.
    let tmp = env.root().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let vars = [
        ("ANTHROPIC_API_KEY", "k"),
        ("TMPDIR", tmp.to_str().unwrap()),
    ];
    let out = synapse_with_llm(&env, &fake, &["run", "tidy my notes"], &vars).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(fake.remaining_steps(), 0, "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), steps);
    // The result of step i arrives with request i + 1; the ways out are steps 2, 4, 6…
    for (i, command) in ways_out.iter().enumerate() {
        let result = requests[2 * i + 3].last_tool_result().unwrap_or_default();
        assert!(
            result.contains("Permission denied"),
            "{command:?} → {result}"
        );
    }
    // The skill sub-agent's tries: all but the cd and the (native) ln before the last step.
    for i in [steps - 7, steps - 6, steps - 5, steps - 3, steps - 2] {
        let result = requests[i + 1].last_tool_result().unwrap_or_default();
        assert!(
            result.contains("refused"),
            "skill sub-agent step {i}: {result}"
        );
    }

    assert_eq!(fs::read_to_string(work.join("notes/a.txt")).unwrap(), "bye");
    assert!(skills.join("tidy-notes/SKILL.md").is_file());
    assert!(
        skills.join("tidy-notes/escape").is_symlink(),
        "the native ln ran"
    );
    assert_unchanged("the user's HOME", &user_before, &snapshot(&user));
    assert_unchanged("the sibling folder", &sibling_before, &snapshot(&sibling));
    let work_now: Vec<String> = snapshot(&work)
        .into_keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(work_now, ["notes", "notes/a.txt", "out-link"]);
    let mut top: Vec<String> = fs::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["home", "sibling", "tmp", "user", "work"]);
}
