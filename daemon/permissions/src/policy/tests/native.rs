//! Native bash commands across the modes, the quoting tricks meant to slip past a check, and
//! the reasons and "always" patterns the user sees.

use pretty_assertions::assert_eq;

use super::super::super::parse::parse;
use super::super::super::pattern::Pattern;
use super::*;

fn native(command: &str) -> Action<'_> {
    Action::Native { command }
}

#[test]
fn native_decision_table() {
    // columns: auto, ask, read-only, read-only with a sandbox, yolo
    let table: &[(&str, [&str; 5])] = &[
        ("ls -la", ["A", "A", "A", "A", "A!"]),
        ("cat README.md", ["A", "Q", "A", "A", "A!"]),
        ("git log --oneline", ["A", "Q", "A", "A", "A!"]),
        ("rm -rf build", ["A", "Q", "D", "A", "A!"]),
        ("ls; rm -rf x", ["A", "Q", "D", "A", "A!"]),
        ("ls; rm -rf ../x", ["Q!", "Q!", "D", "D", "A!"]),
        ("echo $(rm -rf ~)", ["Q!", "Q!", "D", "D", "A!"]),
        (
            "git status && git push --force",
            ["Q!", "Q!", "D", "D", "A!"],
        ),
        ("git push origin main", ["Q", "Q", "D", "Q", "A!"]),
        ("\"rm\" -rf /", ["Q!", "Q!", "D", "D", "A!"]),
        ("r\\m -rf /", ["Q!", "Q!", "D", "D", "A!"]),
        ("/bin/rm -rf /", ["Q!", "Q!", "D", "D", "A!"]),
        ("command rm -rf ~", ["Q!", "Q!", "D", "D", "A!"]),
        ("sudo -u x rm y", ["Q!", "Q!", "D", "D", "A!"]),
        // A shell fed from stdin cannot be checked against the deny rules, so even yolo asks.
        ("bash -c 'curl x | sh'", ["Q!", "Q!", "D", "D", "Q!"]),
        ("find / -exec rm {} \\;", ["Q", "Q", "D", "A", "A!"]),
        (
            "cat <<EOF > ~/.bashrc\nalias x=y\nEOF",
            ["Q!", "Q!", "D", "D", "A!"],
        ),
        ("echo hi > out.txt", ["A", "Q", "D", "D", "A!"]),
        ("echo hi > /etc/motd", ["Q!", "Q!", "D", "D", "A!"]),
        ("echo hi > /dev/null", ["A", "Q", "A", "A", "A!"]),
        ("npm run build", ["A", "A", "D", "A", "A!"]),
        ("npm install", ["Q!", "Q!", "D", "D", "A!"]),
        ("cargo install ripgrep", ["A!", "A!", "D", "D", "A!"]),
        ("cp a /etc/x", ["A!", "A!", "D", "A", "A!"]),
        ("git status > /etc/x", ["Q!", "Q!", "D", "D", "A!"]),
        // With deny rules set, even yolo asks about a program named at run time.
        ("$CMD x", ["Q", "Q", "D", "A", "Q!"]),
        ("source ./env.sh && make", ["Q", "Q", "D", "A", "Q!"]),
        ("dd if=/dev/zero of=x", ["D", "D", "D", "D", "D"]),
        ("sudo dd of=/dev/sda", ["D", "D", "D", "D", "D"]),
        ("ls && echo $(dd if=a of=b)", ["D", "D", "D", "D", "D"]),
        ("kill 100", ["A", "Q", "D", "A", "A!"]),
        ("kill 4321", ["Q!", "Q!", "D", "D", "A!"]),
        ("echo x > $OUT", ["Q", "Q", "D", "D", "A!"]),
        ("echo x > /tmp/a /data/x/b", ["A", "Q", "D", "D", "A!"]),
        ("cd .. && rm -rf proj", ["Q", "Q", "D", "A", "A!"]),
        ("cd / && rm -rf etc", ["Q!", "Q!", "D", "D", "A!"]),
        ("cd && rm -rf .ssh", ["Q!", "Q!", "D", "D", "A!"]),
        ("cd \"$D\" && rm -rf x", ["Q", "Q", "D", "A", "A!"]),
        ("cd build && rm -rf *", ["A", "Q", "D", "A", "A!"]),
        ("cd /tmp && echo x > f", ["A", "Q", "D", "D", "A!"]),
        ("(cd sub); rm -rf ../x", ["Q!", "Q!", "D", "D", "A!"]),
        ("cd .. && ls", ["A", "Q", "A", "A", "A!"]),
    ];
    for (command, expected) in table {
        assert_eq!(row(&native(command)), *expected, "{command:?}");
    }
}

#[test]
fn sandboxed_auto_lets_the_sandbox_contain_unknown_writes() {
    let rules = rules();
    let decision = decide(&native("echo x > $OUT"), Mode::Auto, &rules, &ctx(true));
    assert_eq!(code(&decision), "A");
    let decision = decide(
        &native("echo x > /etc/motd"),
        Mode::Auto,
        &rules,
        &ctx(true),
    );
    assert_eq!(code(&decision), "Q!");
}

#[test]
fn reasons_name_the_part_and_the_rule() {
    let rules = rules();
    let plain = ctx(false);
    let deny = decide(
        &native("ls && sudo dd of=/dev/sda"),
        Mode::Yolo,
        &rules,
        &plain,
    );
    assert_eq!(
        reason(deny),
        "`dd of=/dev/sda` matches the deny rule `dd:*` from ~/.synapse/settings.json"
    );
    let ask = decide(
        &native("git status && git push --force"),
        Mode::Auto,
        &rules,
        &plain,
    );
    assert_eq!(
        reason(ask),
        "`git push --force` matches the ask rule `git push:*` from ~/.synapse/settings.json"
    );
    let both = decide(
        &native("rm -rf ../a; kill 9999"),
        Mode::Auto,
        &rules,
        &plain,
    );
    assert_eq!(
        reason(both),
        "`rm -rf ../a`: recursive delete outside the working folder: ../a; \
         `kill 9999`: `kill` of a process this session did not start: 9999"
    );
    let opaque = reason(decide(&native("$CMD x"), Mode::Auto, &rules, &plain));
    assert!(
        opaque.starts_with("cannot see what it runs: the program name `$CMD`"),
        "{opaque}"
    );
    let ro = reason(decide(&native("npm test"), Mode::ReadOnly, &rules, &plain));
    assert_eq!(
        ro,
        "read-only mode: `npm test` is not a command known to only read (and no sandbox stops its writes)"
    );
    let ro = reason(decide(
        &native("ls > out"),
        Mode::ReadOnly,
        &rules,
        &ctx(true),
    ));
    assert_eq!(ro, "read-only mode: `ls > out` writes to out");
    let outside = reason(decide(&native("touch ~/notes"), Mode::Auto, &rules, &plain));
    assert_eq!(
        outside,
        "`touch ~/notes` writes outside the writable folders: ~/notes"
    );
    let note = reason(decide(
        &native("cargo install x"),
        Mode::Auto,
        &rules,
        &plain,
    ));
    assert_eq!(
        note,
        "allowed by `cargo install:*` from ~/.synapse/settings.json"
    );
}

fn suggestion_for(command: &str, mode: Mode) -> String {
    match decide(&native(command), mode, &RuleSet::new(), &ctx(false)) {
        Decision::Ask { suggestion, .. } => suggestion,
        other => panic!("{command} in {mode}: expected a question, got {other:?}"),
    }
}

#[test]
fn always_suggestions() {
    let cases = [
        (
            "git push --force origin main",
            Mode::Auto,
            "git push --force:*",
        ),
        ("git -C repo push -f", Mode::Auto, "git -C repo push -f:*"),
        ("git push origin +main", Mode::Auto, "git push origin +main"),
        ("rm -rf ../build", Mode::Auto, "rm -rf ../build"),
        ("rm -rf ../build/*", Mode::Auto, "rm -rf ../build/\\*"),
        ("npm install lodash", Mode::Auto, "npm install:*"),
        ("apt-get install -y jq", Mode::Auto, "apt-get install -y:*"),
        ("sudo apt install jq", Mode::Auto, "sudo apt install jq"),
        ("rm -rf ~/old", Mode::Auto, "rm -rf ~/old"),
        (
            "rm -rf \"$HOME/my dir\"",
            Mode::Auto,
            "rm -rf '$HOME/my dir'",
        ),
        ("kill 4242", Mode::Auto, "kill 4242"),
        (
            "cp notes '/etc/my app.conf'",
            Mode::Auto,
            "cp notes '/etc/my app.conf'",
        ),
        ("cat README.md", Mode::Ask, "cat:*"),
        ("git log -5", Mode::Ask, "git log:*"),
        ("npm run test -- --watch", Mode::Ask, "npm run test:*"),
        ("npm -g ls", Mode::Ask, "npm -g ls:*"),
        ("./build.sh --release", Mode::Ask, "./build.sh:*"),
        (
            "python3 -m pip install requests",
            Mode::Auto,
            "python3 -m pip install:*",
        ),
        (
            "python3 -m pip install requests",
            Mode::Ask,
            "python3 -m pip install:*",
        ),
        (
            "python3 -m http.server 8000",
            Mode::Ask,
            "python3 -m http.server:*",
        ),
        (
            "python3 tools/report.py --all",
            Mode::Ask,
            "python3 tools/report.py:*",
        ),
        ("node build.js", Mode::Ask, "node build.js:*"),
        ("git push origin main", Mode::Ask, "git push:*"),
        ("$CMD x", Mode::Auto, ""),
        ("echo hi > /etc/motd", Mode::Auto, ""),
    ];
    for (command, mode, expected) in cases {
        let suggestion = suggestion_for(command, mode);
        assert_eq!(suggestion, expected, "{command}");
        if suggestion.is_empty() {
            continue;
        }
        // What "always" saves must cover the very command that was asked about.
        let pattern = Pattern::parse(&suggestion).unwrap();
        let parsed = parse(command);
        assert!(
            parsed.all_commands().any(|c| pattern.matches_command(c)),
            "{suggestion} does not match {command}"
        );
    }
}

#[test]
fn a_rule_allowed_wrapper_covers_the_command_it_wraps() {
    let mut rules = RuleSet::new();
    rules.add(
        super::super::super::rules::RuleKind::Bash,
        super::super::super::rules::Verdict::Allow,
        Pattern::parse("sudo apt install:*").unwrap(),
        "s",
    );
    let plain = ctx(false);
    let allowed = decide(&native("sudo apt install jq"), Mode::Auto, &rules, &plain);
    assert_eq!(code(&allowed), "A!");
    // The wrapped command alone is not covered, nor is a command `bash -c` would run.
    let alone = decide(&native("apt install jq"), Mode::Auto, &rules, &plain);
    assert_eq!(code(&alone), "Q!");
    let mut rules = RuleSet::new();
    rules.add(
        super::super::super::rules::RuleKind::Bash,
        super::super::super::rules::Verdict::Allow,
        Pattern::parse("sudo bash:*").unwrap(),
        "s",
    );
    let inner = decide(
        &native("sudo bash -c 'rm -rf /'"),
        Mode::Auto,
        &rules,
        &plain,
    );
    assert_eq!(code(&inner), "Q!");
}

#[test]
fn a_prefix_rule_never_allows_a_chain() {
    let mut rules = RuleSet::new();
    rules.add(
        super::super::super::rules::RuleKind::Bash,
        super::super::super::rules::Verdict::Allow,
        Pattern::parse("git status:*").unwrap(),
        "s",
    );
    for command in [
        "git status; rm -rf ~",
        "git status && curl x | sh",
        "git status $(rm -rf ~)",
        "git status\nsudo reboot",
        "git status | sh -c 'rm -rf ~'",
    ] {
        let decision = decide(&native(command), Mode::Ask, &rules, &ctx(false));
        assert!(
            matches!(decision, Decision::Ask { .. }),
            "{command}: {decision:?}"
        );
    }
}

#[test]
fn decide_never_panics_on_odd_or_bare_commands() {
    let programs = [
        "rm",
        "rm -r",
        "rm -rf --",
        "kill",
        "kill -s",
        "kill --",
        "kill -9",
        "pkill",
        "git",
        "git -C",
        "git -c",
        "git push",
        "git push +",
        "git clean",
        "git clone",
        "tar",
        "tar x",
        "tar -C",
        "cp",
        "cp -t",
        "mv",
        "install -d",
        "ln",
        "ln -t",
        "sed -i",
        "sed -e",
        "sed",
        "dd of=",
        "curl -o",
        "wget -O",
        "sort -o",
        "tee",
        "chmod",
        "chmod -R",
        "chown --reference",
        "rsync",
        "scp x",
        "unzip -d",
        "touch -d",
        "truncate -s",
        "mkdir -m",
        "shred -n",
        "crontab",
        "crontab -u",
        "apt",
        "pacman -",
        "pip",
        "python -m",
        "python -m pip",
        "uv",
        "npm",
        "yarn",
        "systemctl",
        "init",
        "mkfs",
        "sudo",
        "su -c",
        "env -u",
        "xargs",
        "xargs rm -r",
        "bash -c",
        "bash <(",
        "eval",
        "source",
        ".",
        "cd",
        "cd -",
        "pushd",
        "popd",
        "find -exec",
        "fd -x",
        "watch",
        "watch -n",
        "coproc",
        "timeout 5",
        "nice -n",
        "curl | sh",
        "| sh",
        "sh <<<",
    ];
    let odd = [
        "",
        ";",
        "&&",
        "((",
        "))",
        "'",
        "\"",
        "`",
        "$(",
        "${",
        "<<",
        "<<<",
        "2>",
        "&>",
        "case x in",
        "[[",
        "a |",
        "$'\\",
        "cat <<E",
        "x=(",
        "\u{0}",
        "é $(ü)",
        "cd / && cd .. && rm -rf x",
    ];
    let rules = rules();
    for command in programs.iter().chain(odd.iter()) {
        for mode in Mode::ALL {
            for sandboxed in [false, true] {
                let _ = decide(&native(command), mode, &rules, &ctx(sandboxed));
            }
        }
    }
}
