//! The Agent Skills client guide's one accepted repair of technically-invalid frontmatter: a
//! plain (unquoted) value containing `: ` (`description: Use when: the user asks`), which YAML
//! reads as a nested mapping and refuses. [`quote_colon_values`] rewrites such values as
//! double-quoted strings, keeping every line where it was so errors and warnings still name the
//! file's own lines; the caller retries the parse once and reports each repaired line.

/// The frontmatter with each unquoted `key: value` whose value contains `: ` double-quoted, and
/// the 0-based YAML lines that were changed (empty: nothing to repair).
pub(super) fn quote_colon_values(yaml: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(yaml.len() + 16);
    let mut changed = Vec::new();
    // Inside a `|`/`>` block scalar (lines indented deeper than its key) text is text.
    let mut block_indent: Option<usize> = None;
    for (i, line) in yaml.split_inclusive('\n').enumerate() {
        let (body, end) = split_eol(line);
        let indent = body.len() - body.trim_start_matches(' ').len();
        if let Some(key_indent) = block_indent {
            if body.trim().is_empty() || indent > key_indent {
                out.push_str(line);
                continue;
            }
            block_indent = None;
        }
        if body
            .split_once(": ")
            .is_some_and(|(_, v)| v.trim().starts_with(['|', '>']))
            || body.trim_end().ends_with(": |")
            || body.trim_end().ends_with(": >")
        {
            block_indent = Some(indent);
        }
        match quoted_line(body) {
            Some(fixed) => {
                out.push_str(&fixed);
                changed.push(i);
            }
            None => out.push_str(body),
        }
        out.push_str(end);
    }
    (out, changed)
}

fn split_eol(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

/// `key: a: b` → `key: "a: b"`; `None` when the line is not such a value.
fn quoted_line(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let (key, value) = rest.split_once(": ")?;
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    {
        return None;
    }
    let value = value.trim();
    // Quoted, flow, block and anchored values are YAML the author meant; leave them alone.
    if value.is_empty()
        || value.starts_with(['"', '\'', '[', '{', '|', '>', '&', '*', '!', '#'])
        || !value.contains(": ")
    {
        return None;
    }
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    Some(format!("{}{key}: \"{escaped}\"", &line[..indent]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_plain_values_with_a_colon_space() {
        let yaml = "name: x\ndescription: Use when: the user asks \"why\"\r\nmetadata:\n  note: a: b\nok: \"a: b\"\nurl: http://x\n";
        let (fixed, changed) = quote_colon_values(yaml);
        assert_eq!(
            fixed,
            "name: x\ndescription: \"Use when: the user asks \\\"why\\\"\"\r\nmetadata:\n  note: \"a: b\"\nok: \"a: b\"\nurl: http://x\n"
        );
        assert_eq!(changed, vec![1, 3]);
    }

    #[test]
    fn nothing_to_repair() {
        let yaml = "a: [b: c]\nb: |\n  x: y: z\n\n  w: v: u\nc: d\n";
        let (fixed, changed) = quote_colon_values(yaml);
        assert!(changed.is_empty(), "{changed:?}");
        assert_eq!(fixed, yaml);
    }
}
