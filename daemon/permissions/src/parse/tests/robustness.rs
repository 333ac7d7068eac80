//! What the parser refuses to guess about, and inputs that must not make it panic or spin.

use pretty_assertions::assert_eq;

use super::super::*;

fn opaque(command: &str) -> Vec<String> {
    parse(command).opaque
}

#[test]
fn what_cannot_be_seen_into_is_opaque() {
    for cmd in [
        "$CMD x",
        "\"$(which rm)\" -rf /",
        "`echo rm` x",
        "eval \"$var\"",
        "source ./env.sh",
        ". ~/.profile",
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(unterminated",
        "echo `unterminated",
        "(unterminated",
        "sudo $CMD",
        "echo >",
        "echo ${x",
        "bash -c \"$SCRIPT\"",
        "echo $(( $(rm x) ))",
    ] {
        assert!(!opaque(cmd).is_empty(), "{cmd} should be opaque");
    }
    for cmd in [
        "ls -la",
        "echo \"$HOME\"",
        "git log --format='%H %s'",
        "a=$(ls) b",
    ] {
        assert_eq!(opaque(cmd), Vec::<String>::new(), "{cmd}");
    }
    let reason = opaque("source ./env.sh").join("");
    assert!(reason.contains("source ./env.sh"), "{reason}");
    assert!(opaque("$CMD x")[0].contains("$CMD"));
}

#[test]
fn deep_nesting_becomes_opaque() {
    let deep = format!("{}rm x{}", "$(".repeat(40), ")".repeat(40));
    let parsed = parse(&deep);
    assert!(
        parsed
            .opaque
            .iter()
            .any(|r| r.contains("nesting deeper than 32")),
        "{:?}",
        parsed.opaque
    );
    let shallow = format!("echo {}rm x{}", "$(echo ".repeat(10), ")".repeat(10));
    assert_eq!(parse(&shallow).opaque, Vec::<String>::new());
    let evals = format!("{}rm x", "eval ".repeat(40));
    assert!(
        parse(&evals)
            .opaque
            .iter()
            .any(|r| r.contains("nesting deeper"))
    );
    let sudos = format!("{}rm x", "sudo ".repeat(20));
    assert!(
        parse(&sudos)
            .opaque
            .iter()
            .any(|r| r.contains("nested wrappers"))
    );
    // Each `eval` level re-reads the substitutions inside it: the budget keeps this linear.
    let doubling = (0..30).fold("rm x".to_string(), |acc, _| format!("eval $({acc})"));
    assert!(!parse(&doubling).opaque.is_empty());
}

#[test]
fn odd_inputs_never_panic() {
    let odd = [
        "",
        " ",
        ";",
        ";;",
        "&&",
        "||",
        "|",
        "|&",
        "&",
        ")",
        "(",
        "((",
        "))",
        "()",
        "{",
        "}",
        "'",
        "\"",
        "`",
        "$",
        "$(",
        "${",
        "$((",
        "\\",
        "<",
        ">",
        "<<",
        "<<<",
        "2>",
        "&>",
        "if",
        "then fi",
        "case",
        "case x in",
        "esac",
        "for",
        "for x in",
        "[[",
        "]]",
        "!",
        "function",
        "a()",
        "echo $'\\",
        "$'\\x",
        "$'\\777'",
        "$'\\u{zz}'",
        "cat <<",
        "cat <<E",
        "x=(",
        "x=(a",
        "@(",
        "echo ${a:-\"b",
        "echo \"$(\"",
        "é $(ü) `ö`",
        "\u{0}\u{1}",
        "a |",
        "| b",
        "a && && b",
        "((((((((",
        "))))))))",
        ")))(((",
        "$($($(",
        "`\\`",
        "\n\n\n",
        "find -exec",
        "sudo",
        "sudo -u",
        "env -S",
        "env -S '",
        "timeout",
        "bash -c",
        "eval",
        "xargs -I",
        "nice -n",
        "[[ x =~ ^(a|b)$ ]]",
        "case a in (b|c",
        "for ((",
        "2>&",
    ];
    for input in odd {
        let _ = parse(input);
    }
    let mut noise = String::new();
    for i in 0..400u32 {
        noise.push(
            [
                '(', ')', '$', '"', '\'', '`', '|', ';', '<', '{', '}', '\\', ' ', 'a', '\n', '#',
            ][(i * 7 % 16) as usize],
        );
        let _ = parse(&noise);
    }
}
