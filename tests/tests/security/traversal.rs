//! Path traversal on every RPC that takes a path or a name that becomes one: `Skills.ReadFile`,
//! `Show`, `Load`, `Create`, `Delete`, `SetEnabled`, `Versions`, `Rollback`, `Evaluate`,
//! `Sessions.Get`, a resumed chat and `Tools.Exec` session names — with `../`, absolute paths,
//! NUL bytes and symlinks leading out of the skill folder. Each gets an error that names what was
//! refused, and the folders outside `SYNAPSE_HOME` are byte-for-byte unchanged.

use std::fs;
use std::os::unix::fs::symlink;

use synapse_shared::proto::sessions_client::SessionsClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::tools_client::ToolsClient;
use synapse_shared::proto::*;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};
use tonic::Code;

use super::support::{assert_unchanged, snapshot, synapse_with_llm};

const SECRET: &str = "TOP SECRET";

/// Fails unless `result` is an error with one of `codes` whose message quotes `input`.
fn refused<T: std::fmt::Debug>(
    what: &str,
    input: &str,
    result: Result<T, tonic::Status>,
    codes: &[Code],
) {
    let err = match result {
        Ok(ok) => panic!("{what}({input:?}) was accepted: {ok:?}"),
        Err(e) => e,
    };
    assert!(codes.contains(&err.code()), "{what}({input:?}): {err:?}");
    let shown = input.split('\0').next().unwrap_or_default();
    assert!(
        err.message().contains(shown) || err.message().contains(&format!("{input:?}")),
        "{what}({input:?}) does not say what was refused: {}",
        err.message()
    );
    assert!(
        !err.message().contains(SECRET),
        "{what}({input:?}) leaked: {}",
        err.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_taking_rpc_refuses_paths_out_of_its_folder() {
    let env = TestEnv::new();
    let root = env.root().to_path_buf();
    // Outside SYNAPSE_HOME: a secret, a folder of secrets, and a skill folder linked in.
    let outside = root.join("outside");
    fs::create_dir_all(outside.join("secrets")).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(
        outside.join("secret.jsonl"),
        format!("{{\"type\":\"header\",\"x\":\"{SECRET}\"}}\n"),
    )
    .unwrap();
    fs::write(outside.join("secrets/key.txt"), SECRET).unwrap();
    fs::create_dir_all(outside.join("linked-skill")).unwrap();
    fs::write(
        outside.join("linked-skill/SKILL.md"),
        "---\nname: linked\ndescription: A skill folder that is a symlink.\n---\n# Linked\n",
    )
    .unwrap();
    let skills = env.home().join("skills");
    let pdf = skills.join("pdf");
    fs::create_dir_all(&pdf).unwrap();
    fs::write(
        pdf.join("SKILL.md"),
        "---\nname: pdf\ndescription: Edits PDFs.\n---\n# PDF\n",
    )
    .unwrap();
    symlink(outside.join("secrets"), pdf.join("refs")).unwrap();
    symlink(outside.join("secret.txt"), pdf.join("notes.md")).unwrap();
    symlink(outside.join("linked-skill"), skills.join("linked")).unwrap();
    symlink(
        outside.join("created-through-link"),
        skills.join("dangling"),
    )
    .unwrap();
    env.start_daemon();
    let before = snapshot(&outside);

    let mut skills_rpc = SkillsClient::new(env.channel().await);
    for path in [
        "refs/key.txt",
        "notes.md",
        "./refs/../../secret.txt",
        "../../../outside/secret.txt",
        "/etc/passwd",
        "refs",
        "a\0b",
    ] {
        let r = skills_rpc
            .read_file(ReadSkillFileRequest {
                skill: "pdf".into(),
                path: path.into(),
            })
            .await;
        refused(
            "ReadFile",
            path,
            r,
            &[
                Code::PermissionDenied,
                Code::Internal,
                Code::InvalidArgument,
            ],
        );
    }
    let names = [
        "../pdf",
        "../../outside/linked-skill",
        "/etc",
        "pdf/../../x",
        "..",
        ".",
        "",
        "pdf\0",
    ];
    for name in names {
        let r = skills_rpc
            .read_file(ReadSkillFileRequest {
                skill: name.into(),
                path: "SKILL.md".into(),
            })
            .await;
        refused(
            "ReadFile skill",
            name,
            r,
            &[Code::NotFound, Code::InvalidArgument],
        );
        let r = skills_rpc
            .show(ShowSkillRequest {
                name: name.into(),
                cwd: String::new(),
            })
            .await;
        refused("Show", name, r, &[Code::NotFound, Code::InvalidArgument]);
        let r = skills_rpc
            .load(LoadSkillRequest {
                name: name.into(),
                cwd: String::new(),
                approve: true,
            })
            .await;
        refused("Load", name, r, &[Code::NotFound, Code::InvalidArgument]);
        let r = skills_rpc
            .delete(DeleteSkillRequest {
                name: name.into(),
                ..Default::default()
            })
            .await;
        refused("Delete", name, r, &[Code::NotFound, Code::InvalidArgument]);
        let r = skills_rpc
            .set_enabled(SetSkillEnabledRequest {
                name: name.into(),
                enabled: false,
                ..Default::default()
            })
            .await;
        refused(
            "SetEnabled",
            name,
            r,
            &[Code::NotFound, Code::InvalidArgument],
        );
        let r = skills_rpc
            .versions(SkillVersionsRequest { name: name.into() })
            .await;
        refused("Versions", name, r, &[Code::InvalidArgument]);
        let r = skills_rpc
            .rollback(RollbackSkillRequest {
                name: name.into(),
                version: 0,
            })
            .await;
        refused(
            "Rollback",
            name,
            r,
            &[Code::FailedPrecondition, Code::InvalidArgument],
        );
        let r = skills_rpc
            .evaluate(EvaluateSkillRequest {
                name: name.into(),
                cwd: root.display().to_string(),
                env: Default::default(),
            })
            .await;
        refused(
            "Evaluate",
            name,
            r,
            &[Code::NotFound, Code::InvalidArgument],
        );
    }
    for name in [
        "../evil",
        "/tmp/evil",
        "a/b",
        "..",
        "evil\n",
        "linked",
        "dangling",
    ] {
        let r = skills_rpc
            .create(CreateSkillRequest {
                name: name.into(),
                description: "Evil.".into(),
                body: String::new(),
            })
            .await;
        refused(
            "Create",
            name,
            r,
            &[Code::InvalidArgument, Code::AlreadyExists, Code::Internal],
        );
    }
    // Deleting the linked skill removes the link, never what it points to.
    let r = skills_rpc
        .delete(DeleteSkillRequest {
            name: "linked".into(),
            ..Default::default()
        })
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(fs::symlink_metadata(skills.join("linked")).is_err());
    let r = skills_rpc
        .rollback(RollbackSkillRequest {
            name: "pdf".into(),
            version: 0,
        })
        .await;
    assert!(r.is_err(), "no versions to roll back to: {r:?}");

    let mut sessions_rpc = SessionsClient::new(env.channel().await);
    for id in [
        "../secret",
        "../../outside/secret",
        "/etc/passwd",
        "a/../b",
        "..",
        "x\0",
    ] {
        let r = sessions_rpc.get(GetSessionRequest { id: id.into() }).await;
        refused("Sessions.Get", id, r, &[Code::InvalidArgument]);
    }

    // Tools.Exec session names become file names (todo lists, the conversation the skill
    // sub-agent reads): one that leaves the sessions folder is refused before anything runs.
    let fake = FakeLlm::start(Script::new().text("nothing to learn"))
        .await
        .unwrap();
    let mut tools_rpc = ToolsClient::new(env.channel().await);
    for session in ["../../outside/secret", "/tmp/x", "a/b", ".hidden", "x\0y"] {
        let r = tools_rpc
            .exec(ExecRequest {
                session: session.into(),
                command: "task:skill:enhance --prompt learn --description learn".into(),
                cwd: env.workdir().display().to_string(),
                env: [
                    ("ANTHROPIC_BASE_URL".to_string(), fake.anthropic_base_url()),
                    ("ANTHROPIC_API_KEY".into(), "k".into()),
                ]
                .into(),
                ..Default::default()
            })
            .await;
        refused("Tools.Exec session", session, r, &[Code::InvalidArgument]);
    }
    let leaked = fake
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains(SECRET));
    assert!(!leaked, "a secret reached the model");

    for id in ["../secret", "../../outside/secret"] {
        let out = synapse_with_llm(&env, &fake, &["run", "--resume", id, "hi"], &[]).await;
        assert!(!out.success(), "{out:?}");
        assert!(out.stderr.contains(id), "{}", out.stderr);
    }
    assert_unchanged(
        "the folder outside SYNAPSE_HOME",
        &before,
        &snapshot(&outside),
    );
    assert!(!outside.join("created-through-link").exists());
}
