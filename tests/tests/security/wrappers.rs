//! Wrapper generation with hostile input, end to end through the daemon: a `SYNAPSE_HOME`
//! whose path holds a quote, `$( )` and backticks; a skill script whose docstring tries to
//! break out of the help text; script and skill names that cannot be commands; an MCP server
//! (named with quotes and `$( )`) whose tool names, descriptions and parameters try the same
//! with newlines and heredoc end markers. Running every generated wrapper with `-h`, `--help`
//! and for real — directly and through the agent's Bash tool — prints the text and runs nothing.

use std::fs;
use std::process::Command;

use serde_json::json;
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

use super::support::markers_below;

/// The `SYNAPSE_HOME` folder name; a wrapper that evaluated it would create `pwned-home`.
const HOSTILE_HOME: &str = "it's $(touch pwned-home) `touch pwned-home2`";

fn bin_names(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(env.home().join("bin"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn wrapper(env: &TestEnv, name: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(env.home().join("bin").join(name));
    env.apply_env(&mut cmd);
    run(cmd.args(args))
}

#[test]
fn hostile_names_and_help_texts_never_run() {
    let env = TestEnv::with_home_named(HOSTILE_HOME);
    let root = env.root().to_path_buf();
    let touch = |n: &str| format!("touch '{}/pwned-{n}'", root.display());
    let skill = env.home().join("skills/hostile-docs");
    fs::create_dir_all(skill.join("scripts")).unwrap();
    fs::write(
        skill.join("SKILL.md"),
        format!(
            "---\nname: hostile-docs\ndescription: \"Says hi. $({}) `{}`\"\n---\n# Hostile docs\n",
            touch("d1"),
            touch("d2")
        ),
    )
    .unwrap();
    fs::write(
        skill.join("scripts/say.sh"),
        format!(
            "#!/bin/sh\n# Says hi. $({}) `{}` '; {}; '\n# EOF\n# 'EOF'\n# \"; {}; \"\n# Usage: say <text>\nprintf '<%s>\\n' \"$@\"\n",
            touch("s1"),
            touch("s2"),
            touch("s3"),
            touch("s4")
        ),
    )
    .unwrap();
    for bad in ["it's.sh", "$(touch pwned-s5).sh", "a;b.sh", "-rf.sh"] {
        fs::write(skill.join("scripts").join(bad), "#!/bin/sh\necho ran\n").unwrap();
    }
    let evil_skill = env.home().join("skills/evil$(touch pwned-s6)");
    fs::create_dir_all(evil_skill.join("scripts")).unwrap();
    fs::write(
        evil_skill.join("SKILL.md"),
        "---\ndescription: An evil folder name.\n---\n",
    )
    .unwrap();
    fs::write(evil_skill.join("scripts/go.sh"), "echo ran\n").unwrap();
    fs::create_dir_all(env.home().join("mcp")).unwrap();
    let server = "ev'l $(touch pwned-m0)";
    fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {server: {
            "command": env!("CARGO_BIN_EXE_bad_mcp"),
            "args": ["--hostile", root.display().to_string()],
        }}})
        .to_string(),
    )
    .unwrap();

    env.start_daemon();
    wait_until(DEADLINE, "the skill and MCP wrappers", || {
        let names = bin_names(&env);
        names.iter().any(|n| n == "skill:hostile-docs:say")
            && names.iter().filter(|n| n.starts_with("mcp:")).count() >= 9
    });
    let names = bin_names(&env);
    for name in &names {
        assert!(
            !name.contains(['\'', '$', '`', '"', ' ', '\n', ';', '/']),
            "wrapper file name {name:?} is not one plain word"
        );
        for args in [
            &["-h"][..],
            &["--help"],
            &["--text", "$(touch pwned-a) `x`"],
        ] {
            let out = wrapper(&env, name, args);
            assert!(
                !out.stdout.is_empty() || !out.stderr.is_empty(),
                "{name} {args:?}: {out:?}"
            );
        }
    }
    let skill_names: Vec<&String> = names.iter().filter(|n| n.starts_with("skill:")).collect();
    assert_eq!(
        skill_names,
        ["skill:hostile-docs:say"],
        "bad script and skill names are skipped"
    );

    // The help is the text itself, verbatim.
    let help = wrapper(&env, "skill:hostile-docs:say", &["--help"]);
    assert!(
        help.stdout.contains(&format!("$({})", touch("s1"))),
        "{help:?}"
    );
    let said = wrapper(&env, "skill:hostile-docs:say", &["it's", "$(id)", "EOF"]);
    assert_eq!(said.stdout, "<it's>\n<$(id)>\n<EOF>\n", "{said:?}");
    let echo = names.iter().find(|n| n.ends_with(":echo")).unwrap();
    let tool = wrapper(&env, echo, &["$(touch pwned-e) 'q'"]);
    assert_eq!(tool.stdout.trim_end(), "$(touch pwned-e) 'q'", "{tool:?}");
    let mcp_help = wrapper(
        &env,
        names.iter().find(|n| n.contains("EOF")).unwrap(),
        &["--help"],
    );
    assert!(mcp_help.stdout.contains("SYNAPSE_HELP_END"), "{mcp_help:?}");

    // The same commands through the agent's Bash tool (in-process short-cuts and the shell).
    for name in &names {
        for line in [
            format!("{name} -h"),
            format!("{name} --text \"\\$(touch pwned-x)\" | cat"),
        ] {
            let _ = env.cli(&["exec", &line]);
        }
    }
    let search = env.cli(&["exec", "tools search hi"]);
    assert!(search.success(), "{search:?}");

    let mut markers = markers_below(&root);
    markers.extend(
        [
            "/pwned-home",
            "/pwned-home2",
            "/pwned-a",
            "/pwned-e",
            "/pwned-x",
        ]
        .iter()
        .map(std::path::PathBuf::from)
        .filter(|p| p.exists()),
    );
    assert!(markers.is_empty(), "injected commands ran: {markers:?}");
}
