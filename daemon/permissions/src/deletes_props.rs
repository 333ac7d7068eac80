//! Properties of deletion rules: under a deny rule written for `rm` (`rm:*`, or `rm <file>` for
//! one file), every other deleting program ([`super::deletes`]) is refused in every mode, however
//! it is wrapped or joined to other commands; an ask rule for `rm` asks for them; and without
//! such a rule they are judged as before (allowed inside the work in auto mode).

use proptest::prelude::*;
use serde_json::json;

use super::test_support::ctx;
use super::*;

fn rules(list: &str, pattern: &str) -> RuleSet {
    let (rules, problems) = RuleSet::from_json(
        &json!({"bash": {list: [pattern], "allow": ["ls:*", "echo:*"]}}),
        "settings.json",
    );
    assert!(problems.is_empty(), "{problems:?}");
    rules
}

/// A deleting command for `path`, as `%p` marks it.
fn deleter() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "unlink %p",
        "/usr/bin/unlink %p",
        "rmdir %p",
        "shred -u %p",
        "shred --remove -n 1 %p",
        "shred %p",
        "truncate -s 0 %p",
        "truncate --size=0 %p",
        "find %p -delete",
        "find %p -name \"*.o\" -delete",
        "find %p -exec rm {} +",
        "find %p -type f -execdir rm -f {} \\;",
        "rsync -a --remove-source-files %p backup/",
        "rsync -a --delete src/ %p",
        "rsync -av --delete-after src/ %p",
    ])
}

fn wrapper() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{}",
        "sudo {}",
        "nice -n 5 {}",
        "env X=1 {}",
        "timeout 5 {}",
        "busybox {}",
        "bash -c '{}'",
        "$({})",
        "( {} )",
    ])
}

fn joined() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{}",
        "ls; {}",
        "{} && echo ok",
        "echo x | {}",
        "ls || {}",
    ])
}

fn path() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.-]{0,10}(/[a-z0-9_.-]{1,8}){0,2}"
}

fn deletion(del: &str, wrap: &str, join: &str, path: &str) -> String {
    let del = del.replace("%p", path);
    // `busybox` runs applets, not paths: give it the bare program name.
    let del = if wrap == "busybox {}" {
        del.trim_start_matches("/usr/bin/").to_string()
    } else {
        del
    };
    join.replace("{}", &wrap.replace("{}", &del))
}

proptest! {
    #[test]
    fn a_deny_rule_for_rm_refuses_every_deletion_in_every_mode(
        del in deleter(),
        wrap in wrapper(),
        join in joined(),
        path in path(),
        sandboxed in any::<bool>(),
    ) {
        let command = deletion(del, wrap, join, &path);
        let mut sets = vec![rules("deny", "rm:*")];
        // What deletes a tree (`find -delete`, `rsync --delete`) is also `rm -rf`.
        if del.contains("-delete") {
            sets.push(rules("deny", "rm -rf:*"));
        }
        for rules in sets {
            for mode in Mode::ALL {
                let d = decide(&Action::Native { command: &command }, mode, &rules, &ctx(sandboxed));
                prop_assert!(matches!(d, Decision::Deny { .. }), "{:?} in {}: {:?}", command, mode, d);
            }
        }
    }

    #[test]
    fn a_deny_rule_for_one_file_refuses_deleting_that_file(
        del in prop::sample::select(vec![
            "unlink %p", "shred -u %p", "truncate -s 0 %p", "rsync --remove-source-files %p b/",
        ]),
        path in path(),
    ) {
        let rules = rules("deny", &format!("rm {path}"));
        let command = del.replace("%p", &path);
        let d = decide(&Action::Native { command: &command }, Mode::Yolo, &rules, &ctx(false));
        let Decision::Deny { reason } = &d else {
            return Err(TestCaseError::fail(format!("{command:?}: {d:?}")));
        };
        prop_assert!(reason.contains(&format!("`rm {path}`")) && reason.contains("deny rule"), "{reason}");
        let other = format!("{path}x");
        let command = del.replace("%p", &other);
        let d = decide(&Action::Native { command: &command }, Mode::Yolo, &rules, &ctx(false));
        prop_assert!(!matches!(d, Decision::Deny { .. }), "{command:?}: {d:?}");
    }

    #[test]
    fn an_ask_rule_for_rm_asks_for_every_deletion(
        del in deleter(),
        path in path(),
    ) {
        let command = del.replace("%p", &path);
        let d = decide(&Action::Native { command: &command }, Mode::Auto, &rules("ask", "rm:*"), &ctx(true));
        prop_assert!(matches!(d, Decision::Ask { .. }), "{command:?}: {d:?}");
    }
}

#[test]
fn without_a_rule_for_rm_a_deletion_inside_the_work_is_judged_as_before() {
    let rules = rules("deny", "curl:*");
    for command in ["unlink victim", "shred -u victim", "truncate -s 0 victim"] {
        let d = decide(&Action::Native { command }, Mode::Auto, &rules, &ctx(true));
        assert!(matches!(d, Decision::Allow { .. }), "{command}: {d:?}");
    }
}

#[test]
fn the_refusal_says_which_rm_the_deletion_amounts_to() {
    let d = decide(
        &Action::Native {
            command: "unlink victim",
        },
        Mode::Yolo,
        &rules("deny", "rm:*"),
        &ctx(false),
    );
    assert_eq!(
        d,
        Decision::Deny {
            reason: "`unlink victim` deletes files like `rm victim`, which matches the deny rule \
                     `rm:*` from settings.json"
                .into()
        }
    );
}
