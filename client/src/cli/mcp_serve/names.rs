//! MCP tool names for what `synapse mcp serve` offers: every name matches `^[A-Za-z0-9_-]{1,50}$`
//! (MCP allows more, but Claude Code puts `mcp__<server>__` in front and its model API caps the
//! whole name at 64 characters), and names are unique within one listing. A name that is too
//! long keeps its head and ends in a short hash of the whole, so it stays stable across listings.

use std::collections::HashSet;

/// The longest tool name offered.
pub const TOOL_NAME_MAX_CHARS: usize = 50;

/// `words` joined with `__`, each mapped to MCP's characters (anything else becomes `_`), and
/// capped at [`TOOL_NAME_MAX_CHARS`].
pub fn tool_name(words: &[&str]) -> String {
    let joined = words.iter().map(|w| safe(w)).collect::<Vec<_>>().join("__");
    cap(&joined, &words.join("\u{0}"))
}

/// `name`, or `name_2`, `name_3`, … : the first that `taken` does not hold (then recorded there).
pub fn unique(name: String, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.clone()) {
        return name;
    }
    for n in 2u32.. {
        let suffix = format!("_{n}");
        let head = head_chars(&name, TOOL_NAME_MAX_CHARS - suffix.len());
        let candidate = format!("{head}{suffix}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
    }
    name
}

fn safe(word: &str) -> String {
    let s: String = word
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_string() } else { s }
}

fn cap(name: &str, whole: &str) -> String {
    if name.len() <= TOOL_NAME_MAX_CHARS {
        return name.to_string();
    }
    let hash = format!("_{:08x}", fnv1a(whole.as_bytes()) as u32);
    format!(
        "{}{hash}",
        head_chars(name, TOOL_NAME_MAX_CHARS - hash.len())
    )
}

/// The first `n` bytes of an ASCII name.
fn head_chars(name: &str, n: usize) -> &str {
    name.get(..n.min(name.len())).unwrap_or(name)
}

/// FNV-1a, 64 bits: stable across runs and builds (the std hasher is not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=TOOL_NAME_MAX_CHARS).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn words_are_joined_and_mapped_to_mcp_characters() {
        assert_eq!(tool_name(&["pdf-tools", "extract"]), "pdf-tools__extract");
        assert_eq!(
            tool_name(&["skill", "acme:pdf", "office.unpack"]),
            "skill__acme_pdf__office_unpack"
        );
        assert_eq!(tool_name(&["fs", ""]), "fs___");
        assert!(valid(&tool_name(&["ü", "a b"])));
    }

    #[test]
    fn long_names_are_capped_stably_and_stay_distinct() {
        let long = "x".repeat(80);
        let a = tool_name(&["server", &long, "one"]);
        let b = tool_name(&["server", &long, "two"]);
        assert!(valid(&a) && valid(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(a, tool_name(&["server", &long, "one"]));
    }

    #[test]
    fn clashes_get_a_numbered_suffix() {
        let mut taken = HashSet::new();
        assert_eq!(unique("a__b".into(), &mut taken), "a__b");
        assert_eq!(unique("a__b".into(), &mut taken), "a__b_2");
        assert_eq!(unique("a__b".into(), &mut taken), "a__b_3");
        let long = "y".repeat(TOOL_NAME_MAX_CHARS);
        unique(long.clone(), &mut taken);
        let second = unique(long, &mut taken);
        assert!(valid(&second) && second.ends_with("_2"), "{second}");
    }
}
