use super::*;
use std::sync::Arc;

/// The verdict of `gate` on a native line run in `cwd`.
async fn native(gate: &GateHandle, cwd: &str, command: &str) -> GateVerdict {
    let info = GateInfo {
        cwd: Path::new(cwd),
        is_session_pid: &|_| false,
        sandboxed: false,
        shell_pid: None,
        call_seq: 1,
        hook: Default::default(),
    };
    gate.0.check(GateAction::Native { command }, info).await
}

async fn agent(gate: &GateHandle, name: &str, effect: synapse_permissions::Effect) -> GateVerdict {
    let info = GateInfo {
        cwd: Path::new("/w"),
        is_session_pid: &|_| false,
        sandboxed: false,
        shell_pid: None,
        call_seq: 1,
        hook: Default::default(),
    };
    gate.0
        .check(
            GateAction::Agent {
                name,
                args: &[],
                command: name,
                effect,
            },
            info,
        )
        .await
}

fn refused(v: &GateVerdict) -> bool {
    matches!(v, GateVerdict::Refuse(_))
}

#[tokio::test]
async fn no_sub_agent_starts_another_wherever_task_hides_in_the_line() {
    let g = PolicyGate::handle(SubAgentPolicy::General, None, "/home/u".into());
    for line in [
        "task:general --prompt x",
        "ls; task:explore --prompt y",
        "echo $(task:general --prompt z)",
        "bash -c 'task:general --prompt w'",
    ] {
        assert!(refused(&native(&g, "/w", line).await), "{line}");
    }
    assert_eq!(
        native(&g, "/w", "echo task:general").await,
        GateVerdict::Run
    );
    assert!(refused(
        &agent(&g, "task:general", synapse_permissions::Effect::Other).await
    ));
}

#[tokio::test]
async fn read_only_runs_what_reads_and_refuses_what_writes_however_it_is_written() {
    let g = PolicyGate::handle(SubAgentPolicy::ReadOnly, None, "/home/u".into());
    for line in [
        "grep -r foo . 2>/dev/null",
        "ls -la | head",
        "cat a.txt",
        "echo '>'",
    ] {
        assert_eq!(native(&g, "/w", line).await, GateVerdict::Run, "{line}");
    }
    for line in [
        "echo hi > a.txt",
        "ls; rm x",
        "ls;rm x",
        "echo $(rm -rf x)",
        "bash -c 'rm x'",
        "find . -delete",
        "xargs rm < list",
        "eval \"$CMD\"",
    ] {
        assert!(refused(&native(&g, "/w", line).await), "{line}");
    }
    let write = synapse_permissions::Effect::Writes(vec!["/w/a.txt".into()]);
    assert!(refused(&agent(&g, "write", write).await));
    assert_eq!(
        agent(&g, "read", synapse_permissions::Effect::ReadOnly).await,
        GateVerdict::Run
    );
}

#[tokio::test]
async fn the_skill_author_writes_only_below_the_skills_folder() {
    let root = tempfile::tempdir().unwrap();
    let skills = root.path().canonicalize().unwrap();
    let g = PolicyGate::handle(
        SubAgentPolicy::SkillAuthor {
            root: skills.clone(),
        },
        None,
        "/home/u".into(),
    );
    let inside = synapse_permissions::Effect::Writes(vec![skills.join("a/SKILL.md")]);
    assert_eq!(agent(&g, "write", inside).await, GateVerdict::Run);
    let outside = synapse_permissions::Effect::Writes(vec!["/home/u/.bashrc".into()]);
    assert!(refused(&agent(&g, "write", outside).await));
    let cwd = skills.join("a");
    let cwd = cwd.to_str().unwrap();
    assert_eq!(
        native(&g, cwd, "echo x > notes.txt").await,
        GateVerdict::Run
    );
    assert!(refused(&native(&g, cwd, "echo x > ../../escape.txt").await));
    assert!(refused(&native(&g, cwd, "echo x > ~/.bashrc").await));
}

/// A gate that refuses everything: proves the policy asks the inherited gate after itself.
struct Never;
impl CommandGate for Never {
    fn check<'a>(&'a self, _: GateAction<'a>, _: GateInfo<'a>) -> BoxFuture<'a, GateVerdict> {
        Box::pin(async { GateVerdict::Refuse("inner".into()) })
    }
}

#[tokio::test]
async fn the_inherited_gate_has_the_last_word() {
    let g = PolicyGate::handle(
        SubAgentPolicy::General,
        Some(GateHandle(Arc::new(Never))),
        "/home/u".into(),
    );
    assert_eq!(
        native(&g, "/w", "ls").await,
        GateVerdict::Refuse("inner".into())
    );
}

#[tokio::test]
async fn a_custom_agent_runs_only_what_its_tools_name() {
    use crate::agent::custom::tools::ToolGrant;
    let tools =
        |list: &[&str]| ToolGrant::parse(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let reader = PolicyGate::handle(
        SubAgentPolicy::Tools(tools(&["Read", "Grep", "Glob"])),
        None,
        "/home/u".into(),
    );
    assert!(refused(&native(&reader, "/w", "ls").await));
    assert!(refused(
        &agent(
            &reader,
            "write",
            synapse_permissions::Effect::Writes(vec![])
        )
        .await
    ));
    assert_eq!(
        agent(&reader, "read", synapse_permissions::Effect::ReadOnly).await,
        GateVerdict::Run
    );
    // `bash '…'` starts a line: the Bash patterns judge that line, not the word `bash`.
    let differ = PolicyGate::handle(
        SubAgentPolicy::Tools(tools(&["Bash(git diff:*)"])),
        None,
        "/home/u".into(),
    );
    let info = GateInfo {
        cwd: Path::new("/w"),
        is_session_pid: &|_| false,
        sandboxed: false,
        shell_pid: None,
        call_seq: 1,
        hook: Default::default(),
    };
    let args = vec!["rm -rf /w/x".to_string()];
    let bash = GateAction::Agent {
        name: "bash",
        args: &args,
        command: "bash 'rm -rf /w/x'",
        effect: synapse_permissions::Effect::Other,
    };
    assert!(refused(&differ.0.check(bash, info).await));
    assert_eq!(
        native(&differ, "/w", "git diff HEAD").await,
        GateVerdict::Run
    );
    assert!(refused(&native(&differ, "/w", "git diff; rm x").await));
}
