//! Issue 4, skill management through `synapse skill …` and the `Skills` service: load output,
//! path guard, permissions (deny/ask/allow), create/delete/enable/disable, project skills.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;

use synapse_shared::proto::ReadSkillFileRequest;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_tests::TestEnv;

fn skill(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.home().join("skills").join(name);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\n\nFollow {name}.\n"),
    )
    .unwrap();
    fs::write(dir.join("scripts/go.sh"), "# Goes.\n").unwrap();
    dir
}

#[test]
fn load_prints_the_body_and_files_and_refuses_escapes() {
    let env = TestEnv::new();
    let dir = skill(&env, "pdf-editor");
    fs::create_dir_all(dir.join("references")).unwrap();
    fs::write(dir.join("references/REF.md"), "ref").unwrap();
    fs::write(env.root().join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(env.root().join("secret.txt"), dir.join("leak")).unwrap();

    let out = env.cli(&["skill", "load", "pdf-editor"]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout
            .starts_with("# Skill: pdf-editor\n\nFollow pdf-editor.\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("- references/REF.md\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("- scripts/go.sh  (command: skill:pdf-editor:go)"),
        "{}",
        out.stdout
    );

    let out = env.cli(&["skill", "load", "../../etc/passwd"]);
    assert!(!out.success());
    assert!(
        out.stderr.contains("no skill named \"../../etc/passwd\""),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("root:"));
    let out = env.cli(&["skill", "load", "pdf-edit"]);
    assert!(
        out.stderr.contains("did you mean: pdf-editor?"),
        "{}",
        out.stderr
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = SkillsClient::new(env.channel().await);
        for bad in [
            "leak",
            "../../../etc/passwd",
            "/etc/passwd",
            "references/../../x",
        ] {
            let req = ReadSkillFileRequest {
                skill: "pdf-editor".into(),
                path: bad.into(),
            };
            let err = c.read_file(req).await.unwrap_err();
            assert_eq!(err.code(), tonic::Code::PermissionDenied, "{bad}: {err:?}");
            assert!(err.message().contains("outside skill"), "{}", err.message());
        }
        let ok = c.read_file(ReadSkillFileRequest {
            skill: "pdf-editor".into(),
            path: "references/REF.md".into(),
        });
        assert_eq!(ok.await.unwrap().into_inner().content, b"ref");
    });
}

#[test]
fn permissions_deny_ask_allow() {
    let env = TestEnv::new();
    for n in ["open", "risky", "secret"] {
        skill(&env, n);
    }
    fs::create_dir_all(env.home()).unwrap();
    fs::write(
        env.paths().settings_file(),
        r#"{"permissions": {"skill": {"secret": "deny", "ris*": "ask"}}}"#,
    )
    .unwrap();

    let list = env.cli(&["skill", "list"]);
    assert!(list.stdout.contains("user:open "), "{}", list.stdout);
    assert!(
        list.stdout.contains("user:risky") && list.stdout.contains("[ask]"),
        "{}",
        list.stdout
    );
    assert!(!list.stdout.contains("secret"), "{}", list.stdout);
    assert!(!env.home().join("bin/skill:secret:go").exists());
    assert!(
        !env.cli(&["tools", "search", "skill:.*"])
            .stdout
            .contains("secret")
    );

    let out = env.cli(&["skill", "load", "secret"]);
    assert!(
        !out.success() && out.stderr.contains("denied by permissions.skill"),
        "{out:?}"
    );
    // stdin is not a terminal: `ask` is refused unless --yes.
    let out = env.cli(&["skill", "load", "risky"]);
    assert!(
        !out.success() && out.stderr.contains("needs approval"),
        "{out:?}"
    );
    let out = env.cli(&["skill", "load", "risky", "--yes"]);
    assert!(
        out.success() && out.stdout.starts_with("# Skill: risky"),
        "{out:?}"
    );
    assert!(env.cli(&["skill", "load", "open"]).success());
}

#[test]
fn create_disable_enable_delete_and_project_skills() {
    let env = TestEnv::new();
    let out = env.cli(&[
        "skill",
        "create",
        "notes",
        "-d",
        "Keeps \"notes\": $(whoami)",
        "--body",
        "Write notes.",
    ]);
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.starts_with("created user:notes at "),
        "{}",
        out.stdout
    );
    let show = env.cli(&["skill", "show", "notes"]);
    assert!(
        show.stdout.contains("Keeps \"notes\": $(whoami)"),
        "{}",
        show.stdout
    );
    assert!(
        !env.cli(&["skill", "create", "Bad_Name", "-d", "x"])
            .success()
    );

    let go = env.home().join("skills/notes/scripts");
    fs::create_dir_all(&go).unwrap();
    fs::write(go.join("add.sh"), "# Adds a note.\n").unwrap();
    assert!(env.cli(&["tools", "refresh"]).success());
    assert!(env.home().join("bin/skill:notes:add").exists());

    let out = env.cli(&["skill", "disable", "notes"]);
    assert_eq!(out.stdout, "user:notes disabled\n", "{out:?}");
    assert!(!env.home().join("bin/skill:notes:add").exists());
    assert!(env.cli(&["skill", "list"]).stdout.contains("[disabled]"));
    assert!(!env.cli(&["skill", "load", "notes"]).success());
    let settings = fs::read_to_string(env.paths().settings_file()).unwrap();
    assert!(settings.contains("user:notes"), "{settings}");
    env.cli(&["skill", "enable", "user:notes"]);
    assert!(env.home().join("bin/skill:notes:add").exists());

    // A project skill, found from the client's cwd (walking up), shadows the user one.
    let proj = env.workdir().join("proj");
    let nested = proj.join("src/deep");
    fs::create_dir_all(&nested).unwrap();
    let p = proj.join(".claude/skills/notes");
    fs::create_dir_all(&p).unwrap();
    fs::write(
        p.join("SKILL.md"),
        "---\nname: notes\ndescription: Project notes.\n---\nProject body.\n",
    )
    .unwrap();
    let out = synapse_tests::run(
        env.synapse()
            .args(["skill", "show", "notes"])
            .current_dir(&nested),
    );
    assert!(
        out.stdout.contains("(project:notes)") && out.stdout.contains("user:notes"),
        "{}",
        out.stdout
    );
    let out = synapse_tests::run(
        env.synapse()
            .args(["skill", "delete", "project:notes"])
            .current_dir(&nested),
    );
    assert!(
        !out.success() && out.stderr.contains("only user skills can be deleted"),
        "{out:?}"
    );
    // Outside the project, its skill is none of the caller's.
    let out = env.cli(&["skill", "delete", "project:notes"]);
    assert!(
        !out.success() && out.stderr.contains("no skill named"),
        "{out:?}"
    );
    assert!(p.join("SKILL.md").exists());

    let out = env.cli(&["skill", "delete", "user:notes"]);
    assert!(out.success(), "{out:?}");
    assert!(!env.home().join("skills/notes").exists());
    assert!(!env.home().join("bin/skill:notes:add").exists());
}
