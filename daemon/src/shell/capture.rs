//! Bounded capture of a command's output and its rendering for the model.
//!
//! The shell reader appends every byte a command prints to an [`OutputCapture`]. It keeps the
//! first and the last [`CAPTURE_KEEP_BYTES`] bytes and counts the rest, so a command printing
//! gigabytes costs constant memory. [`OutputCapture::render`] turns that into the text the model
//! sees: lossy UTF-8, capped at a number of characters with the head and tail kept and one line in
//! the middle saying how many bytes were left out; binary output is summarised, never dumped.
//! Given a spill folder, output too long to keep whole is also written, in full, to a file
//! there (up to [`SPILL_MAX_BYTES`], and within what is left of the session's
//! [`SpillBudget`]), and the middle line says where to `read` it — or why it stops short.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use super::limits::SpillBudget;

pub use synapse_command::output_policy::OUTPUT_CAP_CHARS;

/// Bytes kept at each end. Four bytes per char is the UTF-8 maximum, so with half the cap at
/// each end this always holds enough to render the head and tail of a capped result.
const CAPTURE_KEEP_BYTES: usize = OUTPUT_CAP_CHARS * 2;

/// Share of control bytes above which output is treated as binary.
const BINARY_CONTROL_RATIO: f64 = 0.10;

/// Most bytes of one command's output saved to its spill file.
pub const SPILL_MAX_BYTES: u64 = 512 * 1024 * 1024;

/// The first and last bytes of a stream plus the number of bytes in between.
#[derive(Debug, Default)]
pub struct OutputCapture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    /// Where a spill file is created once the output outgrows what is kept.
    spill_dir: Option<PathBuf>,
    /// What the session may still spill; `None`: only the per-command cap applies.
    budget: Option<Arc<SpillBudget>>,
    spill: Spill,
}

#[derive(Debug, Default)]
enum Spill {
    #[default]
    None,
    Writing {
        path: PathBuf,
        file: std::fs::File,
        written: u64,
    },
    Done {
        path: PathBuf,
        /// Why the file stops short of the output, if it does.
        cut: Option<Cut>,
    },
    Failed(String),
}

/// Why a spill file holds only the start of the output.
#[derive(Debug)]
enum Cut {
    /// [`SPILL_MAX_BYTES`] for one command.
    CommandCap,
    /// The session's budget ran out; the note says so.
    SessionBudget { written: u64, note: String },
}

impl OutputCapture {
    pub fn new() -> Self {
        Self::default()
    }

    /// Saves output too long to keep whole to a new file in `dir`.
    pub fn set_spill_dir(&mut self, dir: Option<PathBuf>) {
        self.spill_dir = dir;
    }

    /// Counts what is spilled against `budget`, shared by the session's commands.
    pub fn set_spill_budget(&mut self, budget: Option<Arc<SpillBudget>>) {
        self.budget = budget;
    }

    /// Bytes the session's budget grants out of `wanted` (all of them without a budget).
    fn granted(&self, wanted: u64) -> u64 {
        self.budget.as_ref().map_or(wanted, |b| b.take(wanted))
    }

    /// The file holding the whole output, when it was spilled.
    pub fn spill_path(&self) -> Option<&std::path::Path> {
        match &self.spill {
            Spill::Writing { path, .. } | Spill::Done { path, .. } => Some(path),
            _ => None,
        }
    }

    fn spill_bytes(&mut self, bytes: &[u8]) {
        if matches!(self.spill, Spill::None) {
            // Started when the kept ends are about to lose bytes: save everything so far.
            if self.total_bytes + bytes.len() as u64 <= (CAPTURE_KEEP_BYTES * 2) as u64 {
                return;
            }
            let Some(dir) = self.spill_dir.clone() else {
                return;
            };
            let kept = (self.head.len() + self.tail.len()) as u64;
            if let Some(budget) = &self.budget
                && budget.limit().saturating_sub(budget.used()) < kept
            {
                self.spill = Spill::Failed(budget.exhausted_note());
                return;
            }
            self.spill = match synapse_command::output_policy::new_file_in(&dir) {
                Ok((path, mut file)) => {
                    let tail: Vec<u8> = self.tail.iter().copied().collect();
                    let granted = self.granted(kept);
                    match file
                        .write_all(&self.head)
                        .and_then(|()| file.write_all(&tail))
                    {
                        Ok(()) if granted == kept => Spill::Writing {
                            path,
                            file,
                            written: kept,
                        },
                        // Another shell of the session took the rest of the budget meanwhile.
                        Ok(()) => Spill::Done {
                            path,
                            cut: Some(Cut::SessionBudget {
                                written: kept,
                                note: self.budget_note(),
                            }),
                        },
                        Err(e) => Spill::Failed(e.to_string()),
                    }
                }
                Err(e) => Spill::Failed(format!("{}: {e}", dir.display())),
            };
        }
        let Spill::Writing { written, .. } = &self.spill else {
            return;
        };
        let room = SPILL_MAX_BYTES.saturating_sub(*written);
        let take = (bytes.len() as u64).min(room);
        let granted = self.granted(take);
        let budget_note = if granted < take {
            self.budget_note()
        } else {
            String::new()
        };
        let Spill::Writing {
            path,
            file,
            written,
        } = &mut self.spill
        else {
            return;
        };
        let n = usize::try_from(granted).unwrap_or(usize::MAX);
        if let Err(e) = file.write_all(&bytes[..n]) {
            self.spill = Spill::Failed(e.to_string());
            return;
        }
        *written += granted;
        if granted < take {
            self.spill = Spill::Done {
                path: path.clone(),
                cut: Some(Cut::SessionBudget {
                    written: *written,
                    note: budget_note,
                }),
            };
        } else if take < bytes.len() as u64 {
            self.spill = Spill::Done {
                path: path.clone(),
                cut: Some(Cut::CommandCap),
            };
        }
    }

    fn budget_note(&self) -> String {
        self.budget
            .as_ref()
            .map(|b| b.exhausted_note())
            .unwrap_or_default()
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.spill_bytes(bytes);
        self.total_bytes += bytes.len() as u64;
        if self.head.len() < CAPTURE_KEEP_BYTES {
            let take = bytes.len().min(CAPTURE_KEEP_BYTES - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= CAPTURE_KEEP_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - CAPTURE_KEEP_BYTES..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(CAPTURE_KEEP_BYTES);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// The last `max_bytes` bytes printed so far, escaped (for the live tail).
    pub fn recent_text(&self, max_bytes: usize) -> String {
        let from_tail = self.tail.len().min(max_bytes);
        let from_head = (max_bytes - from_tail).min(self.head.len());
        let mut bytes = self.head[self.head.len() - from_head..].to_vec();
        bytes.extend(self.tail.iter().skip(self.tail.len() - from_tail));
        // Cutting may split a character at the start; drop that partial byte sequence.
        let start = bytes
            .iter()
            .position(|b| (*b as i8) >= -0x40)
            .unwrap_or(bytes.len());
        escape_bytes(&bytes[start..])
    }

    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// The text the model sees, at most about `cap_chars` characters plus the elision line.
    pub fn render(&self, cap_chars: usize) -> String {
        let (head, tail) = (&self.head, self.tail.iter().copied().collect::<Vec<u8>>());
        let note = if mostly_binary(head) || mostly_binary(&tail) {
            format!(
                "[binary output ({} bytes), shown with NUL as \\0 and other bytes that are not \
                 UTF-8 as \\xNN; redirect it to a file, or pipe it through `xxd | head` or \
                 `strings`]\n",
                self.total_bytes
            )
        } else {
            String::new()
        };
        let complete = self.total_bytes == (head.len() + tail.len()) as u64;
        if complete {
            let mut all = head.clone();
            all.extend_from_slice(&tail);
            let text = escape_bytes(&all);
            if text.chars().count() <= cap_chars {
                return note + &text;
            }
        }
        let head_text = escape_bytes(head);
        let tail_text = escape_bytes(&tail);
        // When everything was captured the tail may be short; draw both ends from one string.
        let (head_part, tail_part) = if complete {
            let all = format!("{head_text}{tail_text}");
            (
                prefix_chars(&all, cap_chars / 2).to_owned(),
                suffix_chars(&all, cap_chars / 2).to_owned(),
            )
        } else {
            (
                prefix_chars(&head_text, cap_chars / 2).to_owned(),
                suffix_chars(&tail_text, cap_chars / 2).to_owned(),
            )
        };
        let omitted = self
            .total_bytes
            .saturating_sub((head_part.len() + tail_part.len()) as u64);
        let sep = if head_part.ends_with('\n') { "" } else { "\n" };
        let rest = match &self.spill {
            Spill::Writing { path, .. } | Spill::Done { path, cut: None } => format!(
                "the full output is in {p}; see the rest with `read {p} --offset N --limit M` \
                 or `search PATTERN --path {p}`",
                p = path.display()
            ),
            Spill::Done {
                path,
                cut: Some(Cut::CommandCap),
            } => format!(
                "the first {} MiB of it are in {p}; see them with `read {p} --offset N --limit M`",
                SPILL_MAX_BYTES / (1024 * 1024),
                p = path.display()
            ),
            Spill::Done {
                path,
                cut: Some(Cut::SessionBudget { written, note }),
            } => format!(
                "only the first {written} bytes of it are in {p} ({note}); see them with \
                 `read {p} --offset N --limit M`",
                p = path.display()
            ),
            Spill::Failed(e) => format!("the full output could not be saved ({e})"),
            Spill::None => {
                "redirect to a file and use `read --offset` or `search` to see the rest".to_owned()
            }
        };
        format!(
            "{note}{head_part}{sep}[... {omitted} bytes of output omitted; total {} bytes; {rest} \
             ...]\n{tail_part}",
            self.total_bytes
        )
    }
}

/// `bytes` as text that hides nothing: UTF-8 as is, NUL as `\0`, every byte that is not part of
/// valid UTF-8 as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if valid.contains('\0') {
            out.push_str(&valid.replace('\0', "\\0"));
        } else {
            out.push_str(valid);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn suffix_chars(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

/// Many control bytes (NUL included) or bytes that are not UTF-8: worth a note, as the text
/// will be mostly escapes.
fn mostly_binary(bytes: &[u8]) -> bool {
    let control = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x1b | 0x08 | 0x0c))
        .count();
    let invalid_utf8: usize = bytes.utf8_chunks().map(|c| c.invalid().len()).sum();
    !bytes.is_empty() && (control + invalid_utf8) as f64 / bytes.len() as f64 > MOSTLY_BINARY_RATIO
}

/// Share of escaped bytes above which the output gets the binary note.
const MOSTLY_BINARY_RATIO: f64 = 0.30;

/// NUL bytes, or many control bytes other than whitespace and ANSI escapes, mean binary data.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return false;
    }
    if bytes.contains(&0) {
        return true;
    }
    let control = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x1b | 0x08 | 0x0c))
        .count();
    let invalid_utf8 = String::from_utf8_lossy(bytes).matches('\u{FFFD}').count();
    (control + invalid_utf8) as f64 / bytes.len() as f64 > BINARY_CONTROL_RATIO
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(bytes: &[u8], chunk: usize) -> OutputCapture {
        let mut c = OutputCapture::new();
        for piece in bytes.chunks(chunk.max(1)) {
            c.push(piece);
        }
        c
    }

    #[test]
    fn short_output_is_returned_whole() {
        let c = capture(b"hello\nworld\n", 3);
        assert_eq!(c.render(OUTPUT_CAP_CHARS), "hello\nworld\n");
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_middle() {
        let text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        for chunk in [1000, 65536, text.len()] {
            let c = capture(text.as_bytes(), chunk);
            let out = c.render(1000);
            assert!(out.starts_with("line 0\nline 1\n"), "{chunk}");
            assert!(out.ends_with("line 199999\n"), "{chunk}");
            let omitted: u64 = out
                .split("[... ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap();
            assert_eq!(omitted, text.len() as u64 - 1000, "{chunk}");
        }
    }

    #[test]
    fn output_just_over_the_cap_is_elided_exactly() {
        let text = "x".repeat(1001);
        let out = capture(text.as_bytes(), 7).render(1000);
        assert!(
            out.contains("[... 1 bytes of output omitted; total 1001 bytes"),
            "{out}"
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "é".repeat(100_000);
        let out = capture(text.as_bytes(), 4093).render(100);
        assert!(out.starts_with(&"é".repeat(50)));
        assert!(out.ends_with(&"é".repeat(50)));
        assert!(!out.contains('\u{FFFD}'));
    }

    #[test]
    fn binary_output_is_shown_escaped_with_a_note() {
        let mut bytes = b"\x7fELF".to_vec();
        bytes.extend(std::iter::repeat_n(0u8, 5));
        let out = capture(&bytes, 64).render(OUTPUT_CAP_CHARS);
        assert!(out.starts_with("[binary output (9 bytes)"), "{out}");
        assert!(out.ends_with("\u{7f}ELF\\0\\0\\0\\0\\0"), "{out}");
    }

    #[test]
    fn a_nul_or_invalid_utf8_never_hides_the_text_around_it() {
        let mut text = "before\n".repeat(50).into_bytes();
        text.extend_from_slice(b"a\0b \xff\xfe caf\xc3\xa9\n");
        let out = capture(&text, 7).render(OUTPUT_CAP_CHARS);
        assert!(out.starts_with("before\nbefore\n"), "{out}");
        assert!(out.ends_with("a\\0b \\xff\\xfe café\n"), "{out}");
    }
}
