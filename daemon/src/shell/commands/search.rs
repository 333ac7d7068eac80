//! `search <regex> [--path P] [--glob G] [-i] [--max N] [-C N]`: ripgrep's engine in-process,
//! printing `path:line:text` (context lines as `path-line-text`, groups split by `--`).

use std::path::Path;

use futures::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::shell::capture::OUTPUT_CAP_CHARS;
use crate::shell::commands::walk;
use synapse_command::args::{self, OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};
use synapse_shared::bounded::NotRegular;

/// Matching lines shown when no `--max` is given.
pub const SEARCH_MAX_DEFAULT: usize = 200;
/// Characters of one printed line before it is cut.
const SEARCH_LINE_MAX_CHARS: usize = 500;
/// Output budget; stays under the result cap so matches are never elided in the middle.
const SEARCH_OUTPUT_MAX_CHARS: usize = OUTPUT_CAP_CHARS - 1000;

pub static SPEC: CommandSpec = CommandSpec {
    name: "search",
    usage: "search <regex> [--path P] [--glob G] [-i] [--max N] [-C N]",
    summary: "Search file contents with a regular expression (ripgrep engine), printing path:line:text.",
    help: "\
Arguments:
  <regex>       Rust regex syntax (like ripgrep); quote it. Use \\. for a literal dot.
  --path P      file or folder to search (default: the shell's current directory)
  --glob G      only files matching G; without a / it matches the file name ('*.rs'),
                with one the path below P ('src/**/*.ts')
  -i            ignore case (also --ignore-case)
  --max N       stop after N matching lines (default 200)
  -C N          show N lines of context around each match (also --context)

Files ignored by .gitignore/.ignore, the .git folder and binary files are skipped. Matching
lines print as path:line:text, context lines as path-line-text, and -- separates groups. Exit
status 1 means nothing matched. A plain `grep …` still runs the system grep.

Examples:
  search 'fn main' --glob '*.rs'
  search 'TODO|FIXME' -i --path src -C 2",
};

pub struct SearchCommand;

impl AgentCommand for SearchCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Search
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let parsed = match SPEC.parse(args, &options(), UnknownOpts::Reject) {
                Ok(p) => p,
                Err(usage) => return usage,
            };
            let [regex] = parsed.positionals.as_slice() else {
                return SPEC.usage_error(if parsed.positionals.is_empty() {
                    "missing <regex>".to_owned()
                } else {
                    "expected one <regex>; quote a pattern containing spaces".to_owned()
                });
            };
            let (max, context) = match (
                parsed.number("--max", SEARCH_MAX_DEFAULT),
                parsed.number("-C", 0),
            ) {
                (Ok(m), Ok(c)) => (m, c),
                (Err(e), _) | (_, Err(e)) => return SPEC.usage_error(e),
            };
            let query = Query {
                regex: regex.clone(),
                root: ctx.resolve(parsed.value("--path").unwrap_or(".")),
                glob: parsed.value("--glob").map(str::to_owned),
                ignore_case: parsed.flag("-i"),
                max,
                context,
            };
            let cwd = ctx.cwd().to_path_buf();
            SPEC.off_thread(move || search(&cwd, &query)).await
        })
    }
}

fn options() -> [OptSpec; 5] {
    [
        OptSpec::value("--path"),
        OptSpec::value("--glob"),
        OptSpec::flag("-i").alias("--ignore-case"),
        OptSpec::value("--max"),
        OptSpec::value("-C").alias("--context"),
    ]
}

/// `search`'s words as Claude Code's `Grep` tool input (for hooks).
pub(super) fn claude_input(
    args: &[String],
    abs: &dyn Fn(&str) -> String,
) -> Option<serde_json::Value> {
    let parsed = args::parse(args.to_vec(), &options(), UnknownOpts::Reject).ok()?;
    let [regex] = parsed.positionals.as_slice() else {
        return None;
    };
    let mut input = serde_json::json!({ "pattern": regex, "output_mode": "content" });
    if let Some(path) = parsed.value("--path") {
        input["path"] = abs(path).into();
    }
    if let Some(glob) = parsed.value("--glob") {
        input["glob"] = glob.into();
    }
    if parsed.flag("-i") {
        input["-i"] = true.into();
    }
    if let Some(n) = parsed.value("--max").and_then(|v| v.parse::<u64>().ok()) {
        input["head_limit"] = n.into();
    }
    if let Some(n) = parsed.value("-C").and_then(|v| v.parse::<u64>().ok()) {
        input["-C"] = n.into();
    }
    Some(input)
}

#[derive(Debug, Clone)]
pub struct Query {
    pub regex: String,
    pub root: std::path::PathBuf,
    pub glob: Option<String>,
    pub ignore_case: bool,
    pub max: usize,
    pub context: usize,
}

enum FileFilter {
    All,
    Name(GlobMatcher),
    Path(GlobMatcher),
}

impl FileFilter {
    fn accepts(&self, root: &Path, path: &Path) -> bool {
        match self {
            Self::All => true,
            Self::Name(g) => path.file_name().is_some_and(|n| g.is_match(n)),
            Self::Path(g) => path.strip_prefix(root).is_ok_and(|rel| g.is_match(rel)),
        }
    }
}

pub fn search(cwd: &Path, q: &Query) -> CommandOutput {
    let matcher = match RegexMatcherBuilder::new()
        .case_insensitive(q.ignore_case)
        .build(&q.regex)
    {
        Ok(m) => m,
        Err(e) => {
            return CommandOutput::failure(
                format!(
                    "search: invalid regex {:?}: {e}\nescape special characters with \\",
                    q.regex
                ),
                2,
            );
        }
    };
    let filter = match &q.glob {
        None => FileFilter::All,
        Some(g) => match GlobBuilder::new(g).literal_separator(true).build() {
            Ok(glob) if g.contains('/') => FileFilter::Path(glob.compile_matcher()),
            Ok(glob) => FileFilter::Name(glob.compile_matcher()),
            Err(e) => return CommandOutput::failure(format!("search: invalid --glob: {e}"), 2),
        },
    };
    if !q.root.exists() {
        return CommandOutput::failure(
            format!(
                "search: {}: no such file or directory",
                walk::display(cwd, &q.root)
            ),
            2,
        );
    }
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(q.context)
        .after_context(q.context)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    let mut sink = Collect {
        out: String::new(),
        path: String::new(),
        matches: 0,
        max: q.max,
        full: false,
    };
    // FIFOs, sockets and devices the walk meets: named at the end, never opened.
    let mut special: Vec<String> = Vec::new();
    for entry in walk::walker(&q.root).build().flatten() {
        if sink.matches >= q.max || sink.full {
            break;
        }
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if !file_type.is_file() {
            if let Some(why) = synapse_shared::bounded::NotRegular::of(file_type)
                && !matches!(why, NotRegular::Directory | NotRegular::Other)
                && filter.accepts(&q.root, entry.path())
            {
                special.push(format!(
                    "{} ({})",
                    walk::display(cwd, entry.path()),
                    why.kind()
                ));
            }
            continue;
        }
        if !filter.accepts(&q.root, entry.path()) {
            continue;
        }
        sink.path = walk::display(cwd, entry.path());
        let before = sink.out.len();
        let before_matches = sink.matches;
        // Opened non-blocking and checked again: a FIFO swapped in after the walk is refused.
        let opened = synapse_shared::bounded::open_regular(entry.path());
        if opened
            .map_err(|_| ())
            .and_then(|(file, _)| {
                searcher
                    .search_file(&matcher, &file, &mut sink)
                    .map_err(|_| ())
            })
            .is_err()
        {
            // Unreadable file: skip it, as ripgrep does (it would only warn).
            sink.out.truncate(before);
            sink.matches = before_matches;
            continue;
        }
        if q.context > 0 && sink.out.len() > before && sink.matches > before_matches {
            sink.out.push_str("--\n");
        }
    }
    let skipped = skipped_note(&special);
    if sink.matches == 0 {
        return CommandOutput::failure(
            format!(
                "no matches for {:?} in {}{skipped}",
                q.regex,
                walk::display(cwd, &q.root)
            ),
            1,
        );
    }
    let mut out = sink.out;
    if q.context > 0 && out.ends_with("--\n") {
        out.truncate(out.len() - 3);
    }
    if sink.matches >= q.max || sink.full {
        out.push_str(&format!(
            "[stopped after {} matching lines; narrow the search with --path/--glob or raise --max]\n",
            sink.matches
        ));
    }
    out.push_str(skipped.trim_start_matches('\n'));
    CommandOutput::success(out)
}

/// Special files shown at most in the note that names them.
const SPECIAL_SHOWN_MAX: usize = 5;

/// The note naming the FIFOs, sockets and devices that were not searched ("" without any).
fn skipped_note(special: &[String]) -> String {
    if special.is_empty() {
        return String::new();
    }
    let mut shown = special[..special.len().min(SPECIAL_SHOWN_MAX)].join(", ");
    if special.len() > SPECIAL_SHOWN_MAX {
        shown.push_str(&format!(" and {} more", special.len() - SPECIAL_SHOWN_MAX));
    }
    format!("\n[not searched, not regular files: {shown}]\n")
}

struct Collect {
    out: String,
    path: String,
    matches: usize,
    max: usize,
    full: bool,
}

impl Collect {
    fn line(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        let text = match text.char_indices().nth(SEARCH_LINE_MAX_CHARS) {
            Some((cut, _)) => format!("{}… [line cut]", &text[..cut]),
            None => text.to_owned(),
        };
        let entry = format!("{}{sep}{}{sep}{text}\n", self.path, number.unwrap_or(0));
        if self.out.len() + entry.len() > SEARCH_OUTPUT_MAX_CHARS {
            self.full = true;
        } else {
            self.out.push_str(&entry);
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.line(':', mat.line_number(), mat.bytes());
        self.matches += 1;
        Ok(self.matches < self.max && !self.full)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.line('-', ctx.line_number(), ctx.bytes());
        Ok(!self.full)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.out.push_str("--\n");
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn q(root: &Path, regex: &str) -> Query {
        Query {
            regex: regex.into(),
            root: root.to_path_buf(),
            glob: None,
            ignore_case: false,
            max: SEARCH_MAX_DEFAULT,
            context: 0,
        }
    }

    #[test]
    fn finds_lines_with_options() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(
            root.join("src/a.rs"),
            "fn main() {}\n// TODO one\nx\ny\n// todo two\n",
        )
        .unwrap();
        fs::write(root.join("notes.md"), "TODO in md\n").unwrap();
        fs::write(root.join("bin.dat"), b"TODO\0\x01").unwrap();
        let out = search(root, &q(root, "TODO"));
        assert_eq!(out.text, "notes.md:1:TODO in md\nsrc/a.rs:2:// TODO one\n");
        let out = search(
            root,
            &Query {
                ignore_case: true,
                glob: Some("*.rs".into()),
                ..q(root, "todo")
            },
        );
        assert_eq!(out.text, "src/a.rs:2:// TODO one\nsrc/a.rs:5:// todo two\n");
        let out = search(
            root,
            &Query {
                context: 1,
                glob: Some("src/*.rs".into()),
                ..q(root, "TODO")
            },
        );
        assert_eq!(
            out.text,
            "src/a.rs-1-fn main() {}\nsrc/a.rs:2:// TODO one\nsrc/a.rs-3-x\n"
        );
        let out = search(
            root,
            &Query {
                max: 1,
                ..q(root, "TODO")
            },
        );
        assert!(
            out.text
                .starts_with("notes.md:1:TODO in md\n[stopped after 1 matching lines")
        );
        assert_eq!(search(root, &q(root, "absent")).exit_code, 1);
        assert_eq!(search(root, &q(root, "(")).exit_code, 2);
    }

    #[test]
    fn a_fifo_in_the_tree_is_named_and_skipped_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        fs::write(root.join("a.txt"), "TODO here\n").unwrap();
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
        nix::unistd::mkfifo(&root.join("pipe.txt"), mode).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let found = search(&root, &q(&root, "TODO"));
            let none = search(&root, &q(&root, "absent"));
            let _ = tx.send((found, none));
        });
        let (found, none) = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("search blocked on a FIFO");
        assert_eq!(
            found.text,
            "a.txt:1:TODO here\n[not searched, not regular files: pipe.txt (a FIFO)]\n"
        );
        assert!(
            none.text
                .ends_with("[not searched, not regular files: pipe.txt (a FIFO)]\n"),
            "{}",
            none.text
        );
    }
}
