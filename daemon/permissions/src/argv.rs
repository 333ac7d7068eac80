//! Reading a command's argument words: options vs operands, flags in short clusters (`-rf`),
//! and git's subcommand after its global options. Shared by the risk, write and read-only
//! checks so they agree on what an operand is.

/// Which options take a separate argument word.
#[derive(Clone, Copy, Default)]
pub(crate) struct ArgOpts {
    /// Short option letters with an argument (`-n 5`, also `-n5`).
    pub short: &'static str,
    /// Long option names with an argument (`--size 5`, also `--size=5`).
    pub long: &'static [&'static str],
}

impl ArgOpts {
    pub(crate) const NONE: ArgOpts = ArgOpts {
        short: "",
        long: &[],
    };

    pub(crate) const fn new(short: &'static str, long: &'static [&'static str]) -> Self {
        Self { short, long }
    }
}

/// The operands of `words[1..]`: everything that is not an option or an option's argument.
pub(crate) fn operands(words: &[String], opts: ArgOpts) -> Vec<&str> {
    let mut found = Vec::new();
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        if w == "--" {
            found.extend(iter.map(String::as_str));
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            if !long.contains('=') && opts.long.contains(&long) {
                iter.next();
            }
        } else if w.len() > 1 && w.starts_with('-') {
            let cluster: Vec<char> = w.chars().skip(1).collect();
            if cluster.iter().position(|c| opts.short.contains(*c)) == Some(cluster.len() - 1) {
                iter.next();
            }
        } else {
            found.push(w.as_str());
        }
    }
    found
}

/// The short option clusters before `--` (`-rf` → `rf`).
fn short_clusters(words: &[String]) -> impl Iterator<Item = &str> {
    words
        .iter()
        .skip(1)
        .take_while(|w| *w != "--")
        .filter(|w| w.len() > 1 && w.starts_with('-') && !w.starts_with("--"))
        .map(|w| &w[1..])
}

/// Whether any short cluster holds `flag` (`-Rf` has `R`).
pub(crate) fn has_short(words: &[String], flag: char) -> bool {
    short_clusters(words).any(|c| c.contains(flag))
}

/// Whether `--name` or `--name=…` is among the options.
pub(crate) fn has_long(words: &[String], name: &str) -> bool {
    words
        .iter()
        .skip(1)
        .take_while(|w| *w != "--")
        .filter_map(|w| w.strip_prefix("--"))
        .any(|l| l == name || l.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
}

/// The value of an option given as `-t DIR`, `-tDIR`, `--name DIR` or `--name=DIR`.
pub(crate) fn option_value<'a>(words: &'a [String], short: char, long: &str) -> Option<&'a str> {
    let mut iter = words.iter().skip(1).take_while(|w| *w != "--");
    while let Some(w) = iter.next() {
        if let Some(l) = w.strip_prefix("--") {
            if l == long {
                return iter.next().map(String::as_str);
            }
            if let Some(v) = l.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
        } else if let Some(at) = w.strip_prefix('-').and_then(|c| c.find(short)) {
            let rest = &w[1 + at + short.len_utf8()..];
            return if rest.is_empty() {
                iter.next().map(String::as_str)
            } else {
                Some(rest)
            };
        }
    }
    None
}

/// Git's subcommand and its index, past global options such as `-C dir` and `-c k=v`.
pub(crate) fn git_subcommand(words: &[String]) -> Option<(usize, &str)> {
    const GLOBAL_WITH_ARG: [&str; 6] = [
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
    ];
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if GLOBAL_WITH_ARG.contains(&w.as_str()) {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else {
            return Some((i, w.as_str()));
        }
    }
    None
}

/// The first operand after the program, skipping options (no option takes an argument).
pub(crate) fn subcommand(words: &[String]) -> Option<&str> {
    operands(words, ArgOpts::NONE).first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn operands_skip_options_and_their_arguments() {
        let opts = ArgOpts::new("tS", &["suffix"]);
        assert_eq!(
            operands(&w("cp -a -t dst --suffix x a b -- -c"), opts),
            ["a", "b", "-c"]
        );
        assert_eq!(operands(&w("cp -at dst a"), opts), ["a"]);
        assert!(has_short(&w("rm -fR x"), 'R'));
        assert!(!has_short(&w("rm -- -R"), 'R'));
        assert!(has_long(&w("rm --recursive x"), "recursive"));
        assert!(has_long(
            &w("git push --force-with-lease=main"),
            "force-with-lease"
        ));
        assert!(!has_long(&w("git push --force-with-lease"), "force"));
        assert_eq!(
            option_value(&w("cp -t dir a"), 't', "target-directory"),
            Some("dir")
        );
        assert_eq!(
            option_value(&w("cp --target-directory=d a"), 't', "target-directory"),
            Some("d")
        );
        assert_eq!(
            git_subcommand(&w("git -C repo -c a=b --no-pager push")),
            Some((6, "push"))
        );
        assert_eq!(subcommand(&w("npm -g install x")), Some("install"));
    }
}
