//! Which paths a simple command writes, creates or deletes, as written in the command: its write
//! redirects plus the file operands of programs known to write (`tee`, `cp`, `mv`, `sed -i`,
//! `touch`, `rm`, `dd of=`, `curl -o`, …). The risk check looks for dotfiles among them; the
//! policy compares them with the writable folders.

use super::argv::{ArgOpts, has_long, has_short, operands, option_value};
use super::parse::SimpleCommand;

/// Every path `cmd` writes to, as written (resolve with [`super::resolve()`]).
pub fn write_targets(cmd: &SimpleCommand) -> Vec<String> {
    let mut targets: Vec<String> = cmd.writes().into_iter().map(str::to_string).collect();
    targets.extend(program_targets(cmd).into_iter().filter(|t| t != "-"));
    targets
}

/// The file operands a writer program writes, creates or deletes.
fn program_targets(cmd: &SimpleCommand) -> Vec<String> {
    let words = &cmd.words;
    let Some(program) = cmd.program() else {
        return Vec::new();
    };
    let ops = |short, long| operands(words, ArgOpts::new(short, long));
    let targets = match program {
        "tee" | "rm" | "rmdir" | "unlink" => ops("", &[]),
        "shred" => ops("ns", &["iterations", "size", "random-source"]),
        "touch" => ops("dtr", &["date", "reference"]),
        "mkdir" => ops("m", &["mode", "context"]),
        "truncate" => ops("sr", &["size", "reference"]),
        "cp" | "mv" | "install" | "ln" => copy_targets(cmd),
        "chmod" | "chown" | "chgrp" => {
            let all = ops("", &[]);
            if has_long(words, "reference") {
                all
            } else {
                all.into_iter().skip(1).collect()
            }
        }
        "sed" => sed_in_place_files(words),
        "dd" => words.iter().filter_map(|w| w.strip_prefix("of=")).collect(),
        "curl" => option_value(words, 'o', "output").into_iter().collect(),
        "wget" => option_value(words, 'O', "output-document")
            .into_iter()
            .collect(),
        "sort" => option_value(words, 'o', "output").into_iter().collect(),
        "tar" => return tar_targets(words),
        "rsync" | "scp" => {
            let all = ops("eiPoF", &["rsh", "rsync-path", "port"]);
            match all.as_slice() {
                [_, .., dest] if !dest.contains(':') => vec![*dest],
                _ => Vec::new(),
            }
        }
        "unzip" => option_value(words, 'd', "exdir").into_iter().collect(),
        "git" => match super::argv::git_subcommand(words) {
            Some((at, "clone")) => {
                let clone_opts = ArgOpts::new(
                    "bocu",
                    &[
                        "branch",
                        "origin",
                        "config",
                        "depth",
                        "reference",
                        "template",
                        "separate-git-dir",
                        "filter",
                        "jobs",
                        "upload-pack",
                    ],
                );
                match operands(&words[at..], clone_opts).as_slice() {
                    [_, dir] => vec![*dir],
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    targets.into_iter().map(str::to_string).collect()
}

/// `cp/mv/install/ln … DEST` or `-t DIR`; `mv` also deletes its sources, `install -d` creates
/// every operand.
fn copy_targets(cmd: &SimpleCommand) -> Vec<&str> {
    let words = &cmd.words;
    let program = cmd.program().unwrap_or_default();
    let long: &[&str] = &["target-directory", "suffix", "mode", "owner", "group"];
    let short = if program == "install" { "tSmog" } else { "tS" };
    let all = operands(words, ArgOpts::new(short, long));
    if program == "install" && has_short(words, 'd') {
        return all;
    }
    if let Some(dir) = option_value(words, 't', "target-directory") {
        let mut targets = vec![dir];
        if program == "mv" {
            targets.extend(all);
        }
        return targets;
    }
    match (program, all.as_slice()) {
        ("mv", ops) if ops.len() >= 2 => all,
        ("ln", [single]) => vec![single.rsplit('/').next().unwrap_or(single)],
        (_, [.., last]) if all.len() >= 2 => vec![*last],
        _ => Vec::new(),
    }
}

/// Where `tar` extracts (`-C DIR`) or the archive it creates (`-cf FILE`); the old style
/// without a dash (`tar xzf a.tgz`) counts as a first option cluster.
fn tar_targets(words: &[String]) -> Vec<String> {
    let Some(first) = words.get(1) else {
        return Vec::new();
    };
    let dashed;
    let words: &[String] = if first.starts_with('-') {
        words
    } else {
        let mut copy = words.to_vec();
        copy[1] = format!("-{first}");
        dashed = copy;
        &dashed
    };
    let cluster_has = |c| has_short(words, c);
    if cluster_has('x') || has_long(words, "extract") || has_long(words, "get") {
        return option_value(words, 'C', "directory")
            .map(str::to_string)
            .into_iter()
            .collect();
    }
    if ['c', 'r', 'u'].into_iter().any(cluster_has) || has_long(words, "create") {
        return option_value(words, 'f', "file")
            .map(str::to_string)
            .into_iter()
            .collect();
    }
    Vec::new()
}

/// The files `sed -i` edits (none without `-i`).
fn sed_in_place_files(words: &[String]) -> Vec<&str> {
    let mut in_place = false;
    let mut script_in_option = false;
    let mut files = Vec::new();
    let mut iter = words.iter().skip(1);
    let mut only_operands = false;
    while let Some(w) = iter.next() {
        if only_operands || w == "-" || !w.starts_with('-') {
            files.push(w.as_str());
        } else if w == "--" {
            only_operands = true;
        } else if let Some(long) = w.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            in_place |= name == "in-place";
            if matches!(name, "expression" | "file") {
                script_in_option = true;
                if !long.contains('=') {
                    iter.next();
                }
            } else if name == "line-length" && !long.contains('=') {
                iter.next();
            }
        } else {
            for (k, c) in w.char_indices().skip(1) {
                match c {
                    'i' => {
                        in_place = true;
                        break;
                    }
                    'e' | 'f' | 'l' => {
                        script_in_option |= c != 'l';
                        if k + 1 == w.len() {
                            iter.next();
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    if !in_place {
        return Vec::new();
    }
    if !script_in_option && !files.is_empty() {
        files.remove(0);
    }
    files
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn targets(command: &str) -> Vec<String> {
        parse(command)
            .all_commands()
            .flat_map(write_targets)
            .collect()
    }

    #[test]
    fn writers_name_their_targets() {
        let cases: [(&str, &[&str]); 30] = [
            ("echo x > a >> b 2>&1", &["a", "b"]),
            ("tee -a f g", &["f", "g"]),
            ("cp -r src dst", &["dst"]),
            ("cp -t dir a b", &["dir"]),
            ("mv a b c", &["a", "b", "c"]),
            ("install -m 644 f /usr/bin/f", &["/usr/bin/f"]),
            ("install -d d1 d2", &["d1", "d2"]),
            ("ln -s target", &["target"]),
            ("ln -sf /a/b ~/.profile", &["~/.profile"]),
            ("sed -i s/a/b/ f1 f2", &["f1", "f2"]),
            ("sed -i.bak -e s/a/b/ f", &["f"]),
            ("sed -Ei s/a/b/ f", &["f"]),
            ("sed s/a/b/ f", &[]),
            ("sed --in-place=.b --expression=x f", &["f"]),
            ("touch -d now f", &["f"]),
            ("truncate -s 0 f", &["f"]),
            ("rm -rf a b", &["a", "b"]),
            ("chmod -R 755 d", &["d"]),
            ("dd if=/dev/zero of=/dev/sda bs=1M", &["/dev/sda"]),
            ("curl -sSLo out.tgz https://x", &["out.tgz"]),
            ("wget -O - https://x", &[]),
            ("sort -o sorted in", &["sorted"]),
            ("tar -xzf a.tgz -C /opt", &["/opt"]),
            ("tar xf a.tar --directory=/", &["/"]),
            ("tar czf ../out.tgz src", &["../out.tgz"]),
            ("tar -tf a.tar", &[]),
            ("rsync -a --delete src/ /srv/www", &["/srv/www"]),
            ("scp host:f ../f", &["../f"]),
            ("unzip a.zip -d /opt/a", &["/opt/a"]),
            ("git clone https://x/r ../r", &["../r"]),
        ];
        for (command, expected) in cases {
            assert_eq!(targets(command), expected.to_vec(), "{command}");
        }
    }
}
