//! Programs that delete files besides `rm`, each read as the `rm` command it amounts to, so a
//! rule written for deleting (`rm:*`, `rm -rf:*`, `rm notes.db`) holds for every way of deleting
//! the rules engine can see: `unlink F` and `rmdir D` (`rm F`, `rm -d D`), `shred F` (it destroys
//! the content, `-u` also removes the file: `rm F`), `truncate -s N F` (`rm F`; only a size that
//! can only grow, `+N` or `>N`, keeps the data), `find P… -delete` (`rm -rf P…`), `rsync
//! --remove-source-files SRC… DEST` (`rm SRC…`) and `rsync --delete… SRC… DEST` (`rm -rf DEST`).
//!
//! Programs that *start* `rm` (`find -exec rm`, `xargs rm`, `busybox rm`) are not here: the
//! parser already adds the command they start ([`super::parse`]). Deny and ask rules look at
//! these equivalents as well as at the words ([`super::rules::RuleSet::bash_rule`]); an allow
//! rule never does, since `rm:*` allowed says nothing about `shred`.

use super::argv::{ArgOpts, has_long, operands};
use super::parse::SimpleCommand;

/// `rsync` options that take a separate argument word.
const RSYNC_OPTS: ArgOpts = ArgOpts::new(
    "efTBM",
    &[
        "rsh",
        "rsync-path",
        "port",
        "filter",
        "exclude",
        "include",
        "exclude-from",
        "include-from",
        "files-from",
        "temp-dir",
        "partial-dir",
        "compare-dest",
        "copy-dest",
        "link-dest",
        "backup-dir",
        "suffix",
        "chmod",
        "chown",
        "timeout",
        "contimeout",
        "bwlimit",
        "log-file",
        "log-file-format",
        "password-file",
        "max-size",
        "min-size",
        "max-delete",
        "block-size",
        "out-format",
        "modify-window",
        "compress-choice",
        "compress-level",
        "checksum-choice",
        "usermap",
        "groupmap",
        "info",
        "debug",
        "skip-compress",
        "sockopts",
        "remote-option",
        "iconv",
        "address",
        "outbuf",
        "stop-after",
        "stop-at",
    ],
);

/// `rsync` options that delete files on the receiving side.
const RSYNC_DELETE: &[&str] = &[
    "delete",
    "del",
    "delete-before",
    "delete-during",
    "delete-delay",
    "delete-after",
    "delete-excluded",
    "delete-missing-args",
];

/// The `rm` commands `cmd` amounts to (none when it deletes nothing or names no path).
pub fn as_rm(cmd: &SimpleCommand) -> Vec<SimpleCommand> {
    let Some(program) = cmd.program() else {
        return Vec::new();
    };
    let words = &cmd.words;
    let ops = |short, long| operands(words, ArgOpts::new(short, long));
    let mut found: Vec<(&[&str], Vec<&str>)> = Vec::new();
    match program {
        "unlink" => found.push((&[], ops("", &[]))),
        "rmdir" => found.push((&["-d"], ops("", &[]))),
        "shred" => found.push((&[], ops("ns", &["iterations", "size", "random-source"]))),
        "truncate" if !only_grows(words) => {
            found.push((&[], ops("sr", &["size", "reference"])));
        }
        "find" if words.iter().skip(1).any(|w| w == "-delete") => {
            found.push((&["-rf"], find_start_paths(words)));
        }
        "rsync" => {
            let all = operands(words, RSYNC_OPTS);
            if let [sources @ .., dest] = all.as_slice()
                && !sources.is_empty()
            {
                if has_long(words, "remove-source-files") {
                    found.push((&[], sources.to_vec()));
                }
                if RSYNC_DELETE.iter().any(|o| has_long(words, o)) {
                    found.push((&["-rf"], vec![*dest]));
                }
            }
        }
        _ => {}
    }
    found
        .into_iter()
        .filter(|(_, paths)| !paths.is_empty())
        .map(|(flags, paths)| {
            let words = std::iter::once("rm")
                .chain(flags.iter().copied())
                .chain(paths)
                .map(str::to_string)
                .collect();
            SimpleCommand::derived(words, Vec::new())
        })
        .collect()
}

/// `truncate -s +N` / `-s >N`: the file can only grow, nothing of it is lost.
fn only_grows(words: &[String]) -> bool {
    let size = super::argv::option_value(words, 's', "size");
    size.is_some_and(|s| s.starts_with('+') || s.starts_with('>'))
        && super::argv::option_value(words, 'r', "reference").is_none()
}

/// The starting points of `find [-H|-L|-P|-D x|-Ox] PATH… EXPRESSION` (`.` when none is named).
fn find_start_paths(words: &[String]) -> Vec<&str> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let paths: Vec<&str> = words[i.min(words.len())..]
        .iter()
        .take_while(|w| !w.starts_with('-') && !matches!(w.as_str(), "(" | "!" | ")" | ","))
        .map(String::as_str)
        .collect();
    if paths.is_empty() { vec!["."] } else { paths }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn rm_of(command: &str) -> Vec<String> {
        let parsed = parse(command);
        let cmd = parsed.all_commands().next().cloned().unwrap_or_default();
        as_rm(&cmd).into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn each_deleting_program_reads_as_its_rm() {
        let table: &[(&str, &[&str])] = &[
            ("unlink victim", &["rm victim"]),
            ("/usr/bin/unlink -- victim", &["rm victim"]),
            ("rmdir -p a/b", &["rm -d a/b"]),
            ("shred -u -n 3 victim", &["rm victim"]),
            ("shred --remove=wipesync victim", &["rm victim"]),
            ("shred victim", &["rm victim"]),
            ("truncate -s 0 victim", &["rm victim"]),
            ("truncate --size=-10 a b", &["rm a b"]),
            ("truncate -r ref victim", &["rm victim"]),
            ("truncate -s +1M victim", &[]),
            ("find . -name '*.o' -delete", &["rm -rf ."]),
            ("find -L src lib -type f -delete", &["rm -rf src lib"]),
            ("find -delete", &["rm -rf ."]),
            ("find . -name x -print", &[]),
            ("rsync -a --remove-source-files a b dst/", &["rm a b"]),
            ("rsync -a --delete src/ /srv/www", &["rm -rf /srv/www"]),
            (
                "rsync -e ssh --delete-after --remove-source-files s host:d",
                &["rm s", "rm -rf host:d"],
            ),
            ("rsync -a src/ dst/", &[]),
            ("unlink", &[]),
            ("ls victim", &[]),
        ];
        for (command, want) in table {
            assert_eq!(rm_of(command), *want, "{command}");
        }
    }
}
