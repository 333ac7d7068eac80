//! Whether a string is a UUID in its canonical text form (`8-4-4-4-12` hex digits), as
//! `claude -p --session-id` requires: the client refuses other ids before it connects, and the
//! daemon checks again before it names a session file after one.

/// True for `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with hex digits of either case.
pub fn is_uuid(text: &str) -> bool {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() == GROUPS.len()
        && parts
            .iter()
            .zip(GROUPS)
            .all(|(part, len)| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uuids_pass_and_lookalikes_do_not() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123E4567-E89B-12D3-A456-426614174000"));
        for bad in [
            "",
            "notauuid",
            "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456-4266141740000",
            "123e4567-e89b-12d3-a456-42661417400g",
            "../../etc/passwd-e89b-12d3-a456-426614174000",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
    }
}
