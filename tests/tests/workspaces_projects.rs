//! Issue 15, projects: one daemon serving several projects. Skills answer for the caller's
//! project (the user's copy from outside any project); a project's MCP servers run in its root,
//! with `./relative` paths resolved there and `${VAR}` from the opening client's environment.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use synapse_tests::fake_llm::{FakeLlm, Reply, Step};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

fn project_skill(project: &Path, marker: &str, name: &str, body: &str) {
    let dir = project.join(marker).join("skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Project copy. Use for {name}.\n---\n\n{body}\n"),
    )
    .unwrap();
}

fn cli_in(env: &TestEnv, cwd: &Path, args: &[&str]) -> Run {
    run(env.synapse().current_dir(cwd).args(args))
}

#[test]
fn each_project_loads_its_own_skill_and_other_folders_get_the_users() {
    let env = TestEnv::new();
    env.write_skill("dup-skill", "User copy. Use for dup-skill.", "USER BODY");
    let a = env.root().join("projA");
    let b = env.root().join("projB");
    project_skill(&a, ".synapse", "dup-skill", "BODY OF A");
    project_skill(&b, ".claude", "dup-skill", "BODY OF B");
    let a_sub = a.join("src/deep");
    std::fs::create_dir_all(&a_sub).unwrap();
    std::fs::create_dir_all(&b).unwrap();

    let in_a = cli_in(&env, &a_sub, &["skill", "load", "dup-skill"]);
    assert!(in_a.success(), "{in_a:?}");
    assert!(in_a.stdout.contains("BODY OF A"), "{in_a:?}");
    let in_b = cli_in(&env, &b, &["skill", "load", "dup-skill"]);
    assert!(in_b.success(), "{in_b:?}");
    assert!(
        in_b.stdout.contains("BODY OF B") && !in_b.stdout.contains("BODY OF A"),
        "project B never gets A's copy: {in_b:?}"
    );
    // A third folder, after both projects were seen: the user's own copy.
    let third = cli_in(&env, &env.workdir(), &["skill", "load", "dup-skill"]);
    assert!(third.success(), "{third:?}");
    assert!(third.stdout.contains("USER BODY"), "{third:?}");

    // A script of A's skill is a command in A only: `tools search` in B does not offer it.
    let scripts = a.join(".synapse/skills/dup-skill/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(
        scripts.join("only_in_a.sh"),
        "#!/bin/bash\n# Does the thing only project A has.\necho a\n",
    )
    .unwrap();
    wait_until(DEADLINE, "A's script is a command in A", || {
        cli_in(&env, &a_sub, &["tools", "search", "only_in_a"])
            .stdout
            .contains("skill:dup-skill:only_in_a")
    });
    let from_b = cli_in(&env, &b, &["tools", "search", "only_in_a"]);
    assert!(
        !from_b.stdout.contains("skill:dup-skill:only_in_a"),
        "{from_b:?}"
    );
    // It runs in A's shells, from A's own bin folder, and is no command at all in B's.
    let ran = cli_in(&env, &a_sub, &["exec", "skill:dup-skill:only_in_a"]);
    assert_eq!((ran.code, ran.stdout.trim()), (Some(0), "a"), "{ran:?}");
    let in_b = cli_in(&env, &b, &["exec", "skill:dup-skill:only_in_a"]);
    assert_eq!(in_b.code, Some(127), "not a command in project B: {in_b:?}");
    assert!(
        !env.paths()
            .bin_dir()
            .join("skill:dup-skill:only_in_a")
            .exists(),
        "a project's script is not in the user's shared bin folder"
    );
    // Saving a second script reaches A's folder without a restart; deleting it removes it.
    std::fs::write(
        scripts.join("second.sh"),
        "#!/bin/bash\n# Second.\necho two\n",
    )
    .unwrap();
    wait_until(DEADLINE, "the new script runs in A", || {
        cli_in(&env, &a_sub, &["exec", "skill:dup-skill:second"])
            .stdout
            .trim()
            == "two"
    });
    std::fs::remove_file(scripts.join("second.sh")).unwrap();
    wait_until(DEADLINE, "the deleted script is gone from A", || {
        cli_in(&env, &a_sub, &["exec", "skill:dup-skill:second"]).code == Some(127)
    });

    let list_b = cli_in(&env, &b, &["skill", "list", "--json"]);
    let listed = if list_b.success() {
        list_b
    } else {
        cli_in(&env, &b, &["skill", "list"])
    };
    assert!(
        !listed.stdout.contains(&a.display().to_string()),
        "project B's list shows nothing of A: {listed:?}"
    );
}

/// The daemon's inotify watches (every `inotify wd:` line of its inotify fds).
fn inotify_watches(pid: u32) -> usize {
    let dir = format!("/proc/{pid}/fdinfo");
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .map(|info| {
                    info.lines()
                        .filter(|l| l.starts_with("inotify wd:"))
                        .count()
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A daemon left running sees many folders: `skill list` run in forty projects one after the
/// other leaves it watching about what the first sixteen did (the least recently asked are let
/// go; asked again, they come back).
#[test]
fn skill_commands_in_many_projects_leave_the_daemon_watching_a_bounded_set() {
    let env = TestEnv::new();
    let pid = env.start_daemon();
    let list_in = |i: usize| {
        let dir = env.root().join(format!("proj{i}"));
        project_skill(&dir, ".synapse", &format!("skill-{i}"), "BODY");
        let out = cli_in(&env, &dir, &["skill", "list"]);
        assert!(out.success(), "{out:?}");
        assert!(out.stdout.contains(&format!("skill-{i}")), "{out:?}");
    };
    for i in 0..16 {
        list_in(i);
    }
    let mut after_sixteen = 0;
    wait_until(DEADLINE, "the watcher follows the sixteen projects", || {
        after_sixteen = inotify_watches(pid);
        after_sixteen >= 16
    });
    for i in 16..40 {
        list_in(i);
    }
    // Each project asked from adds a few watches (its skills folder and the skill in it, its
    // own folder); twenty-four more must not add even one each.
    wait_until(DEADLINE, "the watches stay bounded", || {
        inotify_watches(pid) < after_sixteen + 24
    });
    // The first project, let go long ago, answers again when asked.
    list_in(0);
}

/// A minimal MCP server (JSON-RPC lines on stdio) whose one tool says where it runs.
const WHERE_SERVER: &str = r#"import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    mid = msg.get("id")
    if mid is None:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "where", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "where", "description": "Says where it runs.",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        text = "cwd=%s greeting=%s" % (os.getcwd(), os.environ.get("GREETING", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid,
                                     "error": {"code": -32601, "message": "unknown method"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
"#;

fn canonical(p: PathBuf) -> String {
    p.canonicalize().unwrap().display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_server_runs_in_its_root_with_the_clients_variables() {
    let env = TestEnv::new();
    let project = env.root().join("proj");
    let sub = project.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(project.join("srv.py"), WHERE_SERVER).unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"where": {
            "command": "python3",
            "args": ["./srv.py"],
            "env": {"GREETING": "${MY_GREETING}"}
        }}})
        .to_string(),
    )
    .unwrap();
    // A project's servers run only once the user trusted its folder.
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    // The daemon starts without the variable: only the client that opens the session has it.
    env.start_daemon();
    // The user approves the server's entry (from the project, with the variable set).
    let mut approve = env.synapse();
    approve
        .current_dir(&project)
        .env("MY_GREETING", "hello-from-the-shell")
        .args(["mcp", "approve", "where"]);
    let approved = Run::from(approve.output().unwrap());
    assert!(approved.success(), "{approved:?}");
    let fake = FakeLlm::start_with(|_| Step::Reply(Reply::new().text("ok")))
        .await
        .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.current_dir(&sub)
        .env("MY_GREETING", "hello-from-the-shell")
        .args(["run", "hi"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = Run::from(tokio::process::Command::from(cmd).output().await.unwrap());
    assert!(out.success(), "{out:?}");

    let mut last = None;
    wait_until(DEADLINE, "the project server to answer", || {
        let r = cli_in(&env, &sub, &["mcp", "call", "where", "where"]);
        let ok = r.success() && r.stdout.contains("greeting=");
        last = Some(r);
        ok
    });
    let r = last.unwrap();
    let root = canonical(project.clone());
    assert!(
        r.stdout.contains(&format!("cwd={root}")),
        "runs in the project root: {r:?}"
    );
    assert!(
        r.stdout.contains("greeting=hello-from-the-shell"),
        "${{VAR}} from the client: {r:?}"
    );
}
