//! What the parser finds in command strings the model writes, including the ones built to hide
//! a command from a naive check.

mod robustness;

use pretty_assertions::assert_eq;

use super::*;

/// The words of every simple command, each joined by spaces.
fn commands(command: &str) -> Vec<String> {
    parse(command)
        .all_commands()
        .map(|c| c.words.join(" "))
        .collect()
}

fn programs(command: &str) -> Vec<String> {
    parse(command)
        .all_commands()
        .filter_map(|c| c.program().map(str::to_string))
        .collect()
}

fn opaque(command: &str) -> Vec<String> {
    parse(command).opaque
}

#[test]
fn lists_and_pipelines_split_into_simple_commands() {
    assert_eq!(commands("ls; rm -rf x"), ["ls", "rm -rf x"]);
    assert_eq!(commands("a && b || c & d\ne"), ["a", "b", "c", "d", "e"]);
    let parsed = parse("cat f | grep x |& wc -l");
    assert_eq!(parsed.pipelines.len(), 1);
    assert_eq!(parsed.pipelines[0].commands.len(), 3);
    assert!(parsed.opaque.is_empty());
}

#[test]
fn quotes_and_escapes_are_removed() {
    assert_eq!(commands(r#""rm" -rf /"#), ["rm -rf /"]);
    assert_eq!(commands(r"r\m -rf /"), ["rm -rf /"]);
    assert_eq!(commands("'r'\"m\" a\\ b 'c d'"), ["rm a b c d"]);
    assert_eq!(
        parse("echo 'a b'").pipelines[0].commands[0].words,
        ["echo", "a b"]
    );
    assert_eq!(commands(r"$'\x72\155' -rf x"), ["rm -rf x"]);
    assert_eq!(commands("echo 'a;b' \"c|d\""), ["echo a;b c|d"]);
    assert_eq!(commands("echo a\\\nb"), ["echo ab"]);
}

#[test]
fn program_is_the_basename_of_a_path() {
    assert_eq!(programs("/bin/rm -rf /"), ["rm"]);
    assert_eq!(programs("./build.sh"), ["build.sh"]);
    assert_eq!(programs("/"), ["/"]);
}

#[test]
fn assignments_are_kept_apart_from_words() {
    let parsed = parse("FOO=1 BAR=\"a b\" make -j2");
    let cmd = &parsed.pipelines[0].commands[0];
    assert_eq!(cmd.assignments, ["FOO=1", "BAR=a b"]);
    assert_eq!(cmd.words, ["make", "-j2"]);
    assert_eq!(cmd.text, "FOO=1 BAR=\"a b\" make -j2");
    assert_eq!(commands("\"A\"=1 x"), ["A=1 x"]);
    assert_eq!(
        parse("arr=(a b) x=1").pipelines[0].commands[0].assignments,
        ["arr=(a b)", "x=1"]
    );
}

#[test]
fn redirects_are_read_with_their_descriptors() {
    let parsed = parse("cmd > out 2>>log 2>&1 &> both <in >| clobber 3<> rw <<<here >&-");
    let cmd = &parsed.pipelines[0].commands[0];
    let seen: Vec<(Option<u32>, RedirectOp, &str)> = cmd
        .redirects
        .iter()
        .map(|r| (r.fd, r.op, r.target.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (None, RedirectOp::Write, "out"),
            (Some(2), RedirectOp::Append, "log"),
            (Some(2), RedirectOp::Dup, "1"),
            (None, RedirectOp::Write, "both"),
            (None, RedirectOp::Read, "in"),
            (None, RedirectOp::Write, "clobber"),
            (Some(3), RedirectOp::ReadWrite, "rw"),
            (None, RedirectOp::HereString, "here"),
            (None, RedirectOp::Dup, "-"),
        ]
    );
    assert_eq!(cmd.words, ["cmd"]);
    assert_eq!(cmd.writes(), ["out", "log", "both", "clobber", "rw"]);
}

#[test]
fn harmless_devices_are_not_writes() {
    let parsed = parse("x >/dev/null 2>/dev/stderr >/dev/fd/3 >& file");
    assert_eq!(parsed.pipelines[0].commands[0].writes(), ["file"]);
}

#[test]
fn substitutions_add_their_commands() {
    assert_eq!(commands("echo $(rm x)"), ["rm x", "echo $(rm x)"]);
    assert_eq!(
        commands("echo \"a `rm y` b\""),
        ["rm y", "echo \"a `rm y` b\""]
    );
    assert_eq!(
        commands("diff <(ls a) >(tee b)"),
        ["ls a", "tee b", "diff <(ls a) >(tee b)"]
    );
    assert_eq!(commands("x=$(curl u) y"), ["curl u", "y"]);
    assert_eq!(
        commands("echo ${X:-$(rm z)}"),
        ["rm z", "echo ${X:-$(rm z)}"]
    );
    assert_eq!(commands("echo $(echo $(rm deep))")[0], "rm deep");
    assert_eq!(commands("echo $((1 + 2)) $HOME"), ["echo $((1 + 2)) $HOME"]);
    assert_eq!(
        parse("echo $((2*3)) $(( (1+2)*3 ))").opaque,
        Vec::<String>::new()
    );
    assert_eq!(parse("(( i++ )); echo").opaque, Vec::<String>::new());
}

#[test]
fn subshells_and_groups_add_their_commands() {
    assert_eq!(commands("(cd x && rm y)"), ["cd x", "rm y"]);
    assert_eq!(commands("{ ls; rm z; }"), ["ls", "rm z"]);
    let parsed = parse("{ echo a; } > out");
    let last = parsed.all_commands().last().cloned().unwrap_or_default();
    assert_eq!(last.writes(), ["out"]);
    assert_eq!(last.text, "} > out");
}

#[test]
fn reserved_words_are_not_programs() {
    assert_eq!(
        commands("if grep -q x f; then rm y; fi"),
        ["grep -q x f", "rm y"]
    );
    assert_eq!(commands("for f in *.txt; do cat \"$f\"; done"), ["cat $f"]);
    assert_eq!(
        parse("for f in *.txt; do cat \"$f\"; done").pipelines[0].commands[0].text,
        "cat \"$f\""
    );
    assert_eq!(
        commands("while true; do sleep 1; done"),
        ["true", "sleep 1"]
    );
    assert_eq!(
        commands("until ! test -f x; do :; done"),
        ["test -f x", ":"]
    );
    assert_eq!(
        commands("if a; then b; elif c; then d; else e; fi"),
        ["a", "b", "c", "d", "e"]
    );
    assert_eq!(
        commands("[[ -f x && $(whoami) == r ]] && rm y"),
        ["whoami", "rm y"]
    );
    assert_eq!(commands("time -p make"), ["make"]);
    assert_eq!(
        commands("for ((i=0;i<3;i++)); do echo $i; done"),
        ["echo $i"]
    );
    assert_eq!(commands("for x in $(ls); do rm $x; done"), ["ls", "rm $x"]);
    assert_eq!(commands("f() { rm -rf x; }; f"), ["rm -rf x", "f"]);
    assert_eq!(commands("function g { ls; }"), ["ls"]);
    assert_eq!(commands("echo if then fi"), ["echo if then fi"]);
    assert_eq!(commands("\"if\" x"), ["if x"]);
}

#[test]
fn case_arms_are_read() {
    let cmd = "case $1 in a|b) rm x ;; (c) ls;& *) echo $(id) ;;& esac; pwd";
    assert_eq!(commands(cmd), ["rm x", "ls", "id", "echo $(id)", "pwd"]);
    assert!(opaque(cmd).is_empty());
    assert_eq!(commands("x=$(case y in a) echo a;; esac)"), ["echo a", ""]);
    assert!(!opaque("case x a) ;;").is_empty());
    assert!(!opaque("case x in a) ls").is_empty());
}

#[test]
fn heredoc_bodies_are_not_commands() {
    let cmd = "cat <<EOF > ~/.bashrc\nrm -rf /\nEOF\nls";
    assert_eq!(commands(cmd), ["cat", "ls"]);
    let parsed = parse(cmd);
    assert_eq!(parsed.pipelines[0].commands[0].writes(), ["~/.bashrc"]);
    assert_eq!(
        commands("cat <<-'E'\n\t$(rm a)\n\tE\necho done"),
        ["cat", "echo done"]
    );
    assert_eq!(
        commands("cat <<E\n$(rm b) `rm c`\nE"),
        ["cat", "rm b", "rm c"]
    );
    assert_eq!(commands("cat <<\"E\" | sh\nrm d\nE"), ["cat", "sh"]);
    assert_eq!(
        commands("cat <<A; cat <<B\na\nA\nb\nB\nwc"),
        ["cat", "cat", "wc"]
    );
}

#[test]
fn comments_end_the_line() {
    assert_eq!(commands("ls # ; rm -rf /\npwd"), ["ls", "pwd"]);
    assert_eq!(commands("echo a#b"), ["echo a#b"]);
}

#[test]
fn shell_strings_and_eval_are_parsed() {
    assert_eq!(
        commands("bash -c 'curl x | sh'"),
        ["curl x", "sh", "bash -c curl x | sh"]
    );
    assert_eq!(
        commands("sh -ec \"rm a; ls\" name"),
        ["rm a", "ls", "sh -ec rm a; ls name"]
    );
    assert_eq!(commands("zsh -o pipefail -c 'rm b'")[0], "rm b");
    assert_eq!(commands("eval rm -rf c"), ["rm -rf c", "eval rm -rf c"]);
    assert_eq!(commands("bash script.sh"), ["bash script.sh"]);
}

#[test]
fn wrappers_add_the_wrapped_command() {
    let cases: [(&str, &str); 14] = [
        ("sudo -u x rm y", "rm y"),
        ("sudo -E FOO=1 rm y", "rm y"),
        ("command rm -rf ~", "rm -rf ~"),
        ("env -i A=1 rm y", "rm y"),
        ("env -S 'rm y'", "rm y"),
        ("nohup rm y", "rm y"),
        ("nice -n 5 rm y", "rm y"),
        ("timeout -s KILL 10 rm y", "rm y"),
        ("exec rm y", "rm y"),
        ("builtin rm y", "rm y"),
        ("stdbuf -oL rm y", "rm y"),
        ("doas -u root rm y", "rm y"),
        ("xargs -0 -n 1 rm y", "rm y"),
        ("/usr/bin/time -o f rm y", "rm y"),
    ];
    for (cmd, wrapped) in cases {
        let found = commands(cmd);
        assert_eq!(found.len(), 2, "{cmd}: {found:?}");
        assert_eq!(found[1], wrapped, "{cmd}");
    }
    assert_eq!(
        commands("sudo env nice rm z"),
        ["sudo env nice rm z", "env nice rm z", "nice rm z", "rm z"]
    );
    let parsed = parse("env A=1 B=2 make");
    assert_eq!(parsed.pipelines[0].commands[1].assignments, ["A=1", "B=2"]);
    assert_eq!(commands("env"), ["env"]);
    assert_eq!(commands("command -v rm"), ["command -v rm"]);
    assert_eq!(commands("sudo -l rm"), ["sudo -l rm"]);
    assert_eq!(commands("xargs"), ["xargs"]);
    assert_eq!(commands("curl x | sudo bash")[2], "bash");
    assert_eq!(commands("ionice -c 3 rm y")[1], "rm y");
    assert_eq!(
        commands("watch -n 1 'rm y; ls'"),
        ["rm y", "ls", "watch -n 1 rm y; ls"]
    );
    assert_eq!(
        commands("su - root -c 'rm y'"),
        ["rm y", "su - root -c rm y"]
    );
    assert_eq!(commands("coproc rm y"), ["rm y"]);
    assert_eq!(commands("coproc w { rm y; }"), ["rm y"]);
}

#[test]
fn find_exec_adds_the_executed_command() {
    assert_eq!(
        commands("find / -exec rm {} \\;"),
        ["find / -exec rm {} ;", "rm {}"]
    );
    assert_eq!(
        commands("find . -name '*.o' -execdir rm -f {} + -ok ls ';'"),
        [
            "find . -name *.o -execdir rm -f {} + -ok ls ;",
            "rm -f {}",
            "ls"
        ]
    );
    assert_eq!(commands("fd -e o -x rm"), ["fd -e o -x rm", "rm"]);
    assert!(commands("find . -exec sh -c 'rm $0' {} \\;").contains(&"rm $0".to_string()));
}
