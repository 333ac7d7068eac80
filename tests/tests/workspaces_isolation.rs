//! Issue 40, each project sees only itself: through the real daemon, two projects with different
//! project skills (one of them shadowing a user skill). A session in project B is told, and
//! finds with `skill search` and `tools search`, the user's skills and B's, none of A's, and the
//! user skill keeps its own description there; in A, A's copy answers. A stray marker file in a
//! parent folder makes nothing a project.

use std::path::Path;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv, run};

fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

/// A skill folder with one script (`scripts/<script>.sh`) in `root`.
fn skill(root: &Path, name: &str, description: &str, script: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts").join(format!("{script}.sh")),
        format!("#!/bin/bash\n# {description}\necho {name}\n"),
    )
    .unwrap();
}

fn in_dir(env: &TestEnv, fake: &FakeLlm, cwd: &Path, args: &[&str]) -> Run {
    run(env.synapse_with_model(fake).current_dir(cwd).args(args))
}

const USER_REPORT: &str = "Builds quarterly widget reports the user's way.";
const A_REPORT: &str = "Project A copy, widget reports for alpha.";

#[test]
fn project_b_is_told_and_finds_none_of_project_a_skills() {
    let env = TestEnv::new();
    skill(
        &env.home().join("skills"),
        "report-maker",
        USER_REPORT,
        "make",
    );
    let a = env.root().join("projA");
    let b = env.root().join("projB");
    skill(
        &a.join(".claude/skills"),
        "alpha-widgets",
        "Alpha widget tuning.",
        "tune",
    );
    skill(&a.join(".claude/skills"), "report-maker", A_REPORT, "make");
    skill(
        &b.join(".synapse/skills"),
        "beta-gadgets",
        "Beta widget gadgets.",
        "run",
    );

    let (_rt, fake) = fake(
        Script::new()
            // The run in A.
            .text("done in A")
            // The run in B: a skill search (its sub-agent answers), a tools search, done.
            .tool_call("skill search \"widget reports\"")
            .text("{\"matched_skills\":[{\"name\":\"beta-gadgets\",\"description\":\"x\"}]}")
            .tool_call("tools search widget")
            .text("done in B"),
    );
    let in_a = in_dir(&env, &fake, &a, &["run", "make the widget report"]);
    assert!(in_a.success(), "{in_a:?}");
    let seen = fake.requests().len();
    let in_b = in_dir(&env, &fake, &b, &["run", "make the widget report"]);
    assert!(in_b.success(), "{in_b:?}");
    let requests = fake.requests();

    let prompt_a = requests[0].system_text().unwrap();
    assert!(
        prompt_a.contains(A_REPORT),
        "A's own copy in A:\n{prompt_a}"
    );
    assert!(prompt_a.contains("alpha-widgets"), "{prompt_a}");
    assert!(!prompt_a.contains("beta-gadgets"), "{prompt_a}");

    let b_requests = &requests[seen..];
    assert_eq!(b_requests.len(), 4, "{b_requests:#?}");
    let prompt_b = b_requests[0].system_text().unwrap();
    assert!(prompt_b.contains("beta-gadgets"), "{prompt_b}");
    assert!(
        prompt_b.contains(USER_REPORT),
        "the user skill keeps its own description in B:\n{prompt_b}"
    );
    for leak in ["alpha", "Project A copy", "skill:alpha-widgets"] {
        assert!(
            !prompt_b.contains(leak),
            "{leak:?} in B's prompt:\n{prompt_b}"
        );
    }
    // The search sub-agent was shown B's candidates only.
    let candidates = b_requests[1].system_text().unwrap();
    assert!(candidates.contains("beta-gadgets"), "{candidates}");
    assert!(
        !candidates.contains("alpha") && !candidates.contains("Project A"),
        "{candidates}"
    );
    let searched = b_requests[2].last_tool_result().unwrap();
    assert!(
        searched.contains("<skill name=\"beta-gadgets\">"),
        "{searched}"
    );
    assert!(!searched.contains("alpha"), "{searched}");
    let tools = b_requests[3].last_tool_result().unwrap();
    assert!(tools.contains("skill:beta-gadgets:run"), "{tools}");
    assert!(tools.contains("skill:report-maker:make"), "{tools}");
    assert!(!tools.contains("alpha"), "{tools}");

    // The CLI from B's folder answers the same way.
    let listed = in_dir(&env, &fake, &b, &["skill", "list"]);
    assert!(listed.success(), "{listed:?}");
    assert!(
        !listed.stdout.contains("alpha") && !listed.stdout.contains(&a.display().to_string()),
        "{listed:?}"
    );
    let local = in_dir(
        &env,
        &fake,
        &b,
        &["skill", "search", "widget", "reports", "--local"],
    );
    assert!(local.stdout.contains("report-maker"), "{local:?}");
    assert!(
        !local.stdout.contains("alpha") && !local.stdout.contains("Project A"),
        "{local:?}"
    );
    let shown = in_dir(&env, &fake, &b, &["skill", "show", "report-maker"]);
    assert!(shown.stdout.contains(USER_REPORT), "{shown:?}");
    let tools = in_dir(&env, &fake, &b, &["tools", "search", "alpha"]);
    assert!(!tools.stdout.contains("skill:alpha-widgets"), "{tools:?}");
    // A's command is no command in B's shells.
    let ran = in_dir(&env, &fake, &b, &["exec", "skill:alpha-widgets:tune"]);
    assert_eq!(ran.code, Some(127), "{ran:?}");
}

#[test]
fn a_marker_file_in_a_parent_folder_makes_no_project_of_it() {
    let env = TestEnv::new();
    let parent = env.root().join("parent");
    let (one, two) = (parent.join("one"), parent.join("two"));
    for d in [&one, &two] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("mine.txt"), d.display().to_string()).unwrap();
    }
    // Plain files named like folder markers, and a folder named like the file marker.
    for name in [".synapse", ".claude", ".agents"] {
        std::fs::write(parent.join(name), "stray").unwrap();
    }
    std::fs::create_dir_all(parent.join(".mcp.json")).unwrap();
    let (_rt, fake) = fake(Script::new());
    for d in [&one, &two] {
        let out = in_dir(&env, &fake, d, &["exec", "pwd"]);
        assert!(out.success(), "{out:?}");
    }
    let status = in_dir(&env, &fake, &one, &["daemon", "status", "--json"]);
    assert!(status.success(), "{status:?}");
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let mut roots: Vec<String> = status["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["root"].as_str().unwrap().to_string())
        .collect();
    roots.sort();
    // Each sibling is a workspace of its own; the parent is none.
    assert_eq!(
        roots,
        vec![one.display().to_string(), two.display().to_string()],
        "{status:#}"
    );
}
