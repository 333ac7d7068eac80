//! Where writes land: every route to the user's settings file the issue names (a variable, the
//! shell's folder, `cd` earlier in the line, a variable set by an earlier line) resolves to the
//! file; what cannot be resolved is told, never guessed.

use std::path::{Path, PathBuf};

use super::super::resolve::ShellState;
use super::super::test_support::ctx;
use super::*;

const SETTINGS: &str = "/home/u/.synapse/settings.json";
const ENV: &[(&str, &str)] = &[("SYNAPSE_HOME", "/home/u/.synapse")];

fn state_after(lines: &[&str]) -> ShellState {
    let mut state = ShellState::default();
    for line in lines {
        state.record(line);
    }
    state
}

fn land_in(line: &str, before: &[&str], cwd: &str) -> Landings {
    let base = ctx(false);
    let cwd = PathBuf::from(cwd);
    let ctx = Context { cwd: &cwd, ..base };
    landings(line, &ctx, &state_after(before), ENV)
}

fn hits(line: &str, before: &[&str], cwd: &str) -> bool {
    land_in(line, before, cwd)
        .writes
        .iter()
        .any(|l| l.lands_on(Path::new(SETTINGS)))
}

#[test]
fn every_route_to_the_settings_file_lands_on_it() {
    let proj = "/home/u/proj";
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &[],
            r#"echo '{"permissions":{}}' > $SYNAPSE_HOME/settings.json"#,
            proj,
        ),
        (
            &[],
            r#"echo '{}' | tee "${SYNAPSE_HOME}/settings.json""#,
            proj,
        ),
        (&[], "cd $SYNAPSE_HOME && echo '{}' > settings.json", proj),
        (&[], "cd $SYNAPSE_HOME; echo '{}' > settings.json", proj),
        (
            &[],
            "pushd ~/.synapse >/dev/null; cp /tmp/x settings.json",
            proj,
        ),
        (&[], "cd ~ && cd .synapse && : > settings.json", proj),
        (&[], "f=$SYNAPSE_HOME/settings.json; > $f", proj),
        (
            &[],
            "export f=~/.synapse/settings.json; echo > \"$f\"",
            proj,
        ),
        (
            &[],
            "d=$SYNAPSE_HOME; f=$d/settings.json; tee $f < /tmp/x",
            proj,
        ),
        (&[], "echo x > ${f:-$HOME/.synapse/settings.json}", proj),
        (&[], "echo x > ~/.synapse/{a,settings}.json", proj),
        (&[], "echo x > ~/.synapse/setting?.json", proj),
        (&[], "rm -rf ~/.synapse/*", proj),
        (&[], "cp -r /tmp/evil/. ~", proj),
        (&[], "mv /tmp/evil.json ~/.synapse/", proj),
        (&[], "ln -s ~/.synapse/settings.json /tmp/l", proj),
        (&[], "tar xf /tmp/evil.tar", "/home/u/.synapse"),
        (&[], "env -C ~/.synapse tee settings.json", proj),
        (&[], "echo x > settings.json", "/home/u/.synapse"),
        (&[], "echo x > ../.synapse/settings.json", proj),
        (&[], "HOME=/home/u/.synapse; echo > ~/settings.json", proj),
        (
            &[],
            "for i in 1 2; do cd ..; done; echo > .synapse/settings.json",
            "/home/u/proj/a",
        ),
        (&["f=$SYNAPSE_HOME/settings.json"], "echo '{}' > $f", proj),
        (
            &["export f=~/.synapse/settings.json"],
            "bash -c 'echo > $f'",
            proj,
        ),
        (
            &["d=~/.synapse", "f=$d/settings.json"],
            "dd if=/tmp/x of=$f",
            proj,
        ),
        (
            &["f=/tmp/a", "f=~/.synapse/settings.json"],
            "echo > $f",
            proj,
        ),
        (
            &["alias save='tee ~/.synapse/settings.json'"],
            "echo x | save",
            proj,
        ),
    ];
    for (before, line, cwd) in cases {
        assert!(
            hits(line, before, cwd),
            "{before:?} then `{line}` from {cwd}"
        );
    }
}

#[test]
fn writes_elsewhere_do_not_land_on_it() {
    let proj = "/home/u/proj";
    let cases: &[(&[&str], &str)] = &[
        (&[], "echo x > settings.json"),
        (&[], "cat ~/.synapse/settings.json > /tmp/copy.json"),
        (&[], "cd .vscode && echo {} > settings.json"),
        (&[], "f=/tmp/x; echo > $f"),
        (&[], "cp ~/.synapse/settings.json backup.json"),
        (&[], "mv a.txt ~/notes/"),
        (&[], "rm -rf ~/.synapse/skills/old"),
        (&["f=/tmp/a"], "echo > $f"),
    ];
    for (before, line) in cases {
        assert!(!hits(line, before, proj), "{before:?} then `{line}`");
    }
}

#[test]
fn what_cannot_be_resolved_is_told() {
    let proj = "/home/u/proj";
    let unresolved: &[(&[&str], &str)] = &[
        (&[], "echo x > $(printf %s ~/.synapse/settings.json)"),
        (&[], "echo x > `cat name`"),
        (&[], "read f <<< x; echo > $f"),
        (&["read f"], "echo > $f"),
        (&[], "echo > $NOT_SET_HERE/x"),
        (&[], "cd \"$(dirname x)\" && echo > settings.json"),
        (&[], "cd - && echo > settings.json"),
        (&[], "find ~/.synapse -name '*.json' -exec cp /tmp/x {} \\;"),
        (&[], "sh -c 'echo > \"$1\"' _ ~/.synapse/settings.json"),
        (&[], "echo x > /proc/self/cwd/settings.json"),
        (&["source ./env.sh"], "echo > $f"),
    ];
    for (before, line) in unresolved {
        let l = land_in(line, before, proj);
        assert!(
            !l.unresolved_targets.is_empty(),
            "{before:?} then `{line}`: {l:?}"
        );
    }
    let unseen = [
        "python3 -c \"open('settings.json', 'w')\"",
        "eval \"$cmd\"",
        "echo ~/.synapse/settings.json | xargs rm",
        "perl -pi -e s/a/b/ x",
        "sed 's/a/b/w out' f",
    ];
    for line in unseen {
        let l = land_in(line, &[], proj);
        assert!(!l.unseen.is_empty(), "`{line}`: {l:?}");
    }
    let plain = land_in("cp a.txt b.txt && echo done > log", &[], proj);
    assert!(!plain.has_unresolved(), "{plain:?}");
}

#[test]
fn names_see_through_quotes_and_variables() {
    let l = land_in("python3 -c \"$code\" \"settings\"'.json'", &[], "/p");
    assert!(l.names("settings.json"));
    let l = land_in(
        "python3 -c \"$code\"",
        &["code='open(\"/home/u/.Synapse/x\", \"w\")'"],
        "/p",
    );
    assert!(l.names(".synapse"), "{l:?}");
    assert!(!land_in("ls -la", &[], "/p").names(".synapse"));
    let home = Path::new("/data/syn");
    let entries = ["settings.json", "mcp/approved_servers.json"];
    for line in [
        "python3 x.py /data/syn",
        "python3 x.py /data/syn/",
        "python3 x.py /data/syn/sett",
        r#"python3 x.py "/data/syn/$n""#,
        "python3 x.py /data/syn/mcp/",
        "python3 x.py /DATA/syn/Settings.json",
    ] {
        assert!(
            land_in(line, &[], "/p").names_folder(home, &entries),
            "{line}"
        );
    }
    for line in [
        "python3 x.py /data/syn/run/x.sock",
        "python3 x.py /data/syn2/settings",
    ] {
        assert!(
            !land_in(line, &[], "/p").names_folder(home, &entries),
            "{line}"
        );
    }
    let home = Path::new("/data/syn");
    let entries = ["settings.json", "mcp/approved_servers.json"];
    for line in [
        "python3 x.py /data/syn",
        "python3 x.py /data/syn/",
        "python3 x.py /data/syn/sett",
        "python3 x.py \"/data/syn/$n\"",
        "python3 x.py /data/syn/mcp/",
        "python3 x.py /DATA/syn/Settings.json",
    ] {
        assert!(
            land_in(line, &[], "/p").names_folder(home, &entries),
            "{line}"
        );
    }
    for line in [
        "python3 x.py /data/syn/run/x.sock",
        "python3 x.py /data/syn2/settings",
    ] {
        assert!(
            !land_in(line, &[], "/p").names_folder(home, &entries),
            "{line}"
        );
    }
}

#[test]
fn the_folders_a_line_may_run_in_are_all_followed() {
    let l = land_in("cd /a && cd b; pushd /c", &[], "/p");
    let dirs: Vec<&str> = l.dirs.iter().filter_map(|d| d.to_str()).collect();
    for want in ["/p", "/a", "/a/b", "/c"] {
        assert!(dirs.contains(&want), "{dirs:?}");
    }
    let l = land_in(
        "CDPATH=/home/u; cd .synapse; echo > settings.json",
        &[],
        "/p",
    );
    assert!(!l.unresolved_targets.is_empty(), "{l:?}");
}
