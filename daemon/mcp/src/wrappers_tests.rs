use super::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use synapse_command::wrappers::clean_text;

fn entry(server: &str, tool: &str, command: &str, description: &str) -> WrapperEntry {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string", "description": description}},
        "required": ["path"]
    });
    WrapperEntry {
        target: ToolRef {
            server: server.into(),
            tool: tool.into(),
        },
        spec: ToolSpec::new(command, Some(description), schema.as_object().unwrap()),
    }
}

/// A stand-in for the `synapse` client that prints the arguments it was given, one per line.
fn fake_client(dir: &Path) -> PathBuf {
    let p = dir.join("fake synapse");
    fs::write(
        &p,
        "#!/bin/bash\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n",
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn run(path: &Path, args: &[&str]) -> (String, i32) {
    let out = Command::new(path).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn hostile_names_and_descriptions_cannot_inject() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let evil = format!(
        "Line one ' \" `touch {m}` $(touch {m}) ${{HOME}}\nEOF\nSYNAPSE_HELP_END\n'; touch {m}; '\n\u{7}bell",
        m = marker.display()
    );
    let e = entry(
        "s'rv $(x)",
        &format!("t\"ool`touch {}`", marker.display()),
        "mcp:s_rv___x_:t_ool",
        &evil,
    );
    let client = fake_client(dir.path());
    let script = render_script(&e, &client, None).unwrap();
    let path = dir.path().join("mcp:s_rv___x_:t_ool");
    fs::write(&path, &script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();

    let (short, code) = run(&path, &["-h"]);
    assert_eq!(code, 0);
    assert_eq!(short, clean_text(&e.spec.short_help()));
    let (full, code) = run(&path, &["--help"]);
    assert_eq!(code, 0);
    assert_eq!(full, clean_text(&e.spec.full_help()));
    assert!(full.contains("$(touch") && full.contains("SYNAPSE_HELP_END\n"));

    let (args, code) = run(&path, &["a b", "$(touch x)", "-h"]);
    assert_eq!(code, 0);
    let expected = format!(
        "[mcp]\n[call]\n[s'rv $(x)]\n[t\"ool`touch {}`]\n[a b]\n[$(touch x)]\n[-h]\n",
        marker.display()
    );
    assert_eq!(args, expected);
    assert!(!marker.exists(), "help text or names executed code");
}

#[test]
fn sync_writes_only_changes_and_prunes_stale() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let writer = WrapperWriter::new(bin.clone(), dir.path(), PathBuf::from("/usr/bin/synapse"));
    let a = entry("s", "a", "mcp:s:a", "A");
    let b = entry("s", "b", "mcp:s:b", "B");
    let c = entry("k", "c", "mcp:k:c", "C");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("skill:x:y"), "not ours").unwrap();

    let r = writer
        .sync(&[a.clone(), b.clone(), c.clone()], &HashSet::new())
        .unwrap();
    assert_eq!(r.written, vec!["mcp:k:c", "mcp:s:a", "mcp:s:b"]);
    let mode = fs::metadata(bin.join("mcp:s:a"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755);
    let before = fs::metadata(bin.join("mcp:s:a"))
        .unwrap()
        .modified()
        .unwrap();

    let r = writer
        .sync(&[a.clone(), b.clone(), c.clone()], &HashSet::new())
        .unwrap();
    assert_eq!((r.written.len(), r.unchanged, r.removed.len()), (0, 3, 0));
    assert_eq!(
        fs::metadata(bin.join("mcp:s:a"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );

    // Server k is configured but down: its wrapper stays. b disappeared from s: removed.
    let keep: HashSet<String> = ["k".to_string()].into();
    let r = writer.sync(std::slice::from_ref(&a), &keep).unwrap();
    assert_eq!(r.removed, vec!["mcp:s:b"]);
    assert!(bin.join("mcp:k:c").exists() && bin.join("skill:x:y").exists());
    assert_eq!(writer.read_manifest().len(), 2);

    let r = writer.sync(&[], &HashSet::new()).unwrap();
    assert_eq!(r.removed, vec!["mcp:k:c", "mcp:s:a"]);
    assert!(writer.read_manifest().is_empty());
}

#[test]
fn a_tool_name_no_file_can_have_is_skipped_and_the_others_written() {
    let dir = tempfile::tempdir().unwrap();
    let writer = WrapperWriter::new(dir.path().join("bin"), dir.path(), fake_client(dir.path()));
    let long = format!("mcp:s:{}", "x".repeat(5000));
    let good = entry("s", "ok", "mcp:s:ok", "a path");
    let bad = entry("s", &"x".repeat(5000), &long, "a path");
    let r = writer.sync(&[bad, good], &HashSet::new()).unwrap();
    assert_eq!(r.written, vec!["mcp:s:ok".to_string()]);
    assert_eq!(r.skipped.len(), 1);
    assert!(r.skipped[0].contains("5006 characters"), "{:?}", r.skipped);
    assert!(r.skipped[0].contains("file name limit"), "{:?}", r.skipped);
    assert!(dir.path().join("bin/mcp:s:ok").is_file());
}

#[test]
fn resource_commands_are_wrappers_that_name_their_project_and_stay_while_down() {
    use crate::catalog::Catalog;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("my project");
    let writer = WrapperWriter::new(dir.path().join("bin"), dir.path(), fake_client(dir.path()))
        .for_workspace(root.clone());
    let tools = Catalog::build(&[]).with_resources(["docs", "fs"]);
    let names: Vec<&str> = tools
        .resource_commands()
        .iter()
        .map(|r| r.command.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "mcp:docs:read",
            "mcp:docs:resources",
            "mcp:fs:read",
            "mcp:fs:resources"
        ]
    );
    let docs: Vec<_> = tools
        .resource_commands()
        .iter()
        .filter(|r| r.server == "docs")
        .cloned()
        .collect();
    let r = writer
        .sync_all(&[], &docs, &HashSet::new(), &HashSet::new())
        .unwrap();
    assert_eq!(r.written, ["mcp:docs:read", "mcp:docs:resources"]);
    let bin = dir.path().join("bin");
    let (out, code) = run(&bin.join("mcp:docs:read"), &["demo://a b"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "[mcp]\n[read]\n[--workspace]\n[{}]\n[docs]\n[demo://a b]\n",
            root.display()
        )
    );
    let (help, _) = run(&bin.join("mcp:docs:resources"), &["--help"]);
    assert!(
        help.contains("Example:\n  mcp:docs:resources | head"),
        "{help}"
    );
    // Not in the tool map: a resource command never resolves to a tool.
    assert!(writer.read_manifest().is_empty());
    // The server is down: its resource wrappers stay; gone for good: removed.
    let kept: HashSet<String> = crate::catalog::resource_command_names("docs")
        .into_iter()
        .collect();
    let r = writer.sync_all(&[], &[], &HashSet::new(), &kept).unwrap();
    assert!(r.removed.is_empty(), "{r:?}");
    let r = writer
        .sync_all(&[], &[], &HashSet::new(), &HashSet::new())
        .unwrap();
    assert_eq!(r.removed, ["mcp:docs:read", "mcp:docs:resources"]);
}
